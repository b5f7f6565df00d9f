"""W1 with the document ids real collections use (issue 36).

W1's own ids are ``D`` plus seven digits.  This module rewrites W1's qrels and runs
with the same documents named the way real collections name them, one directory per
style under ``benchmarks/data/w1-<hash>/ids-<style>/``; everything but the docno column
is byte-identical, so every tool's scores are W1's (only tie-breaking between tied
documents follows the new names).

Styles (document ``n`` of W1, ``0 <= n < 2,500,000``):

* ``numeric``: ``str(3n + 1)`` -- 1 to 7 digits, like MS MARCO v1 passage ids;
* ``trec``: TREC disks 4-5 and TREC-8 style, ``FBIS3-10082``, ``LA010189-0001``,
  ``FT911-3``, ``FR940104-0-00001`` (four families in turn);
* ``msmarco-passage``: MS MARCO v2, ``msmarco_passage_00_491550`` (file 00-69, offset);
* ``msmarco-doc``: MS MARCO v2 documents, ``msmarco_doc_00_1234567``;
* ``clueweb09``: ``clueweb09-en0000-00-00000`` (fixed 25 characters);
* ``clueweb22``: ``clueweb22-en0000-00-00000``;
* ``url``: URLs as ids, 24 to 200 characters (mean about 80), with the punctuation
  URLs carry (``% ? = & ~ ; , ' ( ) : + ! * @ $``).

``python -m benchmarks.ids [--runs N] [STYLE ...]`` writes the files.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

from benchmarks.workload import W1, Workload, WorkloadSpec, ensure

_URL_WORDS = (
    "news",
    "wiki",
    "article",
    "2019",
    "en-us",
    "product",
    "a(b)c",
    "it's",
    "caf%C3%A9",
    "~user",
    "index.php",
    "page;v=2",
    "x+y",
    "q!*",
    "user@host",
    "$price",
    "a,b",
)
_HOSTS = (
    "www.example.com",
    "en.wikipedia.org",
    "blog.example.co.uk",
    "a.b.example.net",
    "host:8080",
)


def _numeric(n: int) -> str:
    return str(3 * n + 1)


def _trec(n: int) -> str:
    k = n % 4
    m = n // 4
    if k == 0:
        return f"FBIS{3 + m % 2}-{10000 + m // 2}"
    if k == 1:
        return f"LA{1 + m % 12:02d}{1 + (m // 12) % 28:02d}89-{m // 336:04d}"
    if k == 2:
        return f"FT9{1 + m % 4}{1 + (m // 4) % 4}-{m // 16}"
    return f"FR94{1 + m % 12:02d}{1 + (m // 12) % 28:02d}-{m // 336 % 3}-{m // 1008:05d}"


def _msmarco_passage(n: int) -> str:
    return f"msmarco_passage_{n % 70:02d}_{(n // 70) * 1753 + 11}"


def _msmarco_doc(n: int) -> str:
    return f"msmarco_doc_{n % 60:02d}_{(n // 60) * 40961 + 7}"


def _clueweb09(n: int) -> str:
    return f"clueweb09-en{n // 25000:04d}-{(n // 500) % 50:02d}-{n % 500 * 61 % 100000:05d}"


def _clueweb22(n: int) -> str:
    return f"clueweb22-en{n // 25000:04d}-{(n // 500) % 50:02d}-{n % 500 * 67 % 100000:05d}"


def _url(n: int) -> str:
    x = (n * 2654435761 + 12345) % (1 << 32)  # a cheap deterministic stream per document
    host = _HOSTS[n % len(_HOSTS)]
    # lengths 24-200, skewed to short (mean about 80), as URLs are
    target = min(200, 24 + (x % 97) * (x % 89) // 48)
    head = f"https://{host}/{n}"
    parts = [head]
    size = len(head)
    query = False
    while size < target:
        x = (x * 1103515245 + 12345) % (1 << 31)
        word = _URL_WORDS[x % len(_URL_WORDS)]
        if (x >> 8) % 10 < 7:
            sep = "/"
        else:
            sep, query = ("&k=", True) if query else ("?id=", True)
        parts.append(sep + word)
        size += len(sep) + len(word)
    return "".join(parts)[: max(target, len(head))]  # the head (with n) keeps ids distinct


STYLES: dict[str, Callable[[int], str]] = {
    "numeric": _numeric,
    "trec": _trec,
    "msmarco-passage": _msmarco_passage,
    "msmarco-doc": _msmarco_doc,
    "clueweb09": _clueweb09,
    "clueweb22": _clueweb22,
    "url": _url,
}
"""Every style, by name (the order of the benchmark's rows)."""


def _rewrite(src: Path, dst: Path, names: dict[bytes, bytes]) -> None:
    """Write ``src`` with its third field replaced through ``names``."""
    out = []
    with open(src, "rb") as fh:
        for line in fh:
            a, b, doc, rest = line.split(b" ", 3)
            out.append(b" ".join((a, b, names[doc], rest)))
    tmp = dst.with_suffix(".tmp")
    tmp.write_bytes(b"".join(out))
    tmp.replace(dst)


def _names(paths: list[Path], style: str) -> dict[bytes, bytes]:
    fn = STYLES[style]
    seen: set[bytes] = set()
    for path in paths:
        with open(path, "rb") as fh:
            seen.update(line.split(b" ", 3)[2] for line in fh)
    return {d: fn(int(d[1:])).encode() for d in seen}


def ensure_ids(style: str, n_runs: int = 1, spec: WorkloadSpec = W1) -> Workload:
    """Return W1 (qrels, first ``n_runs`` runs) with ``style`` ids, written if missing."""
    base = ensure(n_runs, spec)
    out = base.qrels.parent / f"ids-{style}"
    out.mkdir(exist_ok=True)
    qrels = out / "qrels.txt"
    runs = tuple(out / p.name for p in base.runs)
    todo = [
        (s, d)
        for s, d in ((base.qrels, qrels), *zip(base.runs, runs, strict=True))
        if not d.exists()
    ]
    if todo:
        names = _names([s for s, _ in todo], style)
        for src, dst in todo:
            _rewrite(src, dst, names)
    return Workload(spec, qrels, runs)


def main(argv: list[str] | None = None) -> None:
    """Write W1 in the given id styles (all by default)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("styles", nargs="*", metavar="STYLE", help=", ".join(STYLES))
    parser.add_argument("--runs", type=int, default=1)
    args = parser.parse_args(argv)
    for style in args.styles or STYLES:
        if style not in STYLES:
            parser.error(f"unknown style {style!r} (choose from {', '.join(STYLES)})")
        wl = ensure_ids(style, args.runs)
        print(f"{style}: {wl.qrels.parent}")


if __name__ == "__main__":
    main()
