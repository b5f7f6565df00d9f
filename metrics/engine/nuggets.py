"""Nugget scores and citation support of RAG answers (pure: plain values in, numbers out).

The TREC RAG track (2024, 2025) scores an answer against its query's *nuggets*: atomic
facts, each ``vital`` or ``okay``.  Every (answer, nugget) pair gets one assignment:
``support``, ``partial_support`` or ``not_support``.  The four recall scores are named as
the track's nuggetizer names them and follow its definitions:

* ``strict_vital`` -- vital nuggets with ``support`` / vital nuggets;
* ``strict_all`` -- nuggets with ``support`` / nuggets;
* ``vital`` -- (vital ``support`` + ½ · vital ``partial_support``) / vital nuggets;
* ``all`` -- (``support`` + ½ · ``partial_support``) / nuggets.

Edge cases.  A query with no vital nuggets gives ``strict_vital`` and ``vital`` of 0.0,
and a query with no nuggets gives 0.0 for all four, as nuggetizer does; the
:class:`NuggetScores` record says so in ``vital_defined`` and ``all_defined`` so a page
can print "no confirmed nuggets" instead of a misleading zero.  A nugget with no
assignment counts as ``not_support`` (the answer was not shown to contain it).

Citation support (Thakur et al., SIGIR 2025, "Support evaluation for the TREC 2024 RAG
track") labels each (answer sentence, cited document) pair ``full``, ``partial`` or
``none``, weighted 1, ½ and 0:

* weighted precision -- the mean weight over every (sentence, citation) pair: how far
  the citations an answer gives support what they are attached to;
* weighted recall -- over every answer sentence, the largest weight among its
  citations (0 for a sentence with no citation): how much of the answer is supported.

An answer with no citations has precision 0.0 (``precision_defined`` false); an answer
with no sentences has recall 0.0 (``recall_defined`` false).  A citation without a
label counts as ``none``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

IMPORTANCES = ("vital", "okay")
ASSIGNMENTS = ("support", "partial_support", "not_support")
SUPPORT_LABELS = ("full", "partial", "none")

_ASSIGNMENT_WEIGHT = {"support": 1.0, "partial_support": 0.5, "not_support": 0.0}
_SUPPORT_WEIGHT = {"full": 1.0, "partial": 0.5, "none": 0.0}


@dataclass(frozen=True)
class NuggetScores:
    """The four nuggetizer recall scores of one answer, with the counts they came from."""

    strict_vital: float
    strict_all: float
    vital: float
    all: float
    vital_nuggets: int
    nuggets: int

    @property
    def vital_defined(self) -> bool:
        """Whether the query has a vital nugget (else both vital scores are 0 by rule)."""
        return self.vital_nuggets > 0

    @property
    def all_defined(self) -> bool:
        """Whether the query has any nugget (else every score is 0 by rule)."""
        return self.nuggets > 0

    def as_dict(self) -> dict[str, float]:
        """Return the four scores under nuggetizer's names (without ``_score``)."""
        return {
            "strict_vital": self.strict_vital,
            "strict_all": self.strict_all,
            "vital": self.vital,
            "all": self.all,
        }


def _ratio(numerator: float, denominator: int) -> float:
    return float(numerator) / denominator if denominator else 0.0


def nugget_arrays(
    importance: Sequence[str], assignment: Sequence[str | None]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Return (is_vital, fully supported, support weight) arrays of one answer's nuggets.

    ``importance[i]`` and ``assignment[i]`` describe nugget ``i``; ``None`` as an
    assignment means not assigned yet and counts as ``not_support``.

    Raises:
        ValueError: the sequences differ in length, or a label is not one of
            :data:`IMPORTANCES` / :data:`ASSIGNMENTS` (named with its position).
    """
    if len(importance) != len(assignment):
        raise ValueError(
            f"{len(importance)} importances but {len(assignment)} assignments were given"
        )
    for i, label in enumerate(importance):
        if label not in IMPORTANCES:
            raise ValueError(f"nugget {i + 1}: importance {label!r} is not vital or okay")
    for i, label in enumerate(assignment):
        if label is not None and label not in _ASSIGNMENT_WEIGHT:
            raise ValueError(
                f"nugget {i + 1}: assignment {label!r} is not one of {', '.join(ASSIGNMENTS)}"
            )
    is_vital = np.array([label == "vital" for label in importance], dtype=bool)
    weight = np.array(
        [_ASSIGNMENT_WEIGHT[label] if label else 0.0 for label in assignment], dtype=float
    )
    return is_vital, weight == 1.0, weight


def nugget_scores(importance: Sequence[str], assignment: Sequence[str | None]) -> NuggetScores:
    """Score one answer from its query's nuggets (``importance``) and their assignments.

    >>> s = nugget_scores(["vital", "vital", "okay"], ["support", "partial_support", "support"])
    >>> (s.strict_vital, s.strict_all, s.vital, s.all)
    (0.5, 0.6666666666666666, 0.75, 0.8333333333333334)
    """
    is_vital, full, weight = nugget_arrays(importance, assignment)
    n_vital = int(is_vital.sum())
    n_all = int(is_vital.size)
    return NuggetScores(
        strict_vital=_ratio(full[is_vital].sum(), n_vital),
        strict_all=_ratio(full.sum(), n_all),
        vital=_ratio(weight[is_vital].sum(), n_vital),
        all=_ratio(weight.sum(), n_all),
        vital_nuggets=n_vital,
        nuggets=n_all,
    )


@dataclass(frozen=True)
class CitationSupport:
    """Weighted citation support precision and recall of one answer."""

    precision: float
    recall: float
    citations: int
    sentences: int

    @property
    def precision_defined(self) -> bool:
        """Whether the answer cites anything (else precision is 0 by rule)."""
        return self.citations > 0

    @property
    def recall_defined(self) -> bool:
        """Whether the answer has a sentence (else recall is 0 by rule)."""
        return self.sentences > 0


def citation_support(
    sentences: Sequence[Sequence[int]],
    labels: Mapping[tuple[int, int], str],
) -> CitationSupport:
    """Return the weighted support precision and recall of one answer.

    ``sentences[i]`` lists the citations of sentence ``i`` (indices into the answer's
    references); ``labels[(i, c)]`` is the support label of sentence ``i`` by reference
    ``c`` (missing: ``none``).  A citation repeated within one sentence counts once.

    Raises:
        ValueError: a label is not one of :data:`SUPPORT_LABELS`.
    """
    for key, label in labels.items():
        if label not in _SUPPORT_WEIGHT:
            raise ValueError(
                f"sentence {key[0] + 1}, citation {key[1]}: support {label!r} is not "
                f"one of {', '.join(SUPPORT_LABELS)}"
            )
    pair_weights: list[float] = []
    best: list[float] = []
    for i, cited in enumerate(sentences):
        weights = [_SUPPORT_WEIGHT[labels.get((i, c), "none")] for c in dict.fromkeys(cited)]
        pair_weights.extend(weights)
        best.append(max(weights, default=0.0))
    return CitationSupport(
        precision=_ratio(sum(pair_weights), len(pair_weights)),
        recall=_ratio(sum(best), len(best)),
        citations=len(pair_weights),
        sentences=len(best),
    )


def run_means(per_query: Iterable[NuggetScores]) -> dict[str, float]:
    """Return the mean of each score over a run's answers (one per query), as nuggetizer.

    Every answer counts, including those of queries without (vital) nuggets, whose
    scores are 0 by rule; an empty run gives 0.0 for each score.
    """
    rows = [s.as_dict() for s in per_query]
    names = ("strict_vital", "strict_all", "vital", "all")
    if not rows:
        return dict.fromkeys(names, 0.0)
    return {name: float(np.mean([row[name] for row in rows])) for name in names}


def bootstrap_interval(
    values: Sequence[float], *, draws: int = 2000, level: float = 0.95, seed: int = 0
) -> tuple[float, float]:
    """Return a percentile bootstrap interval of the mean of per-query ``values``.

    Queries are resampled with replacement ``draws`` times (a fixed ``seed`` makes the
    interval reproducible).  One value gives a zero-width interval; none gives (0, 0).
    """
    x = np.asarray(values, dtype=float)
    if x.size == 0:
        return (0.0, 0.0)
    if x.size == 1:
        return (float(x[0]), float(x[0]))
    rng = np.random.default_rng(seed)
    means = x[rng.integers(0, x.size, size=(draws, x.size))].mean(axis=1)
    tail = (1.0 - level) / 2.0
    low, high = np.quantile(means, [tail, 1.0 - tail])
    return (float(low), float(high))
