"""Read a grade out of an LLM judge's answer and map it onto 0–4 (no Django).

The answer is JSON ``{"grade": n, ...}`` when its content parses as a JSON object (a
Markdown code fence around it is allowed); otherwise the label is the last match of the
judge's answer pattern (by default ``final score: N``). A label that is not on the judge's
native scale is an error: it is never rounded or clamped.

Answer patterns are coordinators' input run over models' output, so they are compiled with
RE2 (``google-re2``), whose matching time is linear in the answer's length: a pattern such
as ``(a+)+$`` cannot backtrack for hours. RE2 has no backreferences or lookaround; such a
pattern is refused with RE2's reason when the judge is configured.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

import re2

#: Default answer pattern: the number after the last ``final score:`` (UMBRELA style).
DEFAULT_ANSWER_PATTERN = r"final\s+score\s*[:=]\s*\**\s*([-+]?\d+(?:\.\d+)?)"

#: Scale assumed when a judge declares none: Graded's own grades.
GRADED_SCALE: list[str] = ["0", "1", "2", "3", "4"]

_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL | re.IGNORECASE)


class AnswerError(ValueError):
    """The answer holds no usable label."""


def _re2_options() -> Any:
    options = re2.Options()
    options.case_sensitive = False
    options.log_errors = False  # the reason goes into the ValueError, not to stderr
    return options


_OPTIONS = _re2_options()


def compile_pattern(pattern: str) -> Any:
    """Compile an answer pattern (case-insensitive, RE2); raise ``ValueError`` if unusable.

    The pattern must have at most one capturing group; the label is that group, or the
    whole match when there is none.
    """
    try:
        compiled = re2.compile(pattern or DEFAULT_ANSWER_PATTERN, _OPTIONS)
    except re2.error as exc:
        reason = exc.args[0] if exc.args else exc
        if isinstance(reason, bytes):
            reason = reason.decode("utf-8", "replace")
        raise ValueError(f"Not a valid regular expression (RE2 syntax): {reason}.") from None
    if compiled.groups > 1:
        raise ValueError("Use at most one capturing group (the label).")
    return compiled


def label_of(value: object) -> str | None:
    """Return a JSON grade value as a label string, or None when it cannot be one."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isfinite(value) and value.is_integer():
            return str(int(value))
        return repr(value)
    if isinstance(value, str) and value.strip():
        return value.strip()
    return None


def _json_object(content: str) -> dict | None:
    """Return the content as a JSON object if it is one (fenced or not), else None."""
    text = content.strip()
    fenced = _FENCE.match(text)
    if fenced:
        text = fenced.group(1)
    if not text.startswith("{"):
        return None
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):  # RecursionError: nested past json's limit
        return None
    return value if isinstance(value, dict) else None


def extract_label(content: str, *, pattern: str = "") -> str:
    """Return the label an answer gives, before any scale check.

    Raises :class:`AnswerError` when the answer is empty, is JSON without a usable
    ``grade``, or has no match of ``pattern``.
    """
    if not content or not content.strip():
        raise AnswerError("The answer is empty.")
    data = _json_object(content)
    if data is not None:
        if "grade" not in data:
            raise AnswerError("The JSON answer has no 'grade'.")
        label = label_of(data["grade"])
        if label is None:
            raise AnswerError(f"The JSON answer's grade {data['grade']!r} is not a label.")
        return label
    compiled = compile_pattern(pattern)
    matches = list(compiled.finditer(content))
    if not matches:
        raise AnswerError(f"No match of the answer pattern {compiled.pattern!r}.")
    last = matches[-1]
    return (last.group(1) if compiled.groups else last.group(0)).strip()


def on_scale(label: str, native_scale: Sequence[str]) -> str:
    """Return the scale's own spelling of ``label``; raise :class:`AnswerError` if off-scale.

    Numeric labels compare by value when both are whole numbers (``"02"`` is ``"2"``,
    ``"2.0"`` is ``"2"``); ``"2.5"`` is never ``"2"`` or ``"3"``.
    """
    scale = list(native_scale) or GRADED_SCALE
    if label in scale:
        return label
    number = _whole(label)
    if number is not None:
        for candidate in scale:
            if _whole(candidate) == number:
                return candidate
    raise AnswerError(f"Label {label!r} is not on the scale {scale}.")


def _whole(text: str) -> int | None:
    """Return ``text`` as a whole number if it spells one exactly, else None."""
    try:
        value = float(text)
    except ValueError:
        return None
    if not math.isfinite(value) or not value.is_integer():
        return None
    return int(value)


def to_grade(label: str, *, native_scale: Sequence[str], mapping: Mapping[str, int]) -> int:
    """Return the 0–4 grade of a native label (checked against the scale first).

    Without a mapping, labels are read as grades themselves and must be 0–4.
    """
    label = on_scale(label, native_scale)
    if mapping:
        if label not in mapping:
            raise AnswerError(f"Label {label!r} has no grade in the scale mapping.")
        return int(mapping[label])
    grade = _whole(label)
    if grade is None or not 0 <= grade <= 4:
        raise AnswerError(f"Label {label!r} is not a grade from 0 to 4.")
    return grade


def parse_answer(
    content: str,
    *,
    native_scale: Sequence[str],
    mapping: Mapping[str, int],
    pattern: str = "",
) -> tuple[str, int]:
    """Return ``(native label, grade 0–4)`` of an answer; raise :class:`AnswerError`."""
    label = on_scale(extract_label(content, pattern=pattern), native_scale)
    return label, to_grade(label, native_scale=native_scale, mapping=mapping)


def parse_label(
    label: str, *, native_scale: Sequence[str], mapping: Mapping[str, int]
) -> tuple[str, int]:
    """Return ``(native label, grade 0–4)`` of a label given directly (not in an answer)."""
    label = on_scale(label, native_scale)
    return label, to_grade(label, native_scale=native_scale, mapping=mapping)


#: Keys of a JSON answer that may hold the model's explanation, first found wins.
EXPLANATION_KEYS = ("explanation", "reason", "reasoning", "rationale", "justification")
#: Keys of a JSON answer that may hold quotes from the document (a string or a list).
QUOTE_KEYS = ("evidence", "quotes")
#: Longest explanation kept (a judgment's note holds 5,000 characters).
MAX_EXPLANATION = 5_000
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def _clean(text: str, limit: int) -> str:
    """Return ``text`` without NUL or surrogates, trimmed, cut to ``limit`` characters."""
    text = _UNSTORABLE.sub("", text).replace("\r\n", "\n").strip()
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def explanation(content: str, *, pattern: str = "", limit: int = MAX_EXPLANATION) -> str:
    """Return the model's explanation of its grade, or ``""`` when it gives none.

    A JSON answer: the first string among :data:`EXPLANATION_KEYS`. Any other answer:
    its text without the label's match (by default the ``final score: N`` line), so the
    reasoning a UMBRELA-style answer writes before its score is kept. NUL and surrogates
    are dropped (they cannot be stored) and the text is cut to ``limit`` characters.
    """
    if not content or not content.strip():
        return ""
    data = _json_object(content)
    if data is not None:
        for key in EXPLANATION_KEYS:
            value = data.get(key)
            if isinstance(value, str) and value.strip():
                return _clean(value, limit)
        return ""
    try:
        compiled = compile_pattern(pattern)
    except ValueError:
        return _clean(content, limit)
    matches = list(compiled.finditer(content))
    if matches:
        last = matches[-1]
        # the score's markup before it ("##final score: 2") goes with it
        content = content[: last.start()].rstrip(" \t#*:=") + content[last.end() :]
    if not any(ch.isalnum() for ch in content):  # only the score's markup was left ("##")
        return ""
    return _clean(content, limit)


def quotes(content: str, *, most: int = 20) -> list[str]:
    """Return the quotes from the document a JSON answer gives as its evidence.

    The strings of the first of :data:`QUOTE_KEYS` present (one string or a list of
    them), non-blank, at most ``most``; ``[]`` for answers that are not JSON.
    """
    data = _json_object(content or "")
    if data is None:
        return []
    for key in QUOTE_KEYS:
        if key in data:
            value = data[key]
            items = [value] if isinstance(value, str) else value
            if not isinstance(items, list):
                return []
            found = [q.strip() for q in items if isinstance(q, str) and q.strip()]
            return found[:most]
    return []


def find_quote(quote: str, text: str) -> tuple[int, int] | None:
    """Return where ``quote`` first occurs in ``text`` (white space matched loosely), or None.

    Words are matched exactly and in order; any run of white space matches any other,
    since a model quotes the document's plain text, whose spacing may differ.
    """
    words = quote.split()
    if not words:
        return None
    found = re.search(r"\s+".join(re.escape(w) for w in words), text)
    return (found.start(), found.end()) if found else None
