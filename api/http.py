"""What every view shares: the application and read store of this process, the caller, and the HTTP contract
of writes (`Authorization`, `If-Match`, `Idempotency-Key`, `ETag`).

Order of checks on a write: a token (401), a competent role (403), `If-Match` present (428), then the body
(422), then the act itself (412 on a stale version, 403/409/422 from the law). Each check comes before anything
is recorded.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Callable
from http import HTTPStatus
from typing import Any

from flask import current_app, g, request
from flask_smorest import Blueprint
from werkzeug.exceptions import HTTPException

from api.errors import problem
from domain.access import IdempotentRequest
from domain.application import Acted, Tramita
from projections.store import Store

#: Endpoints anyone may read: liveness, the OpenAPI document and its offline viewer, and the audit log's public
#: commitments (signed checkpoints, the verifier key, consistency proofs: sizes and hashes, nothing of a case).
PUBLIC_ENDPOINTS = {"health.health", "api-docs.openapi_json", "docs", "docs_static", "audit.checkpoint_key",
                    "audit.latest_checkpoint", "audit.checkpoint_of_size", "audit.consistency"}
MAX_IDEMPOTENCY_KEY = 255


def tramita() -> Tramita:
    return current_app.extensions["tramita"]


def read_store() -> Store:
    return current_app.extensions["tramita.store"]


def settings() -> dict[str, Any]:
    return current_app.extensions["tramita.settings"]


class Problem(HTTPException):
    """An HTTP error that is already a problem+json response."""

    def __init__(self, status: int, detail: str, **extensions: Any) -> None:
        super().__init__(description=detail, response=problem(status, detail, **extensions))
        self.code = status


def authenticate() -> None:
    """Before every request but the public ones: the bearer token names the actor (401 otherwise)."""
    if request.method == "OPTIONS" or request.endpoint is None or request.endpoint in PUBLIC_ENDPOINTS:
        return
    scheme, _, credentials = request.headers.get("Authorization", "").partition(" ")
    token = tramita().authenticate(credentials.strip() if scheme.lower() == "bearer" else None)
    g.actor, g.token_id = token.actor, str(token.id)


def competent(act: str, *, if_match: bool) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Outermost on a write: the role must be competent for `act` (403) and, on a case, `If-Match` given (428)."""

    def decorate(view: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(view)
        def checked(*args: Any, **kwargs: Any) -> Any:
            tramita().require_may_record(g.actor, act)
            if if_match and "If-Match" not in request.headers:
                raise Problem(428, "If-Match is required: send the case's ETag (its version) so that an act "
                              "decided on an older version is not recorded", kind="precondition-required",
                              field="If-Match")
            return view(*args, **kwargs)

        return checked

    return decorate


def expected_version() -> int | None:
    """`If-Match: "7"` -> 7; `*` -> any version. Anything else matches no version of the case (412)."""
    value = request.headers.get("If-Match", "").strip()
    if value == "*":
        return None
    tag = value[1:-1] if len(value) >= 2 and value[0] == value[-1] == '"' else ""
    if not tag.isdigit():
        raise Problem(412, f'If-Match {value!r} is not an ETag of this API (a quoted version, e.g. "7")',
                      kind="stale-version", field="If-Match")
    return int(tag)


def etag(version: int) -> str:
    return f'"{version}"'


def idempotent_request(act: str) -> IdempotentRequest | None:
    """The request's `Idempotency-Key`, scoped to the token, with a fingerprint of what is asked."""
    key = request.headers.get("Idempotency-Key")
    if key is None:
        return None
    if not 1 <= len(key) <= MAX_IDEMPOTENCY_KEY or not key.isprintable():
        raise Problem(422, f"Idempotency-Key must be 1 to {MAX_IDEMPOTENCY_KEY} printable characters",
                      kind="invalid-idempotency-key", field="Idempotency-Key")
    body = request.get_json(silent=True)
    asked = json.dumps([request.method, request.path, body], sort_keys=True, separators=(",", ":"),
                       ensure_ascii=False)
    return IdempotentRequest(scope=g.token_id, key=key, fingerprint=hashlib.sha256(asked.encode()).hexdigest(),
                             act=act)


def acted_response(act: str, acted: Acted, *, status: int) -> tuple[dict[str, Any], int, dict[str, str]]:
    """The act's result: the case at the version the act left it (the same answer for a replayed retry)."""
    app = tramita()
    # The latest case comes from the aggregate cache (fast-forwarded); asking for a version replays every event.
    case = app.get_case(acted.case_id)
    if case.version != acted.version:  # a later act got in first, or a replayed retry: the act's own version
        case = app.get_case(acted.case_id, version=acted.version)
    headers = {"ETag": etag(acted.version), "Location": f"/cases/{acted.case_id}"}
    if acted.replayed:
        headers["Idempotent-Replayed"] = "true"
    body = {"act": act, "version": acted.version, "result": acted.result, "case": app.case_document(case),
            "receipt": receipt_of(acted)}
    return body, status, headers


def receipt_of(acted: Acted) -> dict[str, Any] | None:
    """The act's signed receipt (docs/audit.md), which every 2xx answer to an act carries."""
    return current_app.extensions["tramita.audit"].receipt(acted)


WRITE_PARAMETERS = [
    {"in": "header", "name": "Idempotency-Key", "required": False, "schema": {"type": "string", "maxLength": 255},
     "description": "a retry with the same key and body returns the original result and records nothing"},
]
IF_MATCH = {"in": "header", "name": "If-Match", "required": True, "schema": {"type": "string"},
            "description": 'the case\'s ETag (its version, e.g. "7"); stale -> 412, missing -> 428'}


def errors_doc(statuses: list[int], **doc: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Document the error statuses an operation gives (each a problem+json response component)."""
    responses = {str(status): HTTPStatus(status).name for status in statuses}
    return Blueprint.doc(responses=responses, **doc)


def write_doc(*, if_match: bool) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Document a write's headers and the errors every write can give."""
    parameters = WRITE_PARAMETERS + ([IF_MATCH] if if_match else [])
    statuses = [401, 403, 409, 412, 422] + ([404, 428] if if_match else [])
    return errors_doc(statuses, parameters=parameters)
