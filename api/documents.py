"""`POST /documents` and `GET /documents/{sha256}`: the documents acts cite (audit/documents.py keeps them).

An upload is the file's raw bytes as the body, its `Content-Type` one of DOCUMENT_TYPES (PDF, PNG, JPEG) and its
first bytes that type's magic; at most `TRAMITA_MAX_DOCUMENT_BYTES` (DEFAULT_MAX_DOCUMENT_BYTES, 10 MiB) and
within UPLOAD_SECONDS from its first read, so that a slow client holds a worker's thread for a bounded time. The
answer is `{sha256, size, type}`: 201 when the bytes are new, 200 when they were already stored (the same bytes
are one document, however often and by whom they are sent). An upload records no act: a document counts once an
act cites it (`attachments` in the act's body, api/schemas.py). A body too large is 413, another type 415, an
empty one 400; each stores nothing. New bytes count for the uploader's body (its role, and its municipality when
the role is municipal): past `TRAMITA_DOCUMENT_QUOTA_BYTES_PER_DAY` of them on a legal day, or past
`TRAMITA_DOCUMENT_QUOTA_BYTES` of the body's documents still stored, the upload is 429 `document-quota-exceeded`
naming the quota, the bytes used and the limit (the day's with `Retry-After`, the seconds to midnight in Rio Branco)
and stores nothing (audit/document_limits.py); so is one past `TRAMITA_DOCUMENT_QUOTA_DOCUMENTS_PER_DAY` new documents
on a legal day. A document no act cites is removed TRAMITA_DOCUMENT_EXPIRY_DAYS after
its last upload: then it is 404 to its uploader too.

A download answers the bytes as uploaded, with their type, `ETag: "<sha256>"` and `Cache-Control: private,
immutable` (the bytes of a digest never change; private: a token is needed). The bytes are hashed again on every
read: altered ones are never served (500 `document-altered`, and a system alert).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable

from flask import Response, current_app, g, request
from flask_babel import format_decimal, gettext as _
from flask_smorest import Blueprint

from api.body import reading_body
from api.errors import Problem
from api.http import errors_doc
from audit.document_limits import QuotaExceededError, body_of
from audit.documents import DOCUMENT_TYPES, EXTENSIONS, Documents, media_type_of

#: The default largest document, in bytes (TRAMITA_MAX_DOCUMENT_BYTES): a scanned decree or law of a few dozen
#: pages at 300 dpi, or a photograph of a signed page.
DEFAULT_MAX_DOCUMENT_BYTES = 10 * 1024 * 1024
#: The largest limit that may be set: a document is read into memory whole and stored in one database row.
MAX_DOCUMENT_BYTES_CEILING = 64 * 1024 * 1024
#: Seconds an upload has, from its first read, to arrive whole (else 408): at least 10 MiB at ~175 KiB/s.
UPLOAD_SECONDS = 60.0
#: Bytes read from the body at a time.
UPLOAD_CHUNK = 64 * 1024
#: A document's address: its SHA-256, 64 lowercase hex digits.
SHA256_PATTERN = r"^[0-9a-f]{64}$"
_SHA256 = re.compile(SHA256_PATTERN[1:-1])
#: The endpoint whose body is a file, not JSON (api/body.py leaves it to this module).
UPLOAD_ENDPOINT = "documents.upload"

blp = Blueprint("documents", __name__, description="The documents acts cite: PDF, PNG or JPEG, by SHA-256")

DOCUMENT_SCHEMA = {"type": "object", "required": ["sha256", "size", "type"], "properties": {
    "sha256": {"type": "string", "pattern": SHA256_PATTERN},
    "size": {"type": "integer", "minimum": 1},
    "type": {"type": "string", "enum": list(DOCUMENT_TYPES)}}}


def documents() -> Documents:
    return current_app.extensions["tramita.documents"]


def read_upload(stream: object, limit: int, *, seconds: float = UPLOAD_SECONDS,
                clock: Callable[[], float] = time.monotonic) -> bytes:
    """The body's bytes: 413 past `limit` (reading at most `limit` + 1 of them), 408 when they take longer than
    `seconds` from the first read (behind nginx the body has arrived whole before the app reads it)."""
    chunks, size, started = [], 0, clock()
    while size <= limit:
        chunk = stream.read(min(UPLOAD_CHUNK, limit + 1 - size))  # type: ignore[attr-defined]
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
        if clock() - started > seconds:
            raise Problem(408, f"o documento não chegou inteiro em {seconds:.0f} s; envie-o de novo",
                          kind="upload-timeout", field="body")
    if size > limit:
        raise _too_large(limit)
    return b"".join(chunks)


def _too_large(limit: int) -> Problem:
    return Problem(413, f"o documento tem mais de {limit:,} bytes, o máximo que esta API guarda "
                   "(TRAMITA_MAX_DOCUMENT_BYTES)", kind="document-too-large", field="body", limit=limit)


def _over_quota(over: QuotaExceededError) -> Problem:
    """429 naming the quota passed, what the body has used of it and its limit; the day's with `Retry-After`."""
    if over.retry_after is None:
        detail = _("this body's documents hold %(used)s of the %(limit)s bytes it may keep (%(quota)s), and this one "
                   "has %(size)s: what its uncited documents hold is freed when they expire, and the operators may "
                   "raise the quota",
                   used=format_decimal(over.used), limit=format_decimal(over.limit), quota=over.quota,
                   size=format_decimal(over.size))
    elif over.quota == "TRAMITA_DOCUMENT_QUOTA_DOCUMENTS_PER_DAY":
        detail = _("this body added %(used)s of the %(limit)s new documents it may add today (%(quota)s): send this "
                   "one after midnight in Rio Branco", used=format_decimal(over.used),
                   limit=format_decimal(over.limit), quota=over.quota)
    else:
        detail = _("this body added %(used)s of the %(limit)s bytes of new documents it may add today (%(quota)s), and "
                   "this one has %(size)s: send it after midnight in Rio Branco", used=format_decimal(over.used),
                   limit=format_decimal(over.limit), quota=over.quota, size=format_decimal(over.size))
    headers = {"Retry-After": str(over.retry_after)} if over.retry_after is not None else None
    return Problem(429, detail, kind="document-quota-exceeded", field="body", limit=over.limit, headers=headers)


def _wrong_type(detail: str) -> Problem:
    return Problem(415, detail, kind="unsupported-document-type", field="Content-Type",
                   headers={"Accept": ", ".join(DOCUMENT_TYPES)})


@blp.route("/documents", methods=["POST"], endpoint="upload")
@errors_doc([400, 401, 403, 408, 413, 415])
@blp.doc(summary="Store a document an act will cite (the file's bytes as the body); answers its SHA-256",
         operationId="document-uploaded", requestBody={"required": True, "content": {
             kind: {"schema": {"type": "string", "format": "binary"}} for kind in DOCUMENT_TYPES}},
         responses={"201": {"description": "stored", "content": {"application/json": {"schema": DOCUMENT_SCHEMA}}},
                    "200": {"description": "already stored", "content": {
                        "application/json": {"schema": DOCUMENT_SCHEMA}}}})
def upload() -> Response:
    app, limit = current_app.extensions["tramita"], current_app.config["TRAMITA_MAX_DOCUMENT_BYTES"]
    app.require_may_upload(g.actor)
    if request.mimetype not in DOCUMENT_TYPES:
        raise _wrong_type(f"um documento é {', '.join(DOCUMENT_TYPES)}, não {request.content_type!r}")
    if request.content_length is not None and request.content_length > limit:
        raise _too_large(limit)
    request.max_content_length = limit + 1  # Werkzeug's own limit is the JSON bodies' (api/app.py)
    with reading_body():
        content = read_upload(request.stream, limit)
    if not content:
        raise Problem(400, "o corpo está vazio: envie os bytes do documento", kind="empty-document", field="body")
    found = media_type_of(content)
    if found != request.mimetype:
        raise _wrong_type(f"o conteúdo não é {request.mimetype}: seus primeiros bytes são de "
                          f"{found or 'nenhum dos tipos aceitos'}")
    try:
        document, new = documents().upload(content, request.mimetype, g.token_id, body=body_of(g.actor),
                                           quota=current_app.config["TRAMITA_DOCUMENT_QUOTA"])
    except QuotaExceededError as over:
        raise _over_quota(over) from None
    response = current_app.json.response(document.as_dict())
    response.status_code = 201 if new else 200
    response.headers["Location"] = f"/documents/{document.sha256}"
    return response


@blp.route("/documents/<sha256>", methods=["GET"], endpoint="download")
@errors_doc([400, 401, 404, 500])
@blp.doc(summary="A document cited by an act (or uploaded with this token), checked against its SHA-256",
         operationId="document", responses={"200": {"description": "the document's bytes", "content": {
             kind: {"schema": {"type": "string", "format": "binary"}} for kind in DOCUMENT_TYPES}},
             "304": {"description": "not modified (If-None-Match)"}},
         parameters=[{"in": "path", "name": "sha256", "required": True,
                      "schema": {"type": "string", "pattern": SHA256_PATTERN}}])
def download(sha256: str) -> Response:
    if not _SHA256.fullmatch(sha256):
        raise Problem(400, "sha256: 64 dígitos hexadecimais minúsculos (o SHA-256 do documento)",
                      kind="malformed-sha256", field="sha256")
    document, content = documents().read(sha256, g.token_id)
    headers = {"ETag": f'"{document.sha256}"', "Cache-Control": "private, max-age=31536000, immutable",
               "X-Content-Type-Options": "nosniff",
               "Content-Disposition": f'inline; filename="{document.sha256}.{EXTENSIONS[document.type]}"'}
    if request.if_none_match.contains(document.sha256):
        return Response(status=304, headers=headers)
    return Response(content, mimetype=document.type, headers=headers)
