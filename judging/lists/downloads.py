"""HTTP side of judgment-list exports: a streamed, versioned, optionally gzipped response.

Shared by the REST endpoint and the browser download, so both behave the same: the
``X-Judgment-List-Version`` header, a weak ETag naming the version and the request, the
version in the file name, 304 for a conditional GET with the current ETag, gzip when the
client accepts it.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Iterable, Iterator

from django.http import HttpRequest, HttpResponse, HttpResponseNotModified, StreamingHttpResponse
from django.utils.cache import patch_vary_headers

from judging.lists import exports
from judging.lists.formats import judgments as fmt
from judging.models import Collection

#: Bytes gathered before a chunk is sent (fewer, larger writes than one per line).
CHUNK_BYTES = 64 * 1024
_GZIP = re.compile(r"\bgzip\b(?!\s*;\s*q=0(\.0+)?\b)")


def _chunks(lines: Iterable[str], size: int = CHUNK_BYTES) -> Iterator[bytes]:
    """Encode ``lines`` as UTF-8 and yield them in chunks of about ``size`` bytes."""
    buffer: list[str] = []
    length = 0
    for line in lines:
        buffer.append(line)
        length += len(line)
        if length >= size:
            yield "".join(buffer).encode("utf-8")
            buffer, length = [], 0
    if buffer:
        yield "".join(buffer).encode("utf-8")


def _gzipped(chunks: Iterable[bytes]) -> Iterator[bytes]:
    """Compress a byte stream into one gzip member, chunk by chunk."""
    compressor = zlib.compressobj(6, zlib.DEFLATED, 31)
    for chunk in chunks:
        data = compressor.compress(chunk)
        if data:
            yield data
    yield compressor.flush()


def accepts_gzip(request: HttpRequest) -> bool:
    """Return whether the client accepts a gzip body."""
    return bool(_GZIP.search(request.headers.get("Accept-Encoding", "")))


def export_response(
    request: HttpRequest, *, collection: Collection, spec: exports.ExportSpec
) -> HttpResponse:
    """Return the streamed export, or 304 when the client already has this version."""
    version = collection.judgments_version
    etag = exports.export_etag(collection=collection, spec=spec, version=version)
    headers = {
        "ETag": etag,
        "X-Judgment-List-Version": str(version),
        "Cache-Control": "private, no-cache",
    }
    wanted = {tag.strip() for tag in request.headers.get("If-None-Match", "").split(",")}
    if etag in wanted or etag.removeprefix("W/") in wanted or "*" in wanted:
        response: HttpResponse = HttpResponseNotModified(headers=headers)
        patch_vary_headers(response, ["Accept-Encoding"])
        return response
    body = _chunks(exports.export_lines(collection=collection, spec=spec, version=version))
    if accepts_gzip(request):
        body = _gzipped(body)
        headers["Content-Encoding"] = "gzip"
    filename = exports.export_filename(collection=collection, spec=spec, version=version)
    headers["Content-Disposition"] = f'attachment; filename="{filename}"'
    response = StreamingHttpResponse(
        body,
        content_type=f"{fmt.CONTENT_TYPES[spec.format]}; charset=utf-8",
        headers=headers,
    )
    patch_vary_headers(response, ["Accept-Encoding"])
    return response
