"""A request's body at the edge of the API, once for every operation: its size, its type and its JSON.

`read_body` runs before every view (after the token is checked): a body larger than the limit
(`TRAMITA_MAX_BODY_BYTES`, default 1 MiB) is 413 before any of it is parsed: a `Content-Length` over the limit
before any byte is read, a chunked body (no `Content-Length`) after at most limit + 1 bytes. A body that is not
`application/json` (UTF-8) is 415; one that is not JSON, or nests arrays and objects deeper than MAX_JSON_DEPTH,
or writes `NaN`/`Infinity` (not JSON), is 400. Depth is checked on the text before Python's `json` module, whose
recursion would otherwise blow up on deep input. The parsed body is kept for the request: the schemas read it
(`Blueprint` below) and so does the `Idempotency-Key` fingerprint, so it is parsed once, by one set of rules.

Numbers too large for their type are not refused here but passed on as `Decimal`, so that the field that reads
one refuses it by name (422): an integer literal of more than MAX_INTEGER_LITERAL digits (Python's `int()` refuses
those past 4,300 digits with an error of its own) or a float literal beyond a float's range (`1e999`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from array import array
from decimal import Decimal, InvalidOperation
from itertools import accumulate
from typing import Any

import flask_smorest
from flask import current_app, g, request
from flask_babel import gettext as _
from marshmallow import missing
from webargs.flaskparser import FlaskParser
from werkzeug.exceptions import ClientDisconnected, HTTPException, RequestEntityTooLarge
from werkzeug.wsgi import LimitedStream

from api.errors import Problem

#: The default body limit, in bytes (TRAMITA_MAX_BODY_BYTES): far above any act (a petition with a few hundred
#: signatures is tens of kilobytes), far below what would let one request fill the log.
DEFAULT_MAX_BODY_BYTES = 1024 * 1024
#: Arrays and objects nested deeper than this are refused (the deepest act body nests 3 levels).
MAX_JSON_DEPTH = 32
#: Integer literals longer than this reach the schemas as `Decimal` (and are refused there, by field).
MAX_INTEGER_LITERAL = 40
#: Methods whose body the API reads.
BODY_METHODS = ("POST", "PUT", "PATCH")
#: Endpoints whose body is a file, read by their view with a limit of its own (api/documents.py), not JSON.
RAW_BODY_ENDPOINTS = ("documents.upload",)

#: A JSON string, or an unterminated one up to the end: every match attempt that starts at a quote succeeds, so
#: blanking strings stays linear in the body's length whatever quotes and backslashes it holds.
_STRING = re.compile(r'"[^"\\]*(?:\\(?:.|\Z)[^"\\]*)*(?:"|\Z)', re.DOTALL)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_STEPS = bytes.maketrans(b"[{]}", b"\x01\x01\xff\xff")
_BODY = "tramita_json_body"


class MalformedBodyError(ValueError):
    """The body is not JSON the API reads."""


def read_body() -> None:
    """Before every view: a written body within the limit, JSON, not too deep; kept parsed for the request."""
    if request.method not in BODY_METHODS or request.endpoint is None or request.blueprint == "pages" \
            or request.endpoint in RAW_BODY_ENDPOINTS:
        return  # the pages' forms: read by api/pages (form fields); an upload: read raw by api/documents.py
    chunked = "chunked" in request.headers.get("Transfer-Encoding", "").lower()
    if not request.content_length and not chunked:
        return  # no body: the schema says which fields are required
    limit = current_app.config["TRAMITA_MAX_BODY_BYTES"]
    if request.mimetype != "application/json" or request.mimetype_params.get("charset", "utf-8").lower() not in (
            "utf-8", "utf8"):
        raise Problem(415, _("the body must be application/json (UTF-8), not %(type)r",
                             type=request.content_type),
                      kind="unsupported-media-type", field="Content-Type", headers={"Accept": "application/json"})
    data = _within(limit)
    if data is None:
        raise Problem(413, _("the body is larger than %(limit)s bytes, the most this API reads "
                             "(TRAMITA_MAX_BODY_BYTES)", limit=f"{limit:,}"), kind="body-too-large", field="body",
                      limit=limit)
    if not data:
        return
    try:
        setattr(g, _BODY, strict_json(data))
    except MalformedBodyError as malformed:
        raise Problem(400, _("the body is not JSON this API reads: %(fault)s", fault=malformed), kind="malformed-json",
                      field="body", errors={"json": {"body": [str(malformed)]}}) from None


#: Endpoints whose query strings are not the API's: its documents and static files, and the liveness check (which
#: a monitor may call with a cache-busting parameter).
OPEN_QUERY_ENDPOINTS = frozenset({"static", "docs", "docs_static", "api-docs.openapi_json", "health.health"})


def check_query() -> None:
    """Before every API request: a query parameter given twice is refused (422 naming it: which of the two would
    count is a guess), and so is any parameter of an operation that takes none (an `as_of` sent to the export,
    which has no such view, must not be answered with the case as it stands now as if it had been heard). The
    operations that take parameters refuse an unknown one by their schema."""
    if not request.args or request.endpoint is None or request.blueprint == "pages" \
            or request.endpoint in OPEN_QUERY_ENDPOINTS:
        return
    for name in request.args:
        if len(request.args.getlist(name)) > 1:
            raise Problem(422, _("the query parameter %(name)s is given more than once", name=name), field=name,
                          errors={"query": {name: ["given more than once"]}})
    view = current_app.view_functions.get(request.endpoint)
    arguments = (getattr(view, "_apidoc", None) or {}).get("arguments", {}).get("parameters", [])
    if not any(argument.get("in") == "query" for argument in arguments):
        name = next(iter(request.args))
        raise Problem(422, _("this operation takes no query parameter; %(name)s is not one", name=name), field=name,
                      errors={"query": {name: ["Unknown field."]}})


#: How much of a refused request's unread body is read at a time to be dropped (`drain_unread_body`).
DRAIN_CHUNK = 64 * 1024


def drain_unread_body(response: Any) -> Any:
    """After a refusal answered before the body was read (401, 403, 415 ...): read what is left of the body and
    drop it, when its Content-Length is within what the request could have sent (a document's limit for an upload,
    an act's otherwise). A proxy that sends the body whole (nginx, docs/nginx.conf) then reads the refusal; a
    connection closed with the body unread is reset under it, and it answers its own error instead. A body larger
    than the limit is not read (the connection closes, as before)."""
    length = request.content_length
    if response.status_code < 400 or request.method not in BODY_METHODS or not length:
        return response
    upload = request.endpoint in RAW_BODY_ENDPOINTS
    limit = current_app.config["TRAMITA_MAX_DOCUMENT_BYTES" if upload else "TRAMITA_MAX_BODY_BYTES"]
    if length > limit + 1:
        return response
    stream = request.__dict__.get("stream") or LimitedStream(request.environ["wsgi.input"], length)
    try:
        while stream.read(DRAIN_CHUNK):
            pass
    except Exception:  # noqa: BLE001 - the client went away or sent less: nothing more to drop
        pass
    return response


@contextmanager
def reading_body() -> Iterator[None]:
    """Reading a request's body from the server: a read that fails or ends short (the body stopped coming) is 408
    naming the body, and one the server refuses for the body's framing (a chunked body's broken chunk sizes,
    extensions or trailer) is 400 naming the body; neither is a 500."""
    try:
        yield
    except (OSError, ClientDisconnected):  # Werkzeug's name for a read that failed or ended short
        raise Problem(408, _("the body did not arrive in time"), kind="body-timeout", field="body") from None
    except HTTPException:
        raise  # already an answer: Werkzeug's 413 past MAX_CONTENT_LENGTH, a view's own (api/documents.py)
    except Exception as malformed:  # noqa: BLE001 - see below
        # WSGI (PEP 3333) names no error for a body the server cannot decode, so each server raises its own:
        # gunicorn, its HTTP parser's (not OSErrors), from a module it does not document for applications, and so
        # not imported here. A timeout or a connection closed mid-body is an OSError, which Werkzeug's stream makes
        # ClientDisconnected (above); anything else the input stream raises while the body is read is the server
        # refusing the bytes it was sent: the client's fault, 400.
        raise Problem(400, _("the body's framing is malformed: %(fault)s", fault=str(malformed) or
                             type(malformed).__name__), kind="malformed-body", field="body") from None


def _within(limit: int) -> bytes | None:
    """The body if it has at most `limit` bytes, else None, reading no more than `limit` + 1 bytes of it: none when
    its Content-Length is larger, and of a chunked body (no Content-Length) only until one byte too many came."""
    if request.content_length is not None and request.content_length > limit:
        return None
    chunks, size = [], 0
    try:
        with reading_body():
            while size <= limit:
                chunk = request.stream.read(limit + 1 - size)
                if not chunk:
                    break
                chunks.append(chunk)
                size += len(chunk)
    except RequestEntityTooLarge:  # Werkzeug's own limit (MAX_CONTENT_LENGTH, set one byte above ours)
        return None
    return None if size > limit else b"".join(chunks)


def json_body() -> Any:
    """The request's body as `read_body` parsed it (marshmallow's `missing` when there is none)."""
    return g.get(_BODY, missing)


def strict_json(data: bytes) -> Any:
    """Parse a body: UTF-8, RFC 8259 JSON (no NaN or Infinity), nested at most MAX_JSON_DEPTH deep."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise MalformedBodyError(f"byte {error.start} is not UTF-8") from None
    # Every level opens with a bracket, so a text with few of them (every act's body) cannot nest too deep; only
    # one with more is measured.
    if text.count("[") + text.count("{") > MAX_JSON_DEPTH and nesting_depth(text) > MAX_JSON_DEPTH:
        raise MalformedBodyError(f"arrays and objects are nested deeper than {MAX_JSON_DEPTH} levels")
    try:
        return json.loads(text, parse_constant=_no_constant, parse_int=_integer, parse_float=_float,
                          object_pairs_hook=_object)
    except json.JSONDecodeError as error:
        raise MalformedBodyError(f"{error.msg} at line {error.lineno}, column {error.colno}") from None


def nesting_depth(text: str) -> int:
    """How deep the arrays and objects of a JSON text nest, in one linear pass and without recursion.

    Strings are blanked first (a bracket inside one is text), then the running sum of +1 per opening and -1 per
    closing bracket is taken at C speed (`accumulate` over signed bytes); its maximum is the depth.
    """
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text)).encode("ascii")
    return max(accumulate(array("b", brackets.translate(_STEPS))), default=0)


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object whose keys are each given once (RFC 8259 §4: otherwise which one counts is the reader's guess;
    a body whose `value` says 10 then 20 is refused, not recorded as 20)."""
    found = dict(pairs)
    if len(found) != len(pairs):
        seen: set[str] = set()
        twice = next(key for key, _ in pairs if key in seen or seen.add(key))
        raise MalformedBodyError(f"the key {twice!r} is given twice in one object")
    return found


def _no_constant(name: str) -> Any:
    raise MalformedBodyError(f"{name} is not a JSON number")


def _integer(literal: str) -> int | Decimal:
    return int(literal) if len(literal) <= MAX_INTEGER_LITERAL else Decimal(literal)


def _float(literal: str) -> float | Decimal:
    value = float(literal)
    if value not in (float("inf"), float("-inf")):
        return value
    try:
        return Decimal(literal)
    except InvalidOperation:
        raise MalformedBodyError(f"{literal[:40]} is not a number this API reads") from None


class EdgeParser(FlaskParser):
    """webargs' Flask parser reading the body `read_body` parsed, instead of parsing it again its own way."""

    def load_json(self, req: Any, schema: Any) -> Any:
        """The `json` location (and `json_or_form`, which asks it first): the body as `read_body` parsed it, or
        `missing` when there is none; never a parse of its own, so one set of rules reads every body."""
        return json_body()


class Blueprint(flask_smorest.Blueprint):
    """flask-smorest's Blueprint whose arguments come through `EdgeParser`: a blueprint whose operations read a JSON
    body must be one (api/acts.py's); webargs' own parser would parse the body again with Python's defaults. (The
    fuzz test sends every operation a body with a 5,000-digit number, which that parse could not read.)"""

    ARGUMENTS_PARSER = EdgeParser()
