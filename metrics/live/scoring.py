"""Bridge between stored runs / the live judgment list and the pure engine.

The web app stores rankings as arrays of document primary keys per (run, query) and the
live list as one grade per (query, document); this module turns them into the engine's
array inputs and names every measure by its canonical flavour.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pyarrow as pa

from graded import textpolicy
from metrics import engine
from metrics.engine import _strings
from metrics.engine import io as engine_io
from metrics.engine.errors import place
from metrics.engine.measures import NICKNAMES, Measure, parse_measures
from metrics.models import RANKING_DTYPE

InputError = engine.EngineInputError
MeasureError = engine.MeasureError
ROWS_PER_CHUNK = 2000  # bounds the padded label matrix (rows × depth floats) in memory


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
            if measure.aggregate == "gm":
                raise MeasureError(
                    f"{name!r} is a geometric mean over queries; leaderboards show "
                    "arithmetic means of per-query scores (use map or bpref here, and "
                    "manage.py evaluate for gm_map and gm_bpref)"
                )
            if measure.is_text:
                raise MeasureError(
                    f"{name!r} is text (each ranking's first labels as a string), not a "
                    "score: a leaderboard ranks runs by numbers; see it with manage.py "
                    "evaluate -q -m relstring"
                )
            if measure.family == "Utility" and measure.coeffs[3] != 0 and not measure.n_docs:
                raise MeasureError(
                    f"{name!r}: utility's fourth coefficient weighs the non-relevant "
                    "documents left unretrieved, which needs the collection's size; a "
                    "leaderboard has no -N, so name it: "
                    "Utility(a=1,b=-1,c=0,d=0.01,n_docs=100000)"
                )
            labels.append(MeasureLabel(name, measure.canonical, measure.trec_name))
    return labels


#: trec_eval's counts (their summary is a sum, not a score to rank by): a set's last columns.
COUNTS = ("num_q", "num_ret", "num_rel", "num_rel_ret", "num_nonrel_judged_ret")


@dataclass(frozen=True)
class SetExpansion:
    """Measure names with trec_eval's sets (``official``, ``all_trec``) expanded.

    ``names``: what the collection keeps, without repeats. ``left_out``: each member of a
    set a leaderboard cannot show, with why (``runid`` is a line, not a measure; ``gm_map``
    and ``gm_bpref`` are geometric means; ``relstring`` is text).
    """

    names: list[str]
    left_out: dict[str, str]


def _left_out_reason(member: str) -> str | None:
    """Return why a leaderboard cannot show the set member ``member``; None if it can."""
    if member == "runid":
        return "the run's name, not a measure"
    try:
        measure_labels([member])
    except MeasureError:
        measure = parse_measures([member])[0]
        if measure.aggregate == "gm":
            return "a geometric mean (a leaderboard shows arithmetic means)"
        if measure.is_text:
            return "text, not a score"
        raise
    return None


def expand_measure_sets(names: Iterable[str]) -> SetExpansion:
    """Replace trec_eval's set names by their members, as a leaderboard can show them.

    Within a set its scores come first in trec_eval's order and its counts (``num_q`` …,
    whose summary is a sum) last, so a set named first sorts the leaderboard by ``map``.
    Other names pass unchanged (the engine checks them later); repeats are dropped.
    """
    out: list[str] = []
    left_out: dict[str, str] = {}
    for name in names:
        members = NICKNAMES.get(name.strip())
        if members is None:
            out.append(name)
            continue
        kept = []
        for member in members:
            reason = _left_out_reason(member)
            if reason is None:
                kept.append(member)
            else:
                left_out[member] = reason
        out += [m for m in kept if m not in COUNTS] + [m for m in kept if m in COUNTS]
    return SetExpansion(list(dict.fromkeys(out)), left_out)


def canonical_names(measures: Sequence[str]) -> list[str]:
    """Return the canonical names of the configured measures, in order, without repeats."""
    return list(dict.fromkeys(label.canonical for label in measure_labels(measures)))


def resolved(measures: Sequence[str]) -> list[Measure]:
    """Return the engine measure objects of the configured measures, without repeats."""
    return list(dict.fromkeys(parse_measures(list(measures))))


@dataclass(frozen=True)
class QueryGrades:
    """The live grades of one query: document pks (sorted), grades, abstention probabilities.

    ``abstain`` is aligned with ``document_ids``: the aggregated probabilities for UDCG, NaN
    where none is recorded; ``None`` when not read at all (UDCG then counts 0 everywhere).
    """

    document_ids: np.ndarray
    grades: np.ndarray
    abstain: np.ndarray | None = None


def live_grades_by_query(
    rows: Iterable[tuple[int, int, float] | tuple[int, int, float, float | None]],
) -> dict[int, QueryGrades]:
    """Group ``(query_id, document_id, grade[, abstain_probability])`` rows by query.

    Rows come sorted by query then document; a missing (None) probability becomes NaN.
    """
    rows = list(rows)
    width = len(rows[0]) if rows else 3
    data = np.array(rows, dtype=np.float64).reshape(-1, width)
    return live_grades_from_columns(
        data[:, 0].astype(np.int64),
        data[:, 1].astype(np.int64),
        data[:, 2],
        data[:, 3] if width > 3 else None,
    )


def live_grades_from_columns(
    query_ids: np.ndarray,
    document_ids: np.ndarray,
    grades: np.ndarray,
    abstain: np.ndarray | None,
) -> dict[int, QueryGrades]:
    """Group columns sorted by query then document (NaN: no abstention probability)."""
    if not len(query_ids):
        return {}
    starts = np.flatnonzero(np.r_[True, query_ids[1:] != query_ids[:-1]])
    ends = np.r_[starts[1:], len(query_ids)]
    return {
        int(query_ids[s]): QueryGrades(
            document_ids=np.array(document_ids[s:e], dtype=np.int64),
            grades=np.array(grades[s:e], dtype=np.float64),
            abstain=None if abstain is None else np.array(abstain[s:e], dtype=np.float64),
        )
        for s, e in zip(starts, ends, strict=True)
    }


@dataclass(frozen=True)
class ParsedRun:
    """A run file read by the engine, shaped for storage.

    ``rankings[i]`` holds, in rank order, indices into ``docnos`` for query ``qids[i]``.
    ``docno_values`` is the same distinct docnos as an Arrow binary array (what the fast
    document-id lookup hashes); ``docnos`` decodes them to ``str`` on first use only.
    """

    qids: list[str]
    docno_values: pa.Array
    rankings: list[np.ndarray]
    line_count: int
    format: str

    @cached_property
    def docnos(self) -> list[str]:
        """Return the distinct docnos as strings (UTF-8, undecodable bytes escaped)."""
        return [
            d.decode("utf-8", "surrogateescape")
            for d in self.docno_values.cast(pa.binary()).to_pylist()
        ]


_HASH_MULTIPLIER = np.uint64(0x100000001B3)


def docno_hashes(values: pa.Array) -> np.ndarray:
    """Return a 64-bit hash of every string or binary value, vectorised (no Python loop).

    A polynomial hash of the bytes (mod 2**64) mixed with the length and a splitmix64
    finaliser. Collisions are possible, so callers compare the values themselves before
    trusting a match. Values are hashed in blocks of :data:`_HASH_BLOCK`, so that the
    temporaries (eight bytes per byte of docno) stay a few megabytes: a million docnos
    at once allocated about 100 MB, which a fresh process paid for in page faults.
    """
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    values = values.cast(pa.large_binary())
    if values.null_count:
        values = values.fill_null(b"")
    n = len(values)
    if not n:
        return np.empty(0, dtype=np.uint64)
    buffers = values.buffers()
    offsets = np.frombuffer(buffers[1], dtype=np.int64)[values.offset : values.offset + n + 1]
    lengths = np.diff(offsets)
    data = (
        np.frombuffer(buffers[2], dtype=np.uint8)
        if buffers[2] is not None
        else np.empty(0, dtype=np.uint8)
    )
    longest = int(lengths.max())
    powers = np.cumprod(np.full(max(longest, 1), _HASH_MULTIPLIER, dtype=np.uint64))
    h = np.empty(n, dtype=np.uint64)
    for lo in range(0, n, _HASH_BLOCK):
        hi = min(lo + _HASH_BLOCK, n)
        h[lo:hi] = _polynomial_hashes(offsets[lo : hi + 1], lengths[lo:hi], data, powers)
    h ^= lengths.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    h ^= h >> np.uint64(30)
    h *= np.uint64(0xBF58476D1CE4E5B9)
    h ^= h >> np.uint64(27)
    h *= np.uint64(0x94D049BB133111EB)
    h ^= h >> np.uint64(31)
    return h


_HASH_BLOCK = 1 << 16  # docnos hashed at a time (see docno_hashes)


def _polynomial_hashes(
    offsets: np.ndarray, lengths: np.ndarray, data: np.ndarray, powers: np.ndarray
) -> np.ndarray:
    """Return sum((byte + 1) * M**(i+1)) mod 2**64 of each value between ``offsets``."""
    first, total = int(offsets[0]), int(offsets[-1] - offsets[0])
    block = data[first : first + total]
    starts = offsets[:-1] - first
    n, longest = len(lengths), int(lengths.max())
    if longest and int(lengths.min()) == longest:  # fixed-width ids: one row per value
        terms = block.reshape(n, longest).astype(np.uint64) + np.uint64(1)
        terms *= powers[:longest]
        return terms.sum(axis=1, dtype=np.uint64)
    position = np.arange(total, dtype=np.int64) - np.repeat(starts, lengths)
    terms = (block.astype(np.uint64) + np.uint64(1)) * powers[position]
    cumulative = np.zeros(total + 1, dtype=np.uint64)
    np.cumsum(terms, out=cumulative[1:])
    return cumulative[starts + lengths] - cumulative[starts]


def read_run(content: bytes, *, name: str) -> ParsedRun:
    """Read and rank a run (TREC, JSON or JSON Lines) with the engine's reader and ranking rule.

    Raises ``InputError`` (the engine's ``EngineInputError``) listing every problem by line.
    """
    run = engine.read_run(content, name=name)
    order, starts, counts = run.ranking()
    encoded = _strings.one_chunk(run.docnos).dictionary_encode()
    doc_index = _strings.int_values(encoded.indices).astype(np.int64)
    ranked = doc_index[order]
    return ParsedRun(
        qids=list(run.qids),
        docno_values=encoded.dictionary,
        rankings=[ranked[s : s + c] for s, c in zip(starts.tolist(), counts.tolist(), strict=True)],
        line_count=len(run),
        format="trec" if engine_io.detect_format(content) == "trec" else "json",
    )


def rule_problems(content: bytes, *, name: str) -> list[dict]:
    """Return the submission rules a run file breaks (ranks, one tag) as error items.

    :func:`metrics.engine.io.run_rule_problems`: a rank that is not a whole number, and
    each tag after the first, with its line (and item of a JSON array).
    """
    found = engine_io.run_rule_problems(content, name=name)
    return [] if found is None else error_items(found)


def _line_of(content: bytes, value: bytes) -> int | None:
    """Return the line on which ``value`` first appears in ``content`` (None if not found)."""
    at = content.find(value)
    return None if at < 0 else content.count(b"\n", 0, at) + 1


def _bytes_problem(value: bytes, what: str) -> str | None:
    """Return why an id (as bytes) breaks the text policy, or ``None``."""
    try:
        text = value.decode("utf-8")
    except UnicodeDecodeError as exc:
        return f"{what} {textpolicy.echo(value)} is not valid UTF-8 (byte {exc.start + 1})"
    return textpolicy.id_problem(text, what)


def id_problems(parsed: ParsedRun, content: bytes) -> list[dict]:
    """Return the run's qids and docnos that the text policy refuses, with their lines.

    Ids must be UTF-8, without NUL or surrogates, and at most
    :data:`graded.textpolicy.MAX_ID_LENGTH` characters (the database columns' size). Only
    the first :data:`~graded.textpolicy.MAX_ERRORS` are listed, then a count.
    """
    errors: list[dict] = []
    for qid in parsed.qids:
        problem = _bytes_problem(qid.encode("utf-8", "surrogateescape"), "qid")
        if problem:
            errors.append({"qid": qid, "message": problem})
    values = parsed.docno_values.cast(pa.large_binary())
    offsets = np.frombuffer(
        values.buffers()[1], np.int64, count=len(values) + 1, offset=values.offset * 8
    )
    suspects = np.diff(offsets) > textpolicy.MAX_ID_LENGTH  # bytes >= characters
    try:
        values.cast(pa.large_string())
        bad = np.flatnonzero(suspects)
    except pa.ArrowInvalid:  # some docno is not UTF-8: check each
        bad = np.arange(len(values))
    for index in bad.tolist():
        if len(errors) > textpolicy.MAX_ERRORS:
            break
        value = values[index].as_py()
        problem = _bytes_problem(value, "docno")
        if problem:
            errors.append({"docno": value, "message": problem})
    items = [
        {
            "line": _line_of(
                content, e["qid"].encode("utf-8", "surrogateescape") if "qid" in e else e["docno"]
            ),
            "message": e["message"],
        }
        for e in errors
    ]
    return textpolicy.cap_errors(items)


def error_items(exc: engine.EngineInputError) -> list[dict]:
    """Turn the engine's input errors into API error items (``line``, ``item``, ``message``).

    ``item`` (a record's position in a JSON array) is there only for JSON arrays.
    """
    items: list[dict] = [
        {"line": e.line, "message": e.message}
        if e.item is None
        else {"line": e.line, "item": e.item, "message": e.message}
        for e in exc.errors
    ]
    if exc.omitted:
        items.append({"line": None, "message": f"... and {exc.omitted} more problems"})
    return items


def error_text(error: dict) -> str:
    """Return an error item as one sentence: ``item 2 (line 1): ...``, ``line 3: ...``."""
    where = place(error.get("line"), error.get("item"))
    return f"{where}: {error['message']}" if where else error["message"]


def sorted_search(haystack: np.ndarray, needles: np.ndarray) -> np.ndarray:
    """Return ``np.searchsorted(haystack, needles)``, searching the needles in sorted order.

    Sorted needles walk the haystack monotonically (cache-friendly), which is several times
    faster for a million needles in a large array than searching them in random order.
    """
    if len(needles) < 4096 or len(haystack) < 1 << 16:  # small haystacks stay in cache
        return np.searchsorted(haystack, needles)
    order = np.argsort(needles)  # equal needles find equal places: no need for stability
    # (numpy's default sort of 64-bit keys is several times faster than its stable one)
    at = np.empty(len(needles), dtype=np.intp)
    at[order] = np.searchsorted(haystack, needles[order])
    return at


def _label_matrix(
    rankings: list[np.ndarray],
    query_keys: np.ndarray,
    live_keys: np.ndarray,
    live_grades: np.ndarray,
    stride: int,
    depth: int,
) -> np.ndarray:
    """Return the (rows × depth) labels of ranked documents, NaN where unjudged or padding."""
    lengths = np.fromiter((min(len(r), depth) for r in rankings), dtype=np.int64)
    labels = np.full((len(rankings), depth), np.nan)
    total = int(lengths.sum())
    if not total or not len(live_keys):
        return labels
    filled = np.arange(depth)[None, :] < lengths[:, None]  # row-major, like the concatenation
    docs = np.zeros((len(rankings), depth), dtype=np.int64)
    docs[filled] = np.concatenate([r[:depth] for r in rankings])
    keys = query_keys[:, None] * stride + docs
    low, high = int(live_keys[0]), int(live_keys[-1])
    if high - low < max(4 * total, 1 << 16):
        # Few, close keys (rescoring one query): a dense table beats a binary search.
        table = np.full(high - low + 1, np.nan)
        table[live_keys - low] = live_grades
        inside = filled & (keys >= low) & (keys <= high)
        labels[inside] = table[keys[inside] - low]  # NaN where unjudged
        return labels
    flat = keys[filled]
    at = np.minimum(sorted_search(live_keys, flat), len(live_keys) - 1)
    labels[filled] = np.where(live_keys[at] == flat, live_grades[at], np.nan)
    return labels


@dataclass(frozen=True, slots=True)
class StoredRanking:
    """A run's stored ranking of one query, as :func:`evaluate_rows` reads it.

    ``ranking`` is int64 document-pk bytes (possibly only the top of it); ``retrieved``
    how many documents the run returned in all.
    """

    run_id: int
    query_id: int
    ranking: bytes
    retrieved: int


def evaluate_rows(
    *, rows: Sequence, grades_by_query: dict[int, QueryGrades], measures: Sequence[str]
) -> dict[str, np.ndarray]:
    """Evaluate stored rankings against the live grades; return canonical name → values.

    ``rows`` are objects with ``query_id``, ``ranking`` (int64 document-pk bytes) and
    ``retrieved``. Rows of queries without live grades are evaluated against an empty pool
    (callers leave those out of means). Work is chunked so memory stays bounded.

    When a measure needs them (UDCG) and the live grades carry abstention probabilities,
    they are passed to the engine as a matrix aligned with the labels (NaN, i.e. 0, for
    documents without one) — the engine's ``abstain`` argument, the same array the
    file-level evaluation builds.
    """
    parsed = resolved(measures)
    wants_abstain = any(m.family == "UDCG" for m in parsed) and any(
        g.abstain is not None for g in grades_by_query.values()
    )
    names = list(dict.fromkeys(m.canonical for m in parsed))
    out = {name: np.empty(len(rows)) for name in names}
    if not rows:
        return out
    query_order = sorted(grades_by_query)
    query_pos = {q: i for i, q in enumerate(query_order)}
    stride = 1 + max(
        (int(g.document_ids.max()) for g in grades_by_query.values() if len(g.document_ids)),
        default=0,
    )
    rankings = [np.frombuffer(bytes(r.ranking), dtype=RANKING_DTYPE) for r in rows]
    stride = max(stride, 1 + max((int(r.max()) for r in rankings if len(r)), default=0))
    live_keys = np.concatenate(
        [query_pos[q] * stride + grades_by_query[q].document_ids for q in query_order] or [[]]
    ).astype(np.int64)
    live_grades = np.concatenate([grades_by_query[q].grades for q in query_order] or [[]])
    live_abstain = None
    if wants_abstain:
        live_abstain = np.concatenate(
            [
                grades_by_query[q].abstain
                if grades_by_query[q].abstain is not None
                else np.full(len(grades_by_query[q].grades), np.nan)
                for q in query_order
            ]
            or [[]]
        )
    base = engine.JudgedPool.from_sequences([grades_by_query[q].grades for q in query_order])
    needed = engine.required_depth(parsed)
    for start in range(0, len(rows), ROWS_PER_CHUNK):
        chunk = rows[start : start + ROWS_PER_CHUNK]
        chunk_rankings = rankings[start : start + ROWS_PER_CHUNK]
        longest = max((len(r) for r in chunk_rankings), default=0)
        depth = longest if needed is None else min(longest, needed)
        query_keys = np.fromiter(
            (query_pos.get(r.query_id, -1) for r in chunk), dtype=np.int64, count=len(chunk)
        )
        labels = _label_matrix(
            chunk_rankings, query_keys, live_keys, live_grades, stride, max(depth, 1)
        )
        pools = base.shared(query_keys)  # one ideal ranking per query, not per row
        n_ret = np.fromiter((r.retrieved for r in chunk), dtype=np.int64, count=len(chunk))
        abstain = None
        if live_abstain is not None:
            abstain = _label_matrix(
                chunk_rankings, query_keys, live_keys, live_abstain, stride, max(depth, 1)
            )
        values = engine.evaluate_ranked(labels, n_ret, pools, parsed, abstain=abstain)
        # A stored ranking is never empty but for a query the run left out (trec_eval -c).
        engine.zero_omitted(parsed, values, n_ret == 0)
        for name in names:
            out[name][start : start + len(chunk)] = values[name]
    return out
