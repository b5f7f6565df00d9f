"""Judgment lists as text: writers and readers of qrels, csv, jsonl, json and ranklib.

Writers are generators of text lines over rows the caller streams (sorted by qid, then
docno); readers are generators of :class:`JudgmentIn` or :class:`Problem` over
``(line number, text)`` pairs (see :func:`judging.lists.formats.iter_lines`).

Formats (aggregated live list):

``qrels``    ``qid 0 docno grade`` (TREC).
``csv``      header ``query,docid,rating`` (Quepid, OpenSearch LTR); ``query`` is the query
             text, quoted as RFC 4180 says when it holds commas, quotes or line breaks.
``jsonl``    ``{"query": qid, "document": docno, "grade": g, "humans": n, "llms": n}``.
``json``     one array of the jsonl objects, same field names
             (``{"query", "document", "grade", "humans", "llms"}``).
``ranklib``  ``grade qid:N # docno``; RankLib needs numeric query ids, so the file starts
             with one ``# qid:N = <qid>`` comment per query giving the mapping. ``N`` is
             the qid itself when every qid of the collection is a whole number (TREC
             style), else the query's permanent number in Graded (its database id), so the
             same query keeps the same ``N`` in every export.

Grades are written as integers when whole, else with up to six decimals.

CSV output is safe to open in a spreadsheet (OWASP, "CSV Injection"): a text cell — query
text or id, docno, judge name, note — that starts with a tab or a carriage return, or
whose first visible character (after any spaces, line breaks, zero-width or other invisible
characters: Unicode Z* and C*) is ``=``, ``+``, ``-`` or ``@`` in any width (``＝``), gets a
leading ``'`` and is quoted, so no spreadsheet reads it as a formula (and so does text
starting with ``'`` before such a formula, so that it too imports back unchanged). Numbers
Graded writes (grades, seconds, ids of judges) are never changed. The csv reader removes
that one ``'`` again, so an exported file imports back unchanged. qrels, jsonl, json and
ranklib are written byte for byte.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from graded import textpolicy
from graded.textpolicy import MAX_NAME_LENGTH, MAX_NOTE_LENGTH, echo
from judging.lists.formats.common import (
    FormatError,
    Problem,
    csv_cell_text,
    csv_records,
    ident,
    json_value,
    needs_formula_guard,
    text,
)

FORMATS = ("qrels", "csv", "jsonl", "json", "ranklib")
RAW_FORMATS = ("csv", "jsonl", "quepid", "quepid_csv")
#: Formats naming a rater per label (Quepid books): each rater is imported as a judge.
RATER_FORMATS = ("quepid", "quepid_csv")
IMPORT_FORMATS = ("qrels", "csv", "tsv", "jsonl", "json", "ranklib", *RATER_FORMATS)
#: Formats with the optional ``gold`` and ``gold_reason`` columns (or fields).
GOLD_FORMATS = ("csv", "tsv", "jsonl", "json")
CONTENT_TYPES = {
    "qrels": "text/plain",
    "csv": "text/csv",
    "jsonl": "application/jsonl",
    "json": "application/json",
    "ranklib": "text/plain",
    "quepid": "application/json",
    "quepid_csv": "text/csv",
}
EXTENSIONS = {
    "qrels": "qrels",
    "csv": "csv",
    "jsonl": "jsonl",
    "json": "json",
    "ranklib": "ranklib.txt",
    "quepid": "quepid-book.json",
    "quepid_csv": "quepid-book.csv",
}
CSV_HEADER = ("query", "docid", "rating")
RAW_CSV_HEADER = (
    "qid",
    "query",
    "docid",
    "judge_id",
    "judge_name",
    "judge_kind",
    "status",
    "rating",
    "note",
    "seconds",
    "updated_at",
    "guidelines_version",
    "judge_version",
)
GRADE_MIN, GRADE_MAX = 0, 4
_WHOLE = re.compile(r"[+-]?[0-9]{1,9}")
_RANKLIB_MAP = re.compile(r"#\s*qid:(\d+)\s*=\s*(\S+)\s*$")
_RANKLIB_QID = re.compile(r"qid:(\d+)")


class LiveRow(NamedTuple):
    """One pair of the aggregated live list (plain tuples in this order work too)."""

    qid: str
    docno: str
    grade: float
    humans: int = 0
    llms: int = 0
    query_text: str = ""


@dataclass(frozen=True, slots=True)
class LabelRow:
    """One judge's current label of one pair (a raw export row)."""

    qid: str
    docno: str
    judge_id: int
    judge_name: str
    judge_kind: str
    status: str
    grade: int | None
    note: str
    seconds: float | None
    updated_at: str
    query_text: str = ""
    judge_email: str = ""
    evidence: list | None = None  # evidence spans, jsonl only
    guidelines_version: int | None = None  # the guidelines the label was written under
    judge_version: str = ""  # LLM labels: the judge configuration that wrote it


class JudgmentIn(NamedTuple):
    """One judgment read from a file: the query (id or text), document, grade as written.

    A named tuple, not a dataclass: readers build one per line, millions at a time.
    """

    line: int
    query: str
    document: str
    grade: int | None
    status: str = "graded"
    note: str = ""
    judge: str = ""  # the rater a multi-rater file names (Quepid books); "" for the file's judge
    #: Evidence spans as given (jsonl, json; checked by the import); None when not given.
    evidence: Any = None
    gold: int | None = None  # the expected grade, as written, marking the pair as gold
    gold_reason: str = ""  # why (coordinators only)
    judge_kind: str = ""  # the rater's kind when the file says it (Graded's books); "": unsaid


def format_grade(grade: float) -> str:
    """Return a grade as an integer when whole, else with up to six decimals."""
    value = float(grade)
    if value.is_integer():
        return str(int(value))
    return f"{value:.6f}".rstrip("0").rstrip(".")


_GRADE_TEXT: dict[float, str] = {}


def _grade_text(grade: float) -> str:
    """Return :func:`format_grade` of ``grade``, memoised (a list has few distinct grades)."""
    try:
        return _GRADE_TEXT[grade]
    except KeyError:
        text = format_grade(grade)
        if len(_GRADE_TEXT) < 10_000:
            _GRADE_TEXT[grade] = text
        return text


def _number(grade: float) -> int | float:
    """Return a grade as a JSON number: an integer when whole, else rounded to 6 places."""
    value = float(grade)
    return int(value) if value.is_integer() else round(value, 6)


def _json(obj: Any) -> str:
    """Return compact-ish JSON (``", "`` and ``": "`` separators), non-ASCII kept."""
    return json.dumps(obj, ensure_ascii=False)


def _json_string(value: str) -> str:
    """Return ``value`` as a JSON string, as ``json.dumps(value, ensure_ascii=False)``."""
    if value.isascii() and value.isprintable() and '"' not in value and "\\" not in value:
        return f'"{value}"'
    return json.dumps(value, ensure_ascii=False)


def _csv_field(value: Any) -> str:
    """Return one csv field, quoted as RFC 4180 (and Python's csv module) when needed.

    Text (``str``) that a spreadsheet would read as a formula gets a leading ``'`` and is
    quoted; numbers are written as they are.
    """
    if isinstance(value, str) and needs_formula_guard(value):
        return "\"'" + value.replace('"', '""') + '"'
    value = str(value)
    if "," in value or '"' in value or "\n" in value or "\r" in value:
        return '"' + value.replace('"', '""') + '"'
    return value


def _csv_line(values: Iterable[Any]) -> str:
    """Return one RFC 4180 csv record ending in a line feed."""
    return ",".join(_csv_field(v) for v in values) + "\n"


def ranklib_numbers(qids: Iterable[tuple[str, int]]) -> dict[str, int]:
    """Return the RankLib number of each qid, from ``(qid, permanent id)`` pairs.

    The qid itself when every qid is a whole number, else the permanent id.
    """
    pairs = list(qids)
    if pairs and all(q.isascii() and q.isdigit() for q, _ in pairs):
        return {q: int(q) for q, _ in pairs}
    return dict(pairs)


#: Formats whose readers skip ``#`` lines, so a provenance comment may start the file.
COMMENT_FORMATS = ("qrels", "ranklib")


def metadata_comment(meta: Mapping[str, Any]) -> str:
    """Return the one-line provenance comment that may start a qrels or RankLib file.

    ``# ir_metadata {...}``: the keys of ir_metadata's provenance (what, from where,
    when, which software) as one line of JSON, because trec_eval 10.0 skips a lone
    ``#`` line but refuses two in a row.
    """
    return "# ir_metadata " + json.dumps(meta, ensure_ascii=False, sort_keys=True) + "\n"


def write_live(
    fmt: str, rows: Iterable[LiveRow], *, qid_numbers: Mapping[str, int] | None = None
) -> Iterator[str]:
    """Yield the lines of the live list ``rows`` in format ``fmt`` (see the module doc)."""
    if fmt == "qrels":
        for qid, docno, grade, *_ in rows:
            yield f"{qid} 0 {docno} {_grade_text(grade)}\n"
    elif fmt == "csv":
        yield _csv_line(CSV_HEADER)
        last_text, quoted = None, ""
        for _, docno, grade, _, _, query_text in rows:
            if query_text is not last_text:  # rows come grouped by query
                last_text, quoted = query_text, _csv_field(query_text)
            yield f"{quoted},{_csv_field(docno)},{_grade_text(grade)}\n"
    elif fmt == "jsonl":
        last_qid, quoted = None, ""
        for qid, docno, grade, humans, llms, *_ in rows:
            if qid is not last_qid:  # rows come grouped by query
                last_qid, quoted = qid, _json_string(qid)
            yield (
                f'{{"query": {quoted}, "document": {_json_string(docno)}, '
                f'"grade": {_grade_text(grade)}, "humans": {humans}, "llms": {llms}}}\n'
            )
    elif fmt == "json":
        yield "["
        first = True
        for qid, docno, grade, humans, llms, *_ in rows:
            item = {
                "query": qid,
                "document": docno,
                "grade": _number(grade),
                "humans": humans,
                "llms": llms,
            }
            yield ("\n" if first else ",\n") + _json(item)
            first = False
        yield "]\n" if first else "\n]\n"
    elif fmt == "ranklib":
        numbers = dict(qid_numbers or {})
        for qid, number in sorted(numbers.items(), key=lambda item: item[1]):
            yield f"# qid:{number} = {qid}\n"
        for qid, docno, grade, *_ in rows:
            yield f"{_grade_text(grade)} qid:{numbers[qid]} # {docno}\n"
    else:
        raise ValueError(f"unknown format {fmt!r}; use one of {', '.join(FORMATS)}")


def _by_pair(rows: Iterable[LabelRow]) -> Iterator[list[LabelRow]]:
    """Group labels sorted by (qid, docno) into one list per pair."""
    group: list[LabelRow] = []
    for row in rows:
        if group and (row.qid, row.docno) != (group[0].qid, group[0].docno):
            yield group
            group = []
        group.append(row)
    if group:
        yield group


def rater_names(judges: Iterable[tuple[int, str]]) -> dict[int, str]:
    """Return a distinct column name per judge: its name, with its id when names repeat."""
    judges = list(judges)
    counts: dict[str, int] = {}
    for _, name in judges:
        counts[name] = counts.get(name, 0) + 1
    return {pk: name if counts[name] == 1 else f"{name} ({pk})" for pk, name in judges}


def write_quepid_book(
    rows: Iterable[LabelRow], *, name: str, grade_names: list[str]
) -> Iterator[str]:
    """Yield a Quepid book (its JSON export and import shape) of per-judge labels.

    ``{"name", "scale", "scale_with_labels", "query_doc_pairs": [{"query_text", "doc_id",
    "position", "document_fields", "judgements": [{"rating", "unrateable", "judge_later",
    "user_email", "explanation"}]}], "graded_raters": {...}}``: a judge is named by its
    user's e-mail (Quepid matches raters by e-mail) or, without one, by its name; "cannot
    judge" is ``unrateable`` and "judge later" ``judge_later``, both without a rating.

    ``graded_raters`` (after the pairs: it is known once they are written) maps each rater
    as named in ``user_email`` to ``{"kind": "human" | "llm"}``, so Graded's import gives an
    LLM rater an LLM judge. Quepid reads the book's keys by name and skips this one; a
    judgement or pair key of our own would not be skipped (Quepid creates its records
    from them), so the kinds sit at the top.
    """
    head = {
        "name": name,
        "show_rank": False,
        "support_implicit_judgements": False,
        "scale": list(range(GRADE_MIN, GRADE_MAX + 1)),
        "scale_with_labels": {str(g): label for g, label in enumerate(grade_names)},
    }
    yield _json(head)[:-1] + ', "query_doc_pairs": ['
    first = True
    kinds: dict[str, set[str]] = {}
    for group in _by_pair(rows):
        for r in group:
            kinds.setdefault(r.judge_email or r.judge_name, set()).add(r.judge_kind)
        pair = {
            "query_text": group[0].query_text,
            "doc_id": group[0].docno,
            "position": None,
            "document_fields": {},
            "judgements": [
                {
                    "rating": r.grade,
                    "unrateable": r.status == "cannot_judge",
                    "judge_later": r.status == "later",
                    "user_email": r.judge_email or r.judge_name,
                    "explanation": r.note or None,
                }
                for r in group
            ],
        }
        yield ("\n" if first else ",\n") + _json(pair)
        first = False
    raters = {name: {"kind": next(iter(k))} for name, k in sorted(kinds.items()) if len(k) == 1}
    yield ("]" if first else "\n]") + f', "graded_raters": {_json(raters)}}}\n'


def write_quepid_csv(
    rows: Iterable[LabelRow], *, judges: Iterable[tuple[int, str]]
) -> Iterator[str]:
    """Yield a Quepid book's csv: ``query,docid`` and one rating column per judge.

    ``judges`` are the (id, name) of the columns, in order; a judge without a grade for a
    pair (none, "cannot judge" or "judge later") has an empty cell, as Quepid writes.
    """
    columns = rater_names(judges)
    order = list(columns)
    yield _csv_line(("query", "docid", *columns.values()))
    for group in _by_pair(rows):
        grades = {r.judge_id: r.grade for r in group if r.grade is not None}
        cells = ["" if grades.get(pk) is None else grades[pk] for pk in order]
        if any(cell != "" for cell in cells):
            yield _csv_line((group[0].query_text, group[0].docno, *cells))


def write_labels(
    fmt: str,
    rows: Iterable[LabelRow],
    *,
    name: str = "",
    grade_names: list[str] | None = None,
    judges: Iterable[tuple[int, str]] = (),
) -> Iterator[str]:
    """Yield the lines of raw per-judge labels in ``csv``, ``jsonl``, ``quepid`` or ``quepid_csv``.

    ``name`` and ``grade_names`` (the collection's) head a Quepid book; ``judges`` are the
    columns of its csv.
    """
    if fmt == "quepid":
        yield from write_quepid_book(rows, name=name, grade_names=grade_names or [])
        return
    if fmt == "quepid_csv":
        yield from write_quepid_csv(rows, judges=judges)
        return
    if fmt == "csv":
        yield _csv_line(RAW_CSV_HEADER)
        for r in rows:
            yield _csv_line(
                (
                    r.qid,
                    r.query_text,
                    r.docno,
                    r.judge_id,
                    r.judge_name,
                    r.judge_kind,
                    r.status,
                    "" if r.grade is None else r.grade,
                    r.note,
                    "" if r.seconds is None else repr(float(r.seconds)),
                    r.updated_at,
                    "" if r.guidelines_version is None else r.guidelines_version,
                    r.judge_version,
                )
            )
    elif fmt == "jsonl":
        for r in rows:
            yield (
                _json(
                    {
                        "query": r.qid,
                        "document": r.docno,
                        "judge_id": r.judge_id,
                        "judge_name": r.judge_name,
                        "judge_kind": r.judge_kind,
                        "status": r.status,
                        "grade": r.grade,
                        "note": r.note,
                        "evidence": r.evidence or [],
                        "seconds": r.seconds,
                        "updated_at": r.updated_at,
                        "guidelines_version": r.guidelines_version,
                        "judge_version": r.judge_version or None,
                    }
                )
                + "\n"
            )
    else:
        raise ValueError(f"raw labels come as {' or '.join(RAW_FORMATS)}, not {fmt!r}")


# --- reading -----------------------------------------------------------------------------


def _grade(value: Any, line: int, field: str = "grade") -> int:
    """Return a whole-number grade as written (before any scale mapping)."""
    if isinstance(value, bool):
        raise FormatError(line, f"must be a whole number, not {value!r}", field)
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e9:
        return int(value)
    if isinstance(value, int) and abs(value) < 1e9:
        return value
    if isinstance(value, str) and _WHOLE.fullmatch(value.strip()):
        return int(value.strip())
    raise FormatError(line, f"must be a whole number, not {echo(value)}", field)


def _id(value: Any, line: int, field: str) -> str:
    """Return a non-empty id or query text given as a string or a whole number.

    Under :func:`graded.textpolicy.id_problem`: no NUL or surrogate, at most
    :data:`graded.textpolicy.MAX_ID_LENGTH` characters.
    """
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise FormatError(line, "a string is required", field)
    return ident(str(value), line, field)


#: The grades of qrels lines as written, read without a regular expression.
_PLAIN_GRADES = {str(g): g for g in range(-9, 100)}


def read_qrels(lines: Iterable[tuple[int, str]]) -> Iterator[JudgmentIn | Problem]:
    """Read TREC qrels ``qid iter docno grade``; blank and ``#`` lines are skipped."""
    plain, limit, forbidden = _PLAIN_GRADES, textpolicy.MAX_ID_LENGTH, textpolicy.FORBIDDEN
    for number, line in lines:
        parts = line.split()
        if not parts or parts[0].startswith("#"):
            continue
        if len(parts) != 4:
            yield Problem(number, f"expected 4 columns (qid iter docno grade), found {len(parts)}")
            continue
        qid, _, docno, grade = parts
        value = plain.get(grade)
        if (
            value is not None
            and len(qid) <= limit
            and len(docno) <= limit
            and not forbidden.search(qid)
            and not forbidden.search(docno)
        ):  # the usual line: what _id and _grade would return, without their calls
            yield JudgmentIn(number, qid, docno, value)
            continue
        try:
            yield JudgmentIn(
                number,
                _id(qid, number, "query"),
                _id(docno, number, "document"),
                _grade(grade, number),
            )
        except FormatError as exc:
            yield exc.problem


_CSV_ALIASES = {
    "query": "query",
    "qid": "query",
    "docid": "docid",
    "docno": "docid",
    "document": "docid",
    "rating": "rating",
    "grade": "rating",
    "note": "note",
    "gold": "gold",
    "gold_reason": "gold_reason",
}


def _gold(value: Any, reason: str, line: int) -> int | None:
    """Return a line's gold grade as written (None when none), checking its reason has one."""
    gold = None if value is None or value == "" else _grade(value, line, "gold")
    if reason and gold is None:
        raise FormatError(line, "a gold reason needs a gold grade", "gold_reason")
    return gold


def read_csv(
    lines: Iterable[tuple[int, str]], *, delimiter: str = ","
) -> Iterator[JudgmentIn | Problem]:
    """Read csv with a header naming ``query``, ``docid`` and ``rating`` (any order).

    ``qid``/``docno``/``document``/``grade`` are accepted as column names, and ``note``
    as an optional column. ``query`` may hold the query id or its text. The optional
    ``gold`` column marks the pair as gold with that expected grade (on the file's scale)
    and ``gold_reason`` says why; a line with a gold grade and an empty rating only marks
    the pair (no label).
    """
    columns: dict[str, int] | None = None
    for item in csv_records(lines, delimiter=delimiter):
        if isinstance(item, Problem):
            yield item
            return
        line, record = item
        if columns is None:
            names = [_CSV_ALIASES.get(v.strip().lower()) for v in record]
            unknown = [v for v, n in zip(record, names, strict=True) if n is None]
            if unknown:
                hint = (
                    " (a Quepid book's csv, with a column per rater: choose the format quepid_csv)"
                    if "rating" not in names
                    else ""
                )
                yield Problem(
                    line, f"unknown column(s): {', '.join(echo(v) for v in unknown[:5])}{hint}"
                )
                return
            columns = {name: i for i, name in enumerate(names) if name}
            missing = [n for n in ("query", "docid", "rating") if n not in columns]
            if missing:
                yield Problem(line, f"the header needs query, docid and rating; missing {missing}")
                return
            continue
        if len(record) != len(names):
            yield Problem(line, f"expected {len(names)} columns, found {len(record)}")
            continue

        try:
            reason = (
                text(
                    csv_cell_text(record[columns["gold_reason"]]),
                    line,
                    "gold_reason",
                    MAX_NOTE_LENGTH,
                )
                if "gold_reason" in columns
                else ""
            )
            gold = _gold(
                record[columns["gold"]].strip() if "gold" in columns else None, reason, line
            )
            rating = record[columns["rating"]]
            yield JudgmentIn(
                line,
                _id(csv_cell_text(record[columns["query"]]), line, "query"),
                _id(csv_cell_text(record[columns["docid"]]), line, "docid"),
                None if gold is not None and not rating.strip() else _grade(rating, line, "rating"),
                note=text(
                    csv_cell_text(record[columns["note"]]) if "note" in columns else "",
                    line,
                    "note",
                    MAX_NOTE_LENGTH,
                ),
                gold=gold,
                gold_reason=reason,
            )
        except FormatError as exc:
            yield exc.problem
    if columns is None:
        yield Problem(1, "no header line (query,docid,rating)")


def read_tsv(lines: Iterable[tuple[int, str]]) -> Iterator[JudgmentIn | Problem]:
    """Read tab-separated values with a header, as :func:`read_csv` reads csv."""
    return read_csv(lines, delimiter="\t")


_ITEM_KEYS = {
    "query": "query",
    "qid": "query",
    "document": "document",
    "docno": "document",
    "docid": "document",
    "grade": "grade",
    "rating": "grade",
    "status": "status",
    "note": "note",
    "evidence": "evidence",
    "gold": "gold",
    "gold_reason": "gold_reason",
}
_IGNORED_KEYS = {"humans", "llms"}


def _from_object(line: int, item: Any) -> JudgmentIn:
    """Read one judgment object of a json or jsonl file."""
    if not isinstance(item, dict):
        raise FormatError(line, "each judgment must be a JSON object")
    fields: dict[str, Any] = {}
    for key, value in item.items():
        name = _ITEM_KEYS.get(key)
        if name is None:
            if key in _IGNORED_KEYS:
                continue
            raise FormatError(line, f"unknown field {echo(key)}")
        fields[name] = value
    for name in ("query", "document"):
        if name not in fields:
            raise FormatError(line, "is required", name)
    status = fields.get("status", "graded")
    if not isinstance(status, str):
        raise FormatError(line, "must be a string", "status")
    grade = fields.get("grade")
    note = fields.get("note") or ""
    if not isinstance(note, str):
        raise FormatError(line, "must be a string", "note")
    reason = fields.get("gold_reason") or ""
    if not isinstance(reason, str):
        raise FormatError(line, "must be a string", "gold_reason")
    reason = text(reason, line, "gold_reason", MAX_NOTE_LENGTH)
    return JudgmentIn(
        line,
        _id(fields["query"], line, "query"),
        _id(fields["document"], line, "document"),
        None if grade is None else _grade(grade, line),
        status=text(status, line, "status", MAX_NAME_LENGTH),
        note=text(note, line, "note", MAX_NOTE_LENGTH),
        evidence=fields.get("evidence", []) if "evidence" in fields else None,
        gold=_gold(fields.get("gold"), reason, line),
        gold_reason=reason,
    )


def read_jsonl(lines: Iterable[tuple[int, str]]) -> Iterator[JudgmentIn | Problem]:
    """Read one judgment object per non-blank line."""
    for number, line in lines:
        if not line.strip():
            continue
        try:
            yield _from_object(number, json_value(number, line))
        except FormatError as exc:
            yield exc.problem


def _whole_json(lines: Iterable[tuple[int, str]]) -> tuple[Any, Problem | None]:
    """Parse a whole file as one JSON value; a syntax error is a problem naming its line."""
    try:
        return json_value(None, "\n".join(line for _, line in lines)), None
    except FormatError as exc:
        return None, dataclasses.replace(exc.problem, line=exc.problem.line or 1, unit="line")


def read_json(lines: Iterable[tuple[int, str]]) -> Iterator[JudgmentIn | Problem]:
    """Read one JSON array of judgment objects; ``line`` is the 1-based item number.

    Problems of an element count items (:data:`ITEM_FORMATS`); a syntax error names
    its line in the text.
    """
    items, problem = _whole_json(lines)
    if problem is not None:
        yield problem
        return
    if not isinstance(items, list):
        yield Problem(None, "expected a JSON array of judgment objects")
        return
    for number, item in enumerate(items, start=1):
        try:
            yield _from_object(number, item)
        except FormatError as exc:
            yield exc.problem


def read_ranklib(lines: Iterable[tuple[int, str]]) -> Iterator[JudgmentIn | Problem]:
    """Read ``grade qid:N [features] # docno`` lines, mapping N back through the header.

    ``# qid:N = <qid>`` comment lines give the mapping; without one, ``N`` is the qid.
    """
    mapping: dict[str, str] = {}
    for number, line in lines:
        stripped = line.strip()
        if not stripped:
            continue
        if stripped.startswith("#"):
            match = _RANKLIB_MAP.match(stripped)
            if match:
                mapping[match.group(1)] = match.group(2)
            continue
        data, hash_, comment = stripped.partition("#")
        parts = data.split()
        docno = comment.split()[0] if comment.split() else ""
        qid_match = _RANKLIB_QID.fullmatch(parts[1]) if len(parts) > 1 else None
        if not hash_ or not docno or qid_match is None:
            yield Problem(number, "expected 'grade qid:N ... # docno'")
            continue
        qid = mapping.get(qid_match.group(1), qid_match.group(1))
        try:
            yield JudgmentIn(
                number,
                _id(qid, number, "query"),
                _id(docno, number, "document"),
                _grade(parts[0], number),
            )
        except FormatError as exc:
            yield exc.problem


def _optional_text(value: Any, line: int, field: str, max_length: int) -> str:
    """Return a JSON string or null as text (null: empty)."""
    if value is None:
        return ""
    if not isinstance(value, str):
        raise FormatError(line, "must be a string", field)
    return text(value, line, field, max_length)


def read_quepid_book(lines: Iterable[tuple[int, str]]) -> Iterator[JudgmentIn | Problem]:
    """Read a Quepid book (JSON); ``line`` is the 1-based number of its query-doc pair.

    Every judgement is one label of its rater (``user_email``; none: the file's judge):
    ``unrateable`` is "cannot judge", ``judge_later`` "judge later", ``explanation`` the
    note. The pair's query is ``query_text`` (a query id or text, as in csv). The kind of
    a rater named in ``graded_raters`` (books Graded wrote) comes with its labels.
    """
    book, problem = _whole_json(lines)
    if problem is not None:
        yield problem
        return
    pairs = book.get("query_doc_pairs") if isinstance(book, dict) else None
    if not isinstance(pairs, list):
        yield Problem(None, "expected a Quepid book: an object with a query_doc_pairs array")
        return
    kinds, problems = _rater_kinds(book.get("graded_raters"))
    if problems:
        yield from problems
        return
    for number, pair in enumerate(pairs, start=1):
        try:
            if not isinstance(pair, dict):
                raise FormatError(number, "each query-doc pair must be a JSON object")
            query = _id(pair.get("query_text", pair.get("query")), number, "query_text")
            document = _id(pair.get("doc_id"), number, "doc_id")
            judgements = pair.get("judgements") or []
            if not isinstance(judgements, list):
                raise FormatError(number, "must be an array", "judgements")
        except FormatError as exc:
            yield exc.problem
            continue
        for index, judgement in enumerate(judgements):
            where = f"judgements[{index}]"
            try:
                if not isinstance(judgement, dict):
                    raise FormatError(number, "must be a JSON object", where)
                rater = _optional_text(
                    judgement.get("user_email"), number, f"{where}.user_email", MAX_NAME_LENGTH
                ).strip()
                note = _optional_text(
                    judgement.get("explanation"), number, f"{where}.explanation", MAX_NOTE_LENGTH
                )
                if judgement.get("unrateable") is True:
                    status, grade = "cannot_judge", None
                elif judgement.get("judge_later") is True:
                    status, grade = "later", None
                elif judgement.get("rating") is None:
                    raise FormatError(
                        number, "is required (or unrateable / judge_later)", f"{where}.rating"
                    )
                else:
                    status, grade = "graded", _grade(judgement["rating"], number, f"{where}.rating")
            except FormatError as exc:
                yield exc.problem
                continue
            yield JudgmentIn(
                number, query, document, grade, status, note, rater, judge_kind=kinds.get(rater, "")
            )


def _rater_kinds(raters: Any) -> tuple[dict[str, str], list[Problem]]:
    """Return the kinds ``graded_raters`` gives by rater name, and its problems."""
    if raters is None:
        return {}, []
    if not isinstance(raters, dict):
        return {}, [Problem(None, "must be an object of rater: {kind}", "graded_raters")]
    kinds: dict[str, str] = {}
    problems: list[Problem] = []
    for name, about in raters.items():
        kind = about.get("kind") if isinstance(about, dict) else None
        if kind not in ("human", "llm"):
            where = f"graded_raters.{name[:80]}.kind"
            problems.append(Problem(None, "must be human or llm", where))
        else:
            kinds[name.strip()] = kind
    return kinds, problems


def read_quepid_csv(lines: Iterable[tuple[int, str]]) -> Iterator[JudgmentIn | Problem]:
    """Read a Quepid book's csv: ``query,docid`` then one rating column per rater.

    An empty cell is no label; a column's header names its rater (Quepid writes the
    rater's name or e-mail, and prefixes a formula-like query with a space).
    """
    raters: list[str] | None = None
    for item in csv_records(lines):
        if isinstance(item, Problem):
            yield item
            return
        line, record = item
        if raters is None:
            head = [v.strip() for v in record]
            if len(head) < 3 or [h.lower() for h in head[:2]] != ["query", "docid"]:
                yield Problem(line, "the header needs query, docid and one column per rater")
                return
            raters = head[2:]
            if not all(raters) or len(set(raters)) != len(raters):
                yield Problem(line, "every rater column needs a distinct name")
                return
            continue
        if len(record) != len(raters) + 2:
            yield Problem(line, f"expected {len(raters) + 2} columns, found {len(record)}")
            continue
        try:
            query = _id(csv_cell_text(record[0]).strip(), line, "query")
            document = _id(csv_cell_text(record[1]), line, "docid")
            grades = [
                (rater, _grade(cell, line, rater))
                for rater, cell in zip(raters, record[2:], strict=True)
                if cell.strip()
            ]
        except FormatError as exc:
            yield exc.problem
            continue
        for rater, grade in grades:
            yield JudgmentIn(line, query, document, grade, judge=rater)
    if raters is None:
        yield Problem(1, "no header line (query,docid,<rater>...)")


#: Formats whose records are elements of a JSON array: problems count items, not lines.
ITEM_FORMATS = frozenset({"json", "quepid"})

READERS: dict[str, Callable[[Iterable[tuple[int, str]]], Iterator[JudgmentIn | Problem]]] = {
    "qrels": read_qrels,
    "csv": read_csv,
    "tsv": read_tsv,
    "jsonl": read_jsonl,
    "json": read_json,
    "ranklib": read_ranklib,
    "quepid": read_quepid_book,
    "quepid_csv": read_quepid_csv,
}


def guess_format(name: str) -> str:
    """Return the format a file name suggests (qrels when nothing else fits)."""
    lower = name.lower()
    base = lower.rsplit("/", 1)[-1]
    if lower.endswith((".json", ".csv")) and ("quepid" in base or base.startswith("book_")):
        return "quepid_csv" if lower.endswith(".csv") else "quepid"  # e.g. book_12_export.csv
    for fmt, ext in (("jsonl", ".jsonl"), ("json", ".json"), ("csv", ".csv"), ("tsv", ".tsv")):
        if lower.endswith((ext, ext + ".gz")):
            return fmt
    if "ranklib" in lower or lower.endswith(".svmlight"):
        return "ranklib"
    return "qrels"


# --- grade scales ------------------------------------------------------------------------

_RANGE = re.compile(r"\s*([+-]?\d{1,6})\s*(?:-|–|\.\.)\s*([+-]?\d{1,6})\s*")
_PAIR = re.compile(r"\s*([+-]?\d{1,6})\s*[=:]\s*([0-4])\s*")


def parse_scale(spec: str | None) -> Callable[[int], int]:
    """Return the function mapping a grade as written to Graded's 0–4.

    ``None``/``""``/``"0-4"``: grades must already be 0–4. ``"LO-HI"`` (e.g. ``0-3``,
    ``1-5``, ``0-1``): linear, ``round((g - LO) * 4 / (HI - LO))`` with halves rounded
    up, so TREC DL's 0–3 becomes 0, 1, 3, 4 and 1–5 becomes 0–4. ``"a=b,c=d"``: an
    explicit table (e.g. ``-2=0,0=0,1=2,2=4``). A grade outside the scale raises
    ``ValueError`` with a message for the line.
    """
    if spec is None or not spec.strip():
        spec = "0-4"
    range_match = _RANGE.fullmatch(spec)
    if range_match:
        low, high = int(range_match.group(1)), int(range_match.group(2))
        if high <= low:
            raise ValueError(f"scale {spec!r}: the top must be above the bottom")

        def linear(grade: int) -> int:
            if not low <= grade <= high:
                raise ValueError(f"grade {grade} is outside the scale {low}–{high}")
            return ((grade - low) * 8 + (high - low)) // (2 * (high - low))

        return linear
    table: dict[int, int] = {}
    for part in spec.split(","):
        match = _PAIR.fullmatch(part)
        if not match:
            raise ValueError(
                f"scale {spec!r}: give a range such as 0-3, or a table such as 0=0,1=2,2=4"
            )
        table[int(match.group(1))] = int(match.group(2))

    def mapped(grade: int) -> int:
        if grade not in table:
            raise ValueError(f"grade {grade} is not in the scale table {spec!r}")
        return table[grade]

    return mapped
