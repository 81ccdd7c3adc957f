"""The clerk's desk: a form for every act a body may record on a case, and the petition that files a new case.

`GET /processos/<número>/atos/<act>` draws the act's form from its schema (api/pages/form_fields.py), `POST`
records it; `GET /processos/novo` offers the kinds of case, `?tipo=<kind>` draws the petition's form for it, and
`POST /processos/novo` files it. The views only translate: the form's text is read into the JSON the API takes,
loaded through the same schema and recorded by the same call as the JSON API (`record_act`, `file_petition` in
api/acts.py), as the session's actor.

Every form carries the session's CSRF token (checked on every POST, 403 otherwise), a one-time key (`chave`, the
`Idempotency-Key` of the request: a second submit of the same form is answered from the first one's receipt and
records nothing) and, on a case, the version it was drawn on (`versao`, the expected version: a form drawn on an
older version is refused 412 showing the events recorded since, and drawn again with what the clerk entered).
A refusal is shown beside the field it names, or above the form with its article. Read-only roles, and bodies the
statute does not name for the act, get 403 and no form.
"""

from __future__ import annotations

import hashlib
import json
import secrets
from typing import Any

from flask import current_app, g, redirect, render_template, request, url_for
from flask_babel import gettext as _
from marshmallow import Schema, ValidationError
from werkzeug.datastructures import MultiDict
from werkzeug.wrappers import Response

from api.acts import ACTS, Act, file_petition, record_act
from api.errors import say
from api.http import read_store, tramita
from api.pages import format as fmt, session
from api.pages.form_choices import labelled, offered, with_names
from api.pages.form_fields import FILES, KEY, VERSION, FormError, flattened, read_form, widgets
from api.pages.views import PageError, pages
from api.schemas import PetitionSchema
from audit.document_limits import QuotaExceededError, body_of
from audit.documents import DOCUMENT_TYPES, media_type_of
from domain.access import COMPETENCE_ENTRIES, READ_ONLY_ROLES, IdempotentRequest
from domain.application import ConcurrentActError
from domain.acts import Actor
from domain.case.kinds import KINDS
from domain.errors import (
    ActOutOfOrderError, IdempotencyKeyReusedError, IncompetentBodyError, InvalidActError, LegalRuleError,
    StaleVersionError,
)
from domain.lifecycle import lifecycle_of
from projections import queries

ACT_BY_NAME = {act.name: act for act in ACTS}
#: The petition's fields each kind of case fills (the rest of PetitionSchema does not apply to it), after the
#: domain's opening (domain/case/opening.py): territories, areas, the voters' signatures, the Art. 4 documents.
PETITION_FIELDS = {
    "creation": ("municipalities", "areas", "proposed_name", "signatures", "documents"),
    "incorporation": ("municipalities", "receiving", "signatures", "documents"),
    "fusion": ("municipalities", "proposed_name", "signatures", "documents"),
    "dismemberment": ("municipalities", "receiving", "areas", "signatures", "documents"),
    "district_creation": ("municipalities", "district"),
    "district_suppression": ("municipalities", "district"),
    "extinction": ("municipalities",),
}
PETITION = "petition-filed"
#: The field of a form each article's refusal concerns, where the domain's refusal names no field: it is shown
#: beside that field when the form has it (Art. 8: the voters' signatures; Art. 9: the Art. 4 documents).
ARTICLE_FIELDS = {"art-8": "signatures", "art-8-par-unico": "signatures", "art-9": "documents"}
#: The longest one-time key a form may send (the API's Idempotency-Key takes 255 characters).
MAX_KEY = 200


def form_act(statute_act: str) -> str | None:
    """The act's form for a step of the lifecycle (`district-law-enacted` is recorded as `law-enacted`)."""
    if statute_act in ACT_BY_NAME:
        return statute_act
    return next((name for name, entries in COMPETENCE_ENTRIES.items() if name in ACT_BY_NAME
                 and any(entry == statute_act for _table, entry in entries)), None)


def recorded_label(case: dict[str, Any], act: str | None) -> str | None:
    """The words of an act just recorded (`?registrado=`), as the case page names its acts; None for no act."""
    if act not in ACT_BY_NAME and act != PETITION:
        return None
    catalogue = tramita().statute.in_force("lifecycle.acts", tramita().today()).value
    by_act, _by_event = fmt.act_labels(catalogue, case["kind"])
    return by_act.get(act, act)


def kinds_filed_by(actor: Actor) -> list[str]:
    """The kinds of case the actor's body may petition for today: the competent bodies of each kind's opening act
    (the Mesa, the Governor, a Deputy for a municipality's; a Mayor or Council for a district's)."""
    app = tramita()
    today = app.today()
    competent = app.statute.in_force("competence.act", today).value
    found = []
    for kind in KINDS:
        try:
            opening = lifecycle_of(app.statute, kind, today).opening.act
        except LegalRuleError:
            continue
        if actor.role in competent.get(opening, ()):
            found.append(kind)
    return found


def may_file() -> bool:
    """May the signed-in body file a petition (the link to /processos/novo)?"""
    if g.actor is None or g.actor.role in READ_ONLY_ROLES:
        return False
    try:
        tramita().require_may_record(g.actor, PETITION)
    except IncompetentBodyError:
        return False
    return True


pages.add_app_template_global(form_act, "form_act")
pages.add_app_template_global(may_file, "may_file")
pages.add_app_template_global(recorded_label, "recorded_label")


def forbidden_message() -> str:
    return _("This form has expired or did not come from this site: open the page and try again.")


def guard(act: str, *, case_ref: str | None = None, kind: str | None = None) -> None:
    """403 with no form: a read-only role, or a body the statute does not name for `act` (the API's check)."""
    if g.actor.role in READ_ONLY_ROLES:
        raise PageError(403, _("Your role reads the cases and records no act."))
    try:
        tramita().require_may_record(g.actor, act, case_ref=case_ref, kind=kind)
    except IncompetentBodyError as refused:
        raise PageError(403, f"{fmt.article(refused.article)}: {say(refused.sentence)}") from None


def municipality_options() -> list[dict[str, str]]:
    """The registry's municipalities to choose from: each by name, with its IBGE code (or words saying it has none
    yet) beside it."""
    return [{"code": m["code"], "name": m["name"], "code_shown": fmt.code(m["code"])}
            for m in queries.municipalities(read_store())]


def inputs(schema: Schema, only: tuple[str, ...] | None, choices: dict[str, list[str]],
           options: list[dict[str, str]]) -> list[dict[str, Any]]:
    """The form's inputs: the schema's fields, those taking a key offered as choices in words."""
    return labelled(widgets(schema, only), choices, {m["code"]: m["name"] for m in options})


def drawn(found: list[dict[str, Any]], form: MultiDict, errors: dict[str, list[str]]) -> list[dict[str, Any]]:
    """The form's inputs, each with what the clerk entered and the refusals that name it."""
    for entry in found:
        name = entry["name"]
        entry["value"] = form.get(name, "")
        entry["selected"] = form.getlist(name)
        entry["checked"] = name in form
        entry["values"] = {c["value"]: form.get(f"{name}.{c['value']}", "") for c in entry["choices"]}
        entry["errors"] = errors.get(name, [])
    return found


def placed(shown: dict[str, Any], fields: list[dict[str, Any]]) -> dict[str, Any]:
    """The refusals naming no input of the form, to show above it."""
    names = {f["name"] for f in fields} | {FILES, "attachments"}
    errors = shown.get("errors", {})
    shown["elsewhere"] = [m for key, messages in errors.items() if key not in names for m in messages]
    shown["refused_fields"] = [{"name": f["name"], "label": f["label"]} for f in fields if errors.get(f["name"])]
    return shown


def today_shown() -> str:
    return fmt.day(tramita().today())


def new_key() -> str:
    return secrets.token_urlsafe(24)


def idempotent(act: str, body: dict[str, Any]) -> IdempotentRequest | None:
    """The form's one-time key as the request's Idempotency-Key (scoped to the session's token), with a
    fingerprint of what the form asks; None when the form sends none (a client of its own)."""
    key = request.form.get(KEY, "")
    if not key:
        return None
    if len(key) > MAX_KEY or not key.isprintable():
        raise PageError(400, forbidden_message())
    asked = json.dumps(["POST", request.path, body], sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                       default=str)
    return IdempotentRequest(scope=str(g.token_id), key=f"formulario:{key}",
                             fingerprint=hashlib.sha256(asked.encode()).hexdigest(), act=act)


def uploaded() -> list[dict[str, str]]:
    """The files of the form, each stored as `POST /documents` stores one (its checks, its quota), as the
    attachments the act cites by SHA-256 and file name; FormError naming the files' field otherwise."""
    files = [f for f in request.files.getlist(FILES) if f and f.filename]
    if not files:
        return []
    limit = current_app.config["TRAMITA_MAX_DOCUMENT_BYTES"]
    tramita().require_may_upload(g.actor)
    cited = []
    for file in files:
        content = file.read(limit + 1)
        if not content:
            raise FormError({FILES: [_("%(file)s is empty.", file=file.filename)]})
        if len(content) > limit:
            raise FormError({FILES: [_("%(file)s has more than %(limit)s bytes.", file=file.filename,
                                       limit=limit)]})
        found = media_type_of(content)
        if found not in DOCUMENT_TYPES:
            raise FormError({FILES: [_("%(file)s is not a PDF, PNG or JPEG file.", file=file.filename)]})
        try:
            document, _new = current_app.extensions["tramita.documents"].upload(
                content, found, str(g.token_id), body=body_of(g.actor),
                quota=current_app.config["TRAMITA_DOCUMENT_QUOTA"])
        except QuotaExceededError as over:
            raise FormError({FILES: [_("%(file)s is over this body's document quota (%(quota)s).",
                                       file=file.filename, quota=over.quota)]}) from None
        cited.append({"sha256": document.sha256, "name": file.filename[:200]})
    return cited


def events_since(number: str, version: int, kind: str) -> list[dict[str, str]]:
    """The events recorded on the case after `version`: what moved it since the form was drawn."""
    app = tramita()
    catalogue = app.statute.in_force("lifecycle.acts", app.today()).value
    _by_act, by_event = fmt.act_labels(catalogue, kind)
    return [{"sequence": e["sequence"], "label": fmt.event_label(by_event, e["type"]), "day": fmt.day(e["occurred_on"]),
             "who": fmt.role((e.get("actor") or {}).get("role")), "recorded": fmt.moment(e["recorded_at"])}
            for e in app.timeline(number) if e["sequence"] > version]


def form_version() -> int | None:
    raw = request.form.get(VERSION, "").strip()
    if not raw:
        return None
    if not raw.isascii() or not raw.isdigit() or len(raw) > 18:
        raise PageError(400, forbidden_message())
    return int(raw)


def submitted(act: str, schema: Schema, found: list[dict[str, Any]], fixed: dict[str, Any],
              record: Any) -> tuple[Any, dict[str, Any]]:
    """Read, load and record a form; (the act recorded, {}) or (None, what to show: status, errors, refusal,
    and for a stale form the case's version and the events since)."""
    portuguese = fmt.portuguese()
    try:
        body = {**read_form(schema, found, request.form, portuguese), **fixed}
        attachments = uploaded()
        if attachments:
            body["attachments"] = attachments
        data = schema.load(body)
        return record(data, idempotent(act, body)), {}
    except FormError as refused:
        return None, {"status": 422, "errors": refused.errors}
    except ValidationError as refused:
        messages = refused.messages if isinstance(refused.messages, dict) else {"_schema": refused.messages}
        return None, {"status": 422, "errors": {k: flattened(v) for k, v in messages.items()}}
    except StaleVersionError as stale:
        return None, {"status": 412, "stale": stale}
    except InvalidActError as refused:
        field = refused.field.split(".")[0].split("[")[0]
        message = say(refused.sentence)
        if refused.article:
            message = f"{fmt.article(refused.article)}: {message}"
        return None, {"status": 422, "errors": {field: [message]}}
    except LegalRuleError as refused:
        status = 403 if isinstance(refused, IncompetentBodyError) else 409 if isinstance(
            refused, ActOutOfOrderError) else 422
        beside = ARTICLE_FIELDS.get(refused.article)
        if status == 422 and any(entry["name"] == beside for entry in found):
            return None, {"status": 422, "errors": {beside: [f"{fmt.article(refused.article)}: "
                                                             f"{say(refused.sentence)}"]}}
        return None, {"status": status, "refusal": f"{fmt.article(refused.article)}: {say(refused.sentence)}",
                      "article": refused.article}
    except (IdempotencyKeyReusedError, ConcurrentActError) as refused:
        return None, {"status": 409 if isinstance(refused, ConcurrentActError) else 422,
                      "refusal": say(refused.sentence)}


def limit_body() -> None:
    """A form may carry its files: the request may be as large as a body and a document together."""
    config = current_app.config
    request.max_content_length = config["TRAMITA_MAX_BODY_BYTES"] + config["TRAMITA_MAX_DOCUMENT_BYTES"] + 1


@pages.route("/processos/<number>/atos/<act>", methods=["GET", "POST"], endpoint="act_form")
def act_form(number: str, act: str) -> Response | tuple[str, int] | str:
    found: Act | None = ACT_BY_NAME.get(act)
    if found is None:
        raise PageError(404, _("There is no form for %(act)s.", act=act))
    app = tramita()
    case, version = app.case_view(number)  # CaseNotFoundError: the pages' 404
    guard(act, case_ref=case["number"])
    form, shown, key = MultiDict({"occurred_on": today_shown()}), {"status": 200}, new_key()
    options = municipality_options()
    fields = inputs(found.schema(), None, offered(act, case, g.actor, app.statute, app.today()), options)
    if request.method == "POST":
        limit_body()
        if not session.csrf_holds():
            raise PageError(403, forbidden_message())
        expected = form_version()
        acted, shown = submitted(act, found.schema(), fields, {}, lambda data, asked: record_act(
            found, case["number"], data, asked, expected))
        if acted is not None:
            return redirect(url_for("pages.case", number=acted.number, registrado=act) + "#ato-registrado", 303)
        form, key = request.form, request.form.get(KEY) or key
        shown = with_names(shown, {m["code"]: m["name"] for m in options})
        case, version = app.case_view(number)
        if "stale" in shown:
            shown["since"] = events_since(case["number"], expected or 0, case["kind"])
            key = new_key()  # nothing was recorded; the form drawn again is a new one
    catalogue = app.statute.in_force("lifecycle.acts", app.today()).value
    by_act, _by_event = fmt.act_labels(catalogue, case["kind"])
    fields = drawn(fields, form, shown.get("errors", {}))
    page = render_template("act_form.html", case=case, act=act, title=by_act.get(act, act),
                           article=next((n["article"] for n in case.get("next_acts", []) if form_act(n["act"]) == act),
                                        None),
                           fields=fields, version=version, key=key, shown=placed(shown, fields),
                           options=options, files=FILES,
                           attaches="attachments" in found.schema().fields,
                           action=url_for("pages.act_form", number=case["number"], act=act))
    return page, shown["status"]


@pages.route("/processos/novo", methods=["GET", "POST"], endpoint="new_case")
def new_case() -> Response | tuple[str, int] | str:
    guard(PETITION)
    kind = (request.form.get("kind") if request.method == "POST" else request.args.get("tipo")) or None
    kinds = kinds_filed_by(g.actor)
    if kind is None:
        return render_template("new_case.html", kinds=kinds, kind=None)
    if kind not in KINDS:
        raise PageError(400, _("%(value)s is not a value of %(field)s.", value=kind, field="tipo"))
    if kind not in kinds:
        raise PageError(403, _("Your body does not petition for a case of this kind: %(kind)s.", kind=fmt.kind(kind)))
    only = ("occurred_on", *PETITION_FIELDS[kind])
    form, shown, key = MultiDict({"occurred_on": today_shown()}), {"status": 200}, new_key()
    options = municipality_options()
    fields = inputs(PetitionSchema(), only, offered(PETITION, {"kind": kind}, g.actor, tramita().statute,
                                                    tramita().today()), options)
    if request.method == "POST":
        limit_body()
        if not session.csrf_holds():
            raise PageError(403, forbidden_message())
        acted, shown = submitted(PETITION, PetitionSchema(), fields, {"kind": kind}, file_petition)
        if acted is not None:
            return redirect(url_for("pages.case", number=acted.number, registrado=PETITION) + "#ato-registrado",
                            303)
        form, key = request.form, request.form.get(KEY) or key
        shown = with_names(shown, {m["code"]: m["name"] for m in options})
    fields = drawn(fields, form, shown.get("errors", {}))
    page = render_template("new_case.html", kinds=kinds, kind=kind, key=key, shown=placed(shown, fields),
                           files=FILES, fields=fields, options=options, attaches=True,
                           action=url_for("pages.new_case"))
    return page, shown["status"]
