"""What every view shares: the application and read store of this process, the caller, and the HTTP contract
of writes (`Authorization`, `If-Match`, `Idempotency-Key`, `ETag`).

Order of checks on a write: a token (401), the body as bytes (413 too large, 415 not JSON, 400 not parseable or
too deep: `api/body.py`), a competent role (403), `If-Match` present (428), then the body's fields (422), then
the act itself (`If-Match` not an ETag 400, stale 412, 403/409/422 from the law). Each check comes before
anything is recorded. A retry with an `Idempotency-Key` already answered is answered from its receipt first.
"""

from __future__ import annotations

import functools
import hashlib
import ipaddress
import json
import math
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from http import HTTPStatus
from typing import Any

from flask import Response, current_app, g, request
from flask_babel import gettext as _
from flask_smorest import Blueprint
from marshmallow import missing

from api.body import json_body
from api.errors import Problem
from domain.access import IdempotentRequest
from domain.application import Acted, Tramita
from domain.errors import AuthenticationError
from infrastructure.store import Store

#: Endpoints anyone may read: liveness, the OpenAPI document and its offline viewer, and the audit log's public
#: commitments (signed checkpoints, the verifier key, consistency proofs: sizes and hashes, nothing of a case).
PUBLIC_ENDPOINTS = {"health.health", "api-docs.openapi_json", "docs", "docs_static", "docs_init",
                    "audit.checkpoint_key", "audit.latest_checkpoint", "audit.checkpoint_of_size", "audit.consistency",
                    "subscriptions.feed"}  # a calendar feed: its secret address is its credential (docs/api.md)
MAX_IDEMPOTENCY_KEY = 255


def tramita() -> Tramita:
    return current_app.extensions["tramita"]


def read_store() -> Store:
    return current_app.extensions["tramita.store"]


def settings() -> dict[str, Any]:
    return current_app.extensions["tramita.settings"]


#: Reads a signed-in reader of the pages follows as links (no `Authorization` header): the session's token is
#: taken as their bearer, for GET only; every other endpoint of the API reads the header alone.
SESSION_READS = {"cases.export_case", "cases.get_case", "cases.case_events", "cases.verify_case",
                 "dossier.case_dossier", "documents.download"}


def authenticate() -> None:
    """Before every request but the public ones: the bearer token names the actor (401 otherwise). The pages
    (blueprint `pages`) check their own session (api/pages/views.py); the reads in SESSION_READS take the
    session's token when no `Authorization` header is sent. An address that sent too many wrong tokens within a
    minute has its tokens refused (429, `TokenFailures`) before they are even checked; a right token never counts."""
    if request.method == "OPTIONS" or request.endpoint is None or request.endpoint in PUBLIC_ENDPOINTS \
            or request.blueprint == "pages":
        return
    scheme, _sep, credentials = request.headers.get("Authorization", "").partition(" ")
    bearer = credentials.strip() if scheme.lower() == "bearer" else None
    guessed = bool(bearer)  # a token sent and refused is a guess; none, or a session's, guesses nothing
    if bearer is None and not scheme and request.method == "GET" and request.endpoint in SESSION_READS:
        session_bearer = current_app.extensions.get("tramita.session_bearer")
        bearer = session_bearer() if session_bearer else None
    if guessed:  # without a token, 401: nothing guessed
        wait = token_guess_wait()
        if wait is not None:
            raise Problem(429, _("Too many wrong tokens from this address: try again in %(seconds)s seconds",
                                 seconds=wait), kind="too-many-token-failures", field="Authorization",
                          headers={"Retry-After": str(wait)})
    try:
        actor, token_id = tramita().actor_for(bearer)
    except AuthenticationError:
        if guessed:
            token_guessed_wrong()
        raise
    g.actor, g.token_id = actor, str(token_id)


def token_guess_wait() -> int | None:
    """Seconds the request's client address must wait before a token it sends is checked (too many wrong ones
    within a minute: `TokenFailures`); None when it may send one now. Shared by the API's bearer tokens and the
    pages' sign-in form."""
    address = counted_address(request.remote_addr)
    return None if address is None else current_app.extensions["tramita.token_failures"].wait(address)


def token_guessed_wrong() -> None:
    """Count one wrong token from the request's client address (one table per worker's app, api/app.py)."""
    address = counted_address(request.remote_addr)
    if address is not None:
        current_app.extensions["tramita.token_failures"].failed(address)


def counted_address(remote: str | None) -> str | None:
    """The client address whose wrong tokens are counted: the connection's, or behind the deployment's own proxies
    (`TRAMITA_TRUSTED_PROXIES`, Werkzeug's `ProxyFix`) the one the nearest proxy appended to `X-Forwarded-For`,
    never a value the client wrote. None for loopback or no IP address (a Unix socket): a proxy in front not
    declared, or a person on the server itself, which every client would share; counting it would let one client's
    wrong tokens lock every other out (nginx limits each client's requests itself, `limit_req`)."""
    try:
        address = ipaddress.ip_address(remote or "")
    except ValueError:
        return None
    mapped = address.ipv4_mapped if isinstance(address, ipaddress.IPv6Address) else None
    return None if (mapped or address).is_loopback else str(address)


#: Seconds of the window in which an address's failed token checks are counted.
FAILURE_WINDOW = 60.0
#: Addresses one worker keeps count of at most; beyond, the one counted longest ago is forgotten first.
MAX_COUNTED_ADDRESSES = 10_000


class TokenFailures:
    """Failed token checks per client address, at most `per_minute` in a window of FAILURE_WINDOW seconds from an
    address's first failure; past that the address is refused (429) until the window ends, so that guessing tokens
    takes more than a worker's time. In memory, per worker, at most MAX_COUNTED_ADDRESSES addresses (the oldest
    window forgotten first). `clock`: seconds, monotonic (tests pass their own)."""

    def __init__(self, per_minute: int, *, clock: Callable[[], float] = time.monotonic,
                 size: int = MAX_COUNTED_ADDRESSES) -> None:
        self.per_minute, self.clock, self.size = per_minute, clock, size
        self.counted: OrderedDict[str, tuple[float, int]] = OrderedDict()  # address -> (window's start, failures)
        self.lock = threading.Lock()

    def wait(self, address: str) -> int | None:
        """Whole seconds until `address` may try a token again; None when it may now."""
        with self.lock:
            started, count = self.counted.get(address, (0.0, 0))
            left = started + FAILURE_WINDOW - self.clock()
            if left <= 0:
                self.counted.pop(address, None)
                return None
            return max(1, math.ceil(left)) if count >= self.per_minute else None

    def failed(self, address: str) -> None:
        """One more failed token check from `address`."""
        with self.lock:
            now = self.clock()
            started, count = self.counted.pop(address, (now, 0))
            if started + FAILURE_WINDOW <= now:
                started, count = now, 0
            self.counted[address] = (started, count + 1)  # last: the address that failed last is forgotten last
            while len(self.counted) > self.size:
                self.counted.popitem(last=False)


def competent(act: str, *, if_match: bool) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Outermost on a write: the role must be competent for `act` (403) and, on a case, `If-Match` given (428)."""

    def decorate(view: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(view)
        def checked(*args: Any, **kwargs: Any) -> Any:
            body = json_body() if not if_match and act == "petition-filed" else None  # the kind a petition names
            tramita().require_may_record(g.actor, act, case_ref=kwargs.get("case_ref"),
                                         kind=body.get("kind") if isinstance(body, dict) else None)
            if if_match and "If-Match" not in request.headers:
                raise Problem(428, _("If-Match is required: send the case's ETag (its version) so that an act "
                                     "decided on an older version is not recorded"), kind="precondition-required",
                              field="If-Match")
            return view(*args, **kwargs)

        return checked

    return decorate


#: `If-Match` as this API reads it: `*`, or one quoted version in ASCII digits (`"7"`), of bounded length.
IF_MATCH_PATTERN = r'^(\*|"[0-9]{1,18}")$'
_IF_MATCH = re.compile(r'\*|"[0-9]{1,18}"')


def expected_version() -> int | None:
    """`If-Match: "7"` -> 7; `*` -> any version. Anything else is not an ETag of this API: 400 naming If-Match.

    ASCII digits only (`str.isdigit()` takes `²` and the digits of other scripts, which `int()` then refuses or
    reads), and at most 18 of them (a version fits a 64-bit integer; `int()` refuses 4,300 digits and more)."""
    value = request.headers.get("If-Match", "").strip()
    if not _IF_MATCH.fullmatch(value):
        shown = value if len(value) <= 40 else value[:40] + "..."
        raise Problem(400, _('If-Match %(shown)r is not an ETag of this API: send "*" or the case\'s ETag, a '
                             'quoted version such as "7"', shown=shown), kind="malformed-if-match", field="If-Match",
                      errors={"headers": {"If-Match": ['"*" or a quoted version, e.g. "7"']}})
    return None if value == "*" else int(value[1:-1])


def etag(version: int) -> str:
    return f'"{version}"'


def idempotent_request(act: str) -> IdempotentRequest | None:
    """The request's `Idempotency-Key`, scoped to the token, with a fingerprint of what is asked."""
    key = request.headers.get("Idempotency-Key")
    if key is None:
        return None
    if not 1 <= len(key) <= MAX_IDEMPOTENCY_KEY or not key.isprintable():
        raise Problem(422, _("Idempotency-Key must be 1 to %(most)s printable characters", most=MAX_IDEMPOTENCY_KEY),
                      kind="invalid-idempotency-key", field="Idempotency-Key")
    body = json_body()
    asked = json.dumps([request.method, request.path, None if body is missing else body], sort_keys=True,
                       separators=(",", ":"), ensure_ascii=False, default=str)
    return IdempotentRequest(scope=g.token_id, key=key, fingerprint=hashlib.sha256(asked.encode()).hexdigest(),
                             act=act)


def replay_headers(acted: Acted, **headers: str) -> dict[str, str]:
    """`headers`, and `Idempotent-Replayed: true` when the act answered is a retry's, replayed from its receipt."""
    return {**headers, "Idempotent-Replayed": "true"} if acted.replayed else dict(headers)


def acted_response(act: str, acted: Acted, *, status: int) -> Response:
    """The act's result: what it decided (its events on the case), the case's new version and ETag; the case itself
    is read with `GET /cases/{id}` (the same answer for a replayed retry)."""
    headers = replay_headers(acted, ETag=etag(acted.version), Location=f"/cases/{acted.case_id}")
    body = {"act": act, "case_id": str(acted.case_id), "number": acted.number, "version": acted.version,
            "result": acted.result, "events": tramita().act_events(acted),
            "receipt": receipt_of(acted)}
    # The body is already what `ActedSchema` documents (plain data, dumped as is by the app's JSON provider):
    # answered directly rather than walked field by field through the schema again on every act.
    response = current_app.json.response(body)
    response.status_code = status
    response.headers.update(headers)
    return response


def receipt_of(acted: Acted) -> dict[str, Any] | None:
    """The act's signed receipt (docs/audit.md), which every 2xx answer to an act carries."""
    return current_app.extensions["tramita.audit"].receipt(acted)


WRITE_PARAMETERS = [
    {"in": "header", "name": "Idempotency-Key", "required": False, "schema": {"type": "string", "maxLength": 255},
     "description": "a retry with the same key and body returns the original result and records nothing"},
]
IF_MATCH = {"in": "header", "name": "If-Match", "required": True,
            "schema": {"type": "string", "pattern": IF_MATCH_PATTERN, "maxLength": 20},
            "description": 'the case\'s ETag (its version, e.g. "7") or "*"; stale -> 412, missing -> 428, '
                           'anything else -> 400'}


def errors_doc(statuses: list[int], **doc: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Document the error statuses an operation gives (each a problem+json response component); one that takes
    a token (401) may also be 429, to an address that sent too many wrong ones (`TokenFailures`)."""
    statuses = sorted({*statuses, *([429] if 401 in statuses else [])})
    responses = {str(status): HTTPStatus(status).name for status in statuses}
    return Blueprint.doc(responses=responses, **doc)


def write_doc(*, if_match: bool, path: bool) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Document a write's headers and the errors it can give: a body that is not JSON (400) or too large (413) or
    of another type (415), a token (401), a role (403), an unknown path (404, when it has a path parameter), a
    concurrent act (409), the body's fields or the law (422); with `If-Match`, a stale (412) or missing (428) one."""
    parameters = WRITE_PARAMETERS + ([IF_MATCH] if if_match else [])
    statuses = [400, 401, 403, *([404] if path else []), 409, *([412] if if_match else []), 413, 415, 422,
                *([428] if if_match else [])]
    return errors_doc(statuses, parameters=parameters)
