"""Bridge between stored runs / the live judgment list and the pure engine.

The web app stores rankings as arrays of document primary keys per (run, query) and the
live list as one grade per (query, document); this module turns them into the engine's
array inputs and names every measure by its canonical flavour.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from .engine.measures import Measure, parse_measures


@dataclass(frozen=True)
class MeasureLabel:
    """A measure as configured, with the canonical name its scores are stored under."""

    requested: str
    canonical: str
    trec_name: str | None


def measure_labels(measures: Sequence[str]) -> list[MeasureLabel]:
    """Resolve configured measure names; raise the engine's ``MeasureError`` on a bad one."""
    labels: list[MeasureLabel] = []
    for name in measures:
        for measure in parse_measures([name]):
            labels.append(MeasureLabel(name, measure.canonical, measure.trec_name))
    return labels


def canonical_names(measures: Sequence[str]) -> list[str]:
    """Return the canonical names of the configured measures, in order, without repeats."""
    return list(dict.fromkeys(label.canonical for label in measure_labels(measures)))


def resolved(measures: Sequence[str]) -> list[Measure]:
    """Return the engine measure objects of the configured measures, without repeats."""
    return list(dict.fromkeys(parse_measures(list(measures))))


@dataclass(frozen=True)
class QueryGrades:
    """The live grades of one query: document pks (sorted) and their grades."""

    document_ids: np.ndarray
    grades: np.ndarray


def live_grades_by_query(rows: Iterable[tuple[int, int, float]]) -> dict[int, QueryGrades]:
    """Group ``(query_id, document_id, grade)`` rows, sorted by query then document."""
    data = np.array(list(rows), dtype=np.float64).reshape(-1, 3)
    if not len(data):
        return {}
    query_ids = data[:, 0].astype(np.int64)
    starts = np.flatnonzero(np.r_[True, query_ids[1:] != query_ids[:-1]])
    ends = np.r_[starts[1:], len(data)]
    return {
        int(query_ids[s]): QueryGrades(
            document_ids=data[s:e, 1].astype(np.int64), grades=data[s:e, 2].copy()
        )
        for s, e in zip(starts, ends, strict=True)
    }
