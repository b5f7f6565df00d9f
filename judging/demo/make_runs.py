"""Write the demo's run files and reference qrels into ``demo/``.

Run it after changing the demo content, and commit the result::

    .venv/bin/python -m judging.demo.make_runs

Three runs of deliberately different quality, in TREC run format
(``qid Q0 docno rank score tag``, at most 100 lines per query):

``bm25-baseline``
    A real BM25 ranking of all demo documents by the query text. Scores are rounded to
    two decimals, so some tie. It is fooled by documents that share words with the query.
``dense-retriever``
    A simulated embedding retriever: similarity mostly follows the reference grade, with
    noise, and leans on word overlap for documents without one.
``hybrid-reranker``
    A simulated hybrid retriever with a reranker: BM25 and dense candidates, rescored
    mostly by the reference grade with a little noise. The best of the three.

Each run also names a few documents unknown to the collection (``web-NNNNN``), as real
runs over a larger corpus do. Ties are ranked by document id in descending order, the way
``trec_eval`` breaks them. ``qrels-reference.txt`` holds the author's intended grades
(``qid 0 docno grade``): they are not judgments. Nothing here needs Django.
"""

from __future__ import annotations

import math
import random
import re
from collections import Counter
from collections.abc import Callable, Mapping
from pathlib import Path

from judging.demo.content import DemoContent, demo_content

DEMO_DIR = Path(__file__).resolve().parents[2] / "demo"
RUN_NAMES = ("bm25-baseline", "dense-retriever", "hybrid-reranker")
DEPTH = 100
SEED = 7
NOISE_DENSE = 0.10
NOISE_RERANK = 0.20

#: Ids of documents that runs retrieve but the collection does not know.
UNKNOWN_DOCNOS = (
    "web-00042",
    "web-00917",
    "web-03318",
    "web-07465",
    "web-12001",
    "web-23590",
    "web-31337",
    "web-48210",
    "web-56789",
    "web-77104",
)
_STOPWORDS = frozenset(
    {
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "but",
        "by",
        "can",
        "do",
        "for",
        "from",
        "how",
        "i",
        "if",
        "in",
        "is",
        "it",
        "its",
        "my",
        "of",
        "on",
        "or",
        "so",
        "that",
        "the",
        "their",
        "then",
        "there",
        "these",
        "this",
        "to",
        "too",
        "vs",
        "was",
        "what",
        "when",
        "where",
        "which",
        "why",
        "will",
        "with",
        "without",
        "won",
        "t",
        "you",
        "your",
        "after",
    }
)
_TAG = re.compile(r"<[^>]+>")
_WORD = re.compile(r"[a-z0-9]+")

Ranking = list[tuple[str, float]]


def tokenize(text: str) -> list[str]:
    """Return lowercase word tokens of ``text`` without tags or stopwords, crudely stemmed."""
    words = _WORD.findall(_TAG.sub(" ", text).lower())
    out = []
    for word in words:
        if word in _STOPWORDS:
            continue
        if len(word) > 4 and word.endswith("ies"):
            word = word[:-3] + "y"
        elif len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
            word = word[:-1]
        out.append(word)
    return out


def bm25_scores(content: DemoContent, *, k1: float = 0.9, b: float = 0.4) -> dict[str, Ranking]:
    """Return ``{query id: [(docno, BM25 score), ...]}`` over every demo document."""
    docs = {d.external_id: Counter(tokenize(f"{d.title} {d.body}")) for d in content.documents}
    lengths = {docno: sum(tf.values()) for docno, tf in docs.items()}
    average = sum(lengths.values()) / len(lengths)
    df: Counter[str] = Counter()
    for tf in docs.values():
        df.update(tf.keys())
    n = len(docs)
    result: dict[str, Ranking] = {}
    for query in content.queries:
        terms = tokenize(query.text)
        scored = []
        for docno, tf in docs.items():
            score = 0.0
            for term in terms:
                if tf[term]:
                    idf = math.log(1 + (n - df[term] + 0.5) / (df[term] + 0.5))
                    norm = tf[term] + k1 * (1 - b + b * lengths[docno] / average)
                    score += idf * tf[term] * (k1 + 1) / norm
            if score > 0:
                scored.append((docno, score))
        result[query.external_id] = scored
    return result


def _normalised(ranking: Ranking) -> dict[str, float]:
    """Return scores min-max scaled to 0–1 (all 0 for an empty or flat ranking)."""
    if not ranking:
        return {}
    low, high = min(s for _, s in ranking), max(s for _, s in ranking)
    span = high - low
    return {docno: (s - low) / span if span else 0.0 for docno, s in ranking}


def _ordered(scores: Mapping[str, float], decimals: int) -> Ranking:
    """Round scores and sort by score, then document id, descending (as trec_eval does)."""
    rounded = [(docno, round(s, decimals)) for docno, s in scores.items()]
    rounded.sort(key=lambda item: (item[1], item[0]), reverse=True)
    return rounded


def _with_unknown(ranking: Ranking, rng: random.Random, *, share: float, top: int) -> Ranking:
    """Insert one or two unknown documents into some rankings, tying with a neighbour."""
    if rng.random() >= share or len(ranking) < top:
        return ranking
    ranking = list(ranking)
    for docno in rng.sample(UNKNOWN_DOCNOS, rng.choice((1, 2))):
        position = rng.randrange(1, top)
        ranking.insert(position, (docno, ranking[position][1]))
    ranking.sort(key=lambda item: (item[1], item[0]), reverse=True)
    return ranking


def build_runs(content: DemoContent) -> dict[str, dict[str, Ranking]]:
    """Return ``{run name: {query id: ranking}}`` for the three demo runs."""
    reference = content.reference_by_query()
    bm25 = bm25_scores(content)
    runs: dict[str, dict[str, Ranking]] = {name: {} for name in RUN_NAMES}
    for index, query in enumerate(content.queries):
        qid = query.external_id
        grades = reference[qid]
        rng = random.Random(SEED * 1000 + index)
        lexical = _normalised(bm25[qid])

        bm25_top = _ordered(dict(bm25[qid]), 2)[:DEPTH]
        runs["bm25-baseline"][qid] = _with_unknown(bm25_top, rng, share=0.5, top=20)

        dense = {}
        for doc in content.documents:
            grade = grades.get(doc.external_id)
            if grade is None:
                dense[doc.external_id] = 0.30 + 0.25 * lexical.get(doc.external_id, 0.0)
                dense[doc.external_id] += rng.gauss(0, 0.05)
            else:
                dense[doc.external_id] = 0.50 + 0.055 * grade + rng.gauss(0, NOISE_DENSE)
        dense_top = _ordered(dense, 4)[:DEPTH]
        runs["dense-retriever"][qid] = _with_unknown(dense_top, rng, share=0.4, top=25)

        semantic = _normalised(dense_top)
        candidates = {d for d, _ in bm25_top[:50]} | {d for d, _ in dense_top[:50]}
        hybrid = {}
        for docno in sorted(candidates):
            grade = grades.get(docno)
            rerank = 0.25 * lexical.get(docno, 0.0) + rng.gauss(0, NOISE_RERANK)
            if grade is not None:
                rerank += 0.6 * grade / 4
            hybrid[docno] = (
                0.15 * lexical.get(docno, 0.0) + 0.15 * semantic.get(docno, 0.0) + 0.7 * rerank
            )
        hybrid_top = _ordered(hybrid, 3)[:DEPTH]
        runs["hybrid-reranker"][qid] = _with_unknown(hybrid_top, rng, share=0.25, top=40)
    for rankings in runs.values():
        for qid, ranking in rankings.items():
            rankings[qid] = ranking[:DEPTH]
    return runs


def format_run(name: str, rankings: Mapping[str, Ranking]) -> str:
    """Return a run in TREC format: ``qid Q0 docno rank score tag`` lines."""
    lines = [
        f"{qid} Q0 {docno} {rank} {score:g} {name}"
        for qid in sorted(rankings)
        for rank, (docno, score) in enumerate(rankings[qid], start=1)
    ]
    return "\n".join(lines) + "\n"


def format_qrels(content: DemoContent) -> str:
    """Return the reference grades in TREC qrels format: ``qid 0 docno grade`` lines."""
    lines = [
        f"{r.query_external_id} 0 {r.document_external_id} {r.grade}" for r in content.reference
    ]
    return "\n".join(lines) + "\n"


def demo_files(content: DemoContent | None = None) -> dict[Path, str]:
    """Return every generated file under ``demo/`` with its text."""
    content = content or demo_content()
    runs = build_runs(content)
    files = {DEMO_DIR / "runs" / f"{name}.txt": format_run(name, runs[name]) for name in RUN_NAMES}
    files[DEMO_DIR / "qrels-reference.txt"] = format_qrels(content)
    return files


def precision_at(k: int, ranking: Ranking, grades: Mapping[str, int]) -> float:
    """Return the share of the top ``k`` documents with a reference grade of 2 or more."""
    return sum(grades.get(docno, 0) >= 2 for docno, _ in ranking[:k]) / k


def ndcg_at(k: int, ranking: Ranking, grades: Mapping[str, int]) -> float:
    """Return nDCG@k with linear gains against the reference grades (unknown docs gain 0)."""

    def dcg(gains: list[int]) -> float:
        return sum(g / math.log2(i + 2) for i, g in enumerate(gains[:k]))

    ideal = dcg(sorted(grades.values(), reverse=True))
    return dcg([grades.get(docno, 0) for docno, _ in ranking]) / ideal if ideal else 0.0


def mean_measure(
    measure: Callable[[int, Ranking, Mapping[str, int]], float],
    k: int,
    rankings: Mapping[str, Ranking],
    content: DemoContent,
) -> float:
    """Return ``measure`` at ``k`` averaged over the demo queries."""
    reference = content.reference_by_query()
    values = [measure(k, rankings.get(qid, []), grades) for qid, grades in reference.items()]
    return sum(values) / len(values)


def main() -> None:
    """Write the files and print each run's quality against the reference grades."""
    content = demo_content()
    for path, text in demo_files(content).items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        print(f"wrote {path.relative_to(DEMO_DIR.parent)} ({text.count(chr(10))} lines)")
    runs = build_runs(content)
    for name in RUN_NAMES:
        p5 = mean_measure(precision_at, 5, runs[name], content)
        ndcg = mean_measure(ndcg_at, 10, runs[name], content)
        print(f"{name:<16} P@5 {p5:.3f}  nDCG@10 {ndcg:.3f}")


if __name__ == "__main__":
    main()
