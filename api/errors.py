"""Every error the API gives, in one place: `application/problem+json` (RFC 9457).

A problem has `type`, `title`, `status` and `detail`; a refusal under the law adds `article` and the figures it
compared; a malformed request adds `errors`, field by field. Werkzeug's headers (`Allow` on 405,
`WWW-Authenticate` on 401) are kept. Nothing here records anything: an error means nothing was recorded.

`title` and `detail` are in Portuguese when the request's `Accept-Language` prefers it (api/i18n.py), English
otherwise; `type`, `article`, `field` and the keys of `errors` and `figures` never change. A refusal of the domain
is a `Sentence` (domain/errors.py): its template is given to the catalogue and the translation filled with the
same values (its terms translated too, whole numbers grouped as the language writes them); a field's message
(marshmallow's or api/fields.py's) is matched to the template it was made from and translated the same way.
"""

from __future__ import annotations

import json
import logging
from decimal import Decimal
from http import HTTPStatus
from typing import Any

from flask import Flask, Response, render_template, request
from flask_babel import format_decimal, gettext as _
from marshmallow import Schema, fields
from werkzeug.exceptions import HTTPException

from api.i18n import field_message
from domain.application import ConcurrentActError
from audit import merkle
from audit.documents import DocumentAlteredError, DocumentNotFoundError
from audit.service import NotSignedError
from audit.verify import StoreEmptyError
from domain.errors import (
    ActOutOfOrderError, AuthenticationError, CaseNotFoundError, IdempotencyKeyReusedError, IncompetentBodyError,
    InvalidActError, LegalRuleError, MunicipalityNotFoundError, RuleNotInForceError, Sentence, StaleVersionError,
    StatuteAmendmentError, StoredEventsAlteredError, StoredEventsUnreadableError, sentence,
)

PROBLEM_JSON = "application/problem+json"
TYPE_BASE = "https://tramita.ac.gov.br/problems/"
#: The most faults a malformed request's problem lists, field by field (`errors`, `detail`); the rest are counted.
MAX_FAULTS_LISTED = 100
log = logging.getLogger("tramita.api")


class ProblemSchema(Schema):
    """RFC 9457 problem details, with tramita's extensions."""

    type = fields.String(required=True, metadata={"description": "a URI naming the kind of problem"})
    title = fields.String(required=True)
    status = fields.Integer(required=True)
    detail = fields.String(required=True)
    article = fields.String(metadata={"description": "the article at fault (`art-13`), for refusals under the law"})
    figures = fields.Dict(metadata={"description": "what the rule compared: required and found"})
    errors = fields.Dict(metadata={"description": "field -> messages, for a malformed request"})
    field = fields.String(metadata={"description": "the field at fault"})
    competent = fields.List(fields.String(), metadata={"description": "the bodies competent for the act"})
    limit = fields.Integer(metadata={"description": "413: the most bytes of body this server reads"})


def problem_document(status: int, detail: str, *, kind: str | None = None, **extensions: Any) -> dict[str, Any]:
    """The problem's members (`kind` names the problem type; by default the status phrase)."""
    phrase = HTTPStatus(status).phrase
    body = {"type": TYPE_BASE + (kind or phrase.lower().replace(" ", "-").replace("'", "")), "title": _(phrase),
            "status": status, "detail": detail}
    body.update({k: v for k, v in extensions.items() if v is not None})
    return body


def problem(status: int, detail: str, *, kind: str | None = None, headers: dict[str, str] | None = None,
            **extensions: Any) -> Response:
    """A problem+json response (`kind` names the problem type; by default the status phrase)."""
    body = problem_document(status, detail, kind=kind, **extensions)
    response = Response(json.dumps(body, ensure_ascii=False, default=_plain), status=status, mimetype=PROBLEM_JSON)
    for name, value in (headers or {}).items():
        response.headers[name] = value
    return response


class Problem(HTTPException):
    """An HTTP error that is already a problem+json response (raised where the request is read)."""

    def __init__(self, status: int, detail: str, **extensions: Any) -> None:
        super().__init__(description=detail, response=problem(status, detail, **extensions))
        self.code = status


def _plain(value: Any) -> Any:
    if isinstance(value, Decimal):
        return str(value)
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return str(value)


def http_exception_problem(error: HTTPException) -> Response:
    """Werkzeug's and flask-smorest's HTTP errors (404, 405, 422 from parsing, ...), with their headers kept."""
    if error.response is not None and error.response.mimetype == PROBLEM_JSON:
        return error.response
    status = error.code or 500
    data = getattr(error, "data", None) or {}
    errors = data.get("errors") or data.get("messages")
    detail = data.get("message") or error.description or HTTPStatus(status).phrase
    detail = _known(detail) if detail in (error.description, HTTPStatus(status).phrase) else detail
    field = None
    if errors and status == 422:
        errors, unlisted = _capped(errors, MAX_FAULTS_LISTED)
        errors = _encodable(_field_messages(errors))
        detail = _("the request is malformed: %(fields)s", fields=_summary(errors))
        if unlisted:
            detail += " " + _("(and %(count)s more faults, not listed)", count=format_decimal(unlisted))
        field = _first_field(errors)
    headers = {name: value for name, value in error.get_headers() if name.lower() != "content-type"}
    headers.update(data.get("headers") or {})
    return problem(status, detail, errors=errors or None, field=field, headers=headers)


def _capped(errors: dict[str, Any], room: int) -> tuple[dict[str, Any], int]:
    """The first `room` faults of marshmallow's nested messages (a field's list of messages is one fault), and how
    many more there were: a body of many bad items is answered in a few lines, not one per item."""
    kept: dict[str, Any] = {}
    unlisted = 0

    def walk(level: dict[str, Any], into: dict[str, Any]) -> None:
        nonlocal room, unlisted
        for key, value in level.items():
            if isinstance(value, dict):
                walk(value, into.setdefault(key, {}))
                if not into[key]:
                    del into[key]
            elif room > 0:
                into[key], room = value, room - 1
            else:
                unlisted += 1

    walk(errors, kept)
    return kept, unlisted


def _field_messages(value: Any) -> Any:
    """marshmallow's nested messages, each in the request's language."""
    if isinstance(value, dict):
        return {k: _field_messages(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_field_messages(v) for v in value]
    return field_message(value) if isinstance(value, str) else value


def say(message: str | Sentence) -> str:
    """A sentence of the domain in the request's language: its template and terms through the catalogue, its
    whole numbers as the language groups them (`1,000`, `1.000`), codes and figures as they are."""
    return sentence(message).render(_known, format_decimal)


def _encodable(value: Any) -> Any:
    """The schemas' messages with each lone surrogate of a refused name or value written `\\udXXX` (UTF-8 cannot
    encode one, so the answer could not be sent); the messages are the field names and values the request sent."""
    if isinstance(value, dict):
        return {_encodable(k): _encodable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_encodable(v) for v in value]
    if isinstance(value, str):
        return value.encode("utf-8", "backslashreplace").decode("utf-8")
    return value


def _first_field(errors: dict[str, Any]) -> str | None:
    """`signatures.0.title` from `{"json": {"signatures": {"0": {"title": [...]}}}}`: the first field at fault,
    without its location (json, query, headers); `body` when the fault is the whole JSON body (`_schema`: not an
    object), None when it is the whole of another location."""
    path: list[str] = []
    location, value = next(iter(errors.items()), (None, None))
    while isinstance(value, dict) and value:
        key, value = next(iter(value.items()))
        path.append(str(key))
    path = [part for part in path if part != "_schema"]
    return ".".join(path) or ("body" if location == "json" else None)


def _summary(errors: dict[str, Any], prefix: str = "") -> str:
    """`json.occurred_on: Not a valid date.; json.items.0: ...` from marshmallow's nested messages."""
    parts = []
    for key, value in errors.items():
        path = f"{prefix}.{key}" if prefix else str(key)
        if isinstance(value, dict):
            parts.append(_summary(value, path))
        else:
            parts.append(f"{path}: {' '.join(str(m) for m in (value if isinstance(value, list) else [value]))}")
    return "; ".join(parts)


def _known(sentence: str) -> str:
    """A fixed sentence in the request's language when the catalogue has it (unchanged otherwise; gettext of ""
    would be the catalogue's header)."""
    return _(sentence) if sentence else sentence


def _legal(status: int, kind: str) -> Any:
    def handle(error: LegalRuleError) -> Response:
        figures = {k: v for k, v in error.figures.items() if k != "competent"}
        return problem(status, f"{error.article}: {say(error.sentence)}", kind=kind, article=error.article,
                       figures=figures or None,
                       competent=error.figures.get("competent"))
    return handle


def register(app: Flask) -> None:
    """Map the domain's errors onto HTTP, once for the whole API."""
    app.register_error_handler(IncompetentBodyError, _legal(403, "incompetent-body"))
    app.register_error_handler(ActOutOfOrderError, _legal(409, "act-out-of-order"))
    app.register_error_handler(RuleNotInForceError, _legal(422, "rule-not-in-force"))
    app.register_error_handler(LegalRuleError, _legal(422, "refused-under-the-law"))
    app.register_error_handler(StatuteAmendmentError, lambda e: problem(
        422, f"{e.field}: {say(e.sentence)}", kind="statute-amendment-refused", field=e.field,
        errors={key: [say(m) for m in messages] for key, messages in e.sentences.items()}))
    app.register_error_handler(InvalidActError, lambda e: problem(
        422, f"{e.field}: {say(e.sentence)}", kind="invalid-act", field=e.field, errors={e.field: [say(e.sentence)]},
        article=getattr(e, "article", None)))
    app.register_error_handler(CaseNotFoundError, lambda e: problem(
        404, _(e.template, **e.values), kind="case-not-found"))
    app.register_error_handler(MunicipalityNotFoundError, lambda e: problem(
        422, say(e.sentence), kind="municipality-not-found"))
    app.register_error_handler(StaleVersionError, lambda e: problem(
        412, _("If-Match: expected version %(expected)s, the case is at version %(actual)s; read the case again "
               "and decide on its current version", expected=e.expected, actual=e.actual), kind="stale-version",
        field="If-Match"))
    app.register_error_handler(AuthenticationError, lambda e: problem(
        401, say(e.sentence), kind="unauthenticated", headers={"WWW-Authenticate": 'Bearer realm="tramita"'}))
    app.register_error_handler(IdempotencyKeyReusedError, lambda e: problem(
        422, say(e.sentence), kind="idempotency-key-reused", field="Idempotency-Key"))
    app.register_error_handler(ConcurrentActError, lambda e: problem(409, say(e.sentence), kind="concurrent-act"))
    app.register_error_handler(NotSignedError, lambda e: problem(404, _known(str(e)), kind="not-signed"))
    app.register_error_handler(StoreEmptyError, lambda e: problem(404, _known(str(e)), kind="store-empty"))
    app.register_error_handler(DocumentNotFoundError, lambda e: problem(
        404, _("no document %(sha256)s cited by an act or sent with this token", sha256=str(e)),
        kind="document-not-found", field="sha256"))
    app.register_error_handler(DocumentAlteredError, _altered_document)
    app.register_error_handler(merkle.ProofError, _damaged_tree)
    app.register_error_handler(StoredEventsUnreadableError, _unreadable_events)
    app.register_error_handler(StoredEventsAlteredError, _altered_events)
    app.register_error_handler(HTTPException, http_exception_problem)
    app.register_error_handler(Exception, _unexpected)


def _altered_document(error: DocumentAlteredError) -> Response:
    """A stored document whose bytes no longer give its SHA-256 (or its size or type): never served; logged, and
    raised as a system alert by the store's service (audit/documents.py)."""
    log.error("document altered: %s", error)
    return problem(500, _("document altered: %(sha256)s: %(why)s; the stored file is not served, and an alert was "
                          "recorded", sha256=error.sha256, why=error.why), kind="document-altered", field="sha256")


def _unreadable_events(error: StoredEventsUnreadableError) -> Response:
    """A case (or a municipality an act reads) whose stored events an edit of the store left unreadable: named,
    so an auditor knows the store and not the request is at fault, and logged."""
    log.error("stored events unreadable: %s", error)
    return problem(500, say(error.sentence), kind="stored-events-unreadable")


def _altered_events(error: StoredEventsAlteredError) -> Response | tuple[str, int]:
    """An aggregate the act (or read) needs is not stored as its chain and the audit log say: refused 409 naming
    the aggregate and the event, nothing recorded; the application has raised the tamper alarm (a system alert)
    before the refusal reached here, and it is logged. A page (the case file) says the same as a page: no state
    the log contradicts is shown."""
    log.error("stored events altered: %s", error)
    if request.blueprint == "pages":
        return render_template("error.html", message=say(error.sentence), status=409), 409
    return problem(409, say(error.sentence), kind="stored-events-altered")


def _damaged_tree(error: merkle.ProofError) -> Response:
    """A proof the stored audit tree cannot give (a node deleted or cut, for an export's proofs): the answer is not
    served as if intact; the verdict (`GET /cases/{id}/verify`, `tramita verify`) names what was altered."""
    log.error("audit tree damaged: %s", error)
    return problem(500, _("the stored audit tree is damaged (%(why)s): the proofs cannot be given, so nothing is "
                          "served as if intact; GET /cases/{id}/verify and `tramita verify` report what was "
                          "altered", why=str(error)), kind="audit-tree-damaged")


def _unexpected(error: Exception) -> Response:
    """Anything else: logged with its traceback, answered 500 without internals."""
    log.exception("unexpected error")
    return problem(500, _("an unexpected error occurred and was logged; an act is saved whole or not at all, so "
                          "read the case before retrying (or retry with the same Idempotency-Key)"),
                   kind="internal-error")
