"""Reading: cases (now, as of a legal date, at a version, as known at a moment), their timeline, chain check and
export, and the read models (deadlines, alerts, freezes, municipalities). Views parse, call one method, dump.

A single case is read from its events (the source of truth, with its ETag); lists come from the projections,
which the projector keeps current (`/health` shows how far it has read).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import datetime, timezone
from typing import Any
from urllib.parse import urlencode

from flask import Response, current_app, g, request, stream_with_context
from flask_babel import gettext as _
from flask_smorest import Blueprint, abort
from marshmallow import RAISE

from api import responses as r
from api.acts import act_links, case_link
from api.exports import csv_lines
from api.http import errors_doc, etag, read_store, settings, tramita
from projections import checked, projector, queries

cases = Blueprint("cases", __name__, description="Cases: state, history, verification, export")
reads = Blueprint("read-models", __name__, description="Deadlines, alerts, Art. 38 freezes and the registry")
health = Blueprint("health", __name__, description="Liveness and the projections' progress")
caller = Blueprint("caller", __name__, description="Who a token acts as")

READ_ERRORS = [401, 422]
#: The `text/csv` answer a list gives with `?format=csv` or `Accept: text/csv` (api/exports.py).
CSV_DOC = {"content": {"text/csv": {"schema": {"type": "string"}}},
           "description": "a page as JSON; with `?format=csv` or `Accept: text/csv`, every row as CSV (UTF-8 with "
                          "BOM, `;`-separated, CRLF), streamed"}


def page(items: list[dict[str, Any]], total: int, query: dict[str, Any]) -> dict[str, Any]:
    """The envelope of every list: the page, the total, and the next page's path and query (null on the last)."""
    limit, offset = query["limit"], query["offset"]
    following = offset + len(items) if items and offset + len(items) < total else None
    next_page = None
    if following is not None:
        args = {**request.args.to_dict(), "limit": str(limit), "offset": str(following)}
        next_page = f"{request.path}?{urlencode(args)}"
    return {"items": items, "total": total, "limit": limit, "offset": offset, "next": next_page,
            "next_offset": following}


def wants_csv(query: dict[str, Any]) -> bool:
    """`?format=csv`, or no `format` and an `Accept` that prefers text/csv to JSON."""
    if "format" in query:
        return query["format"] == "csv"
    best = request.accept_mimetypes.best_match(["application/json", "text/csv"])
    return best == "text/csv" and request.accept_mimetypes["text/csv"] > request.accept_mimetypes["application/json"]


def csv_response(name: str, columns: list[str], rows: Iterable[dict[str, Any]]) -> Response:
    """Every row, streamed as it is read (api/exports.py for the format)."""
    day = tramita().today().isoformat()
    return Response(stream_with_context(csv_lines(columns, rows)), mimetype="text/csv",
                    headers={"Content-Disposition": f'attachment; filename="{name}-{day}.csv"',
                             "Content-Type": "text/csv; charset=utf-8; header=present"})
#: Projection failures `/health` lists at most (the first ones; `tramita project --once` names them all).
HEALTH_FAILURES = 100


@cases.route("/cases", methods=["GET"], endpoint="list_cases")
@cases.arguments(r.CaseListQuerySchema, location="query", unknown=RAISE)
@cases.response(200, r.CasePageSchema)
@errors_doc(READ_ERRORS, summary="Cases by kind, stage, municipality or words of their names (projection)")
@cases.doc(responses={200: {"links": case_link("$response.body#/items/0/case_id", "the first case listed")}})
def list_cases(query: dict[str, Any]):  # noqa: ANN201
    store = read_store()
    filters = {k: v for k, v in query.items() if k not in ("limit", "offset")}
    return page(queries.cases(store, **query), queries.count_cases(store, **filters), query)


@cases.route("/cases/<case_ref>", methods=["GET"], endpoint="get_case")
@cases.arguments(r.CaseQuerySchema, location="query", unknown=RAISE)
@cases.response(200, r.CaseSchema, headers={"ETag": {"schema": {"type": "string"}}})
@errors_doc([*READ_ERRORS, 404], summary="A case now, as of a legal date, at a version, or as known before a moment")
@cases.doc(responses={200: {"links": act_links("$response.body#/id")}})
def get_case(query: dict[str, Any], case_ref: str):  # noqa: ANN201
    found = tramita().case_view(case_ref, **query)
    if found is None:
        abort(404, message=_when(case_ref, query))
    document, version = found
    return document, 200, {"ETag": etag(version)}


#: One sentence each, the case as asked for, so that each is translated whole.
def _when(case_ref: str, query: dict[str, Any]) -> str:
    if "as_of" in query:
        return _("case %(case)s had no act dated on or before %(day)s", case=case_ref, day=query["as_of"].isoformat())
    return _("case %(case)s had no act recorded before %(moment)s", case=case_ref,
             moment=query["recorded_before"].isoformat())


@cases.route("/cases/<case_ref>/events", methods=["GET"], endpoint="case_events")
@cases.response(200, r.TimelineEventSchema(many=True))
@errors_doc([401, 404], summary="The case's full timeline: legal date, recorded time, actor, article, hashes")
def case_events(case_ref: str):  # noqa: ANN201
    return tramita().timeline(case_ref)


@cases.route("/cases/<case_ref>/verify", methods=["GET"], endpoint="verify_case")
@cases.response(200, r.ChainReportSchema)
@errors_doc([401, 404], summary="The case's hash chain, its events' signatures and their place under the latest "
                               "signed checkpoint; names the first altered, deleted or forged event")
def verify_case(case_ref: str):  # noqa: ANN201
    return current_app.extensions["tramita.audit"].verify_case(case_ref)


@cases.route("/cases/<case_ref>/export", methods=["GET"], endpoint="export_case")
@cases.response(200, content_type="application/jsonl", description=(
    "One event per line: the canonical document its hash is taken over, plus `hash`, `signature` and `proof` (its "
    "inclusion in the latest checkpoint's tree), then a closing line with the checkpoint and the signed case "
    "head (docs/audit.md)"))
@errors_doc([401, 404], summary="The whole case file as JSON Lines, verifiable offline")
def export_case(case_ref: str) -> Response:
    documents = list(current_app.extensions["tramita.audit"].export_lines(case_ref))  # first: the petition
    lines = "".join(json.dumps(d, ensure_ascii=False, sort_keys=True) + "\n" for d in documents)
    number = documents[0]["number"]
    return Response(lines, mimetype="application/jsonl",
                    headers={"Content-Disposition": f'attachment; filename="{number}.jsonl"'})


@cases.route("/cases/<case_ref>/deadlines", methods=["GET"], endpoint="case_deadlines")
@cases.response(200, r.DeadlineSchema(many=True))
@errors_doc([401, 404], summary="The case's statutory deadlines and their status today")
def case_deadlines(case_ref: str):  # noqa: ANN201
    app = tramita()
    today, due_soon_days = app.today(), settings()["due_soon_days"]
    return app.ask_case(case_ref, lambda case: queries.case_deadlines(case, today=today, due_soon_days=due_soon_days))


@reads.route("/deadlines", methods=["GET"], endpoint="list_deadlines")
@reads.arguments(r.DeadlineQuerySchema, location="query", unknown=RAISE)
@reads.response(200, r.DeadlinePageSchema)
@errors_doc(READ_ERRORS, summary="Deadlines of every case by status today (due-soon, missed, ...) and due date")
@reads.doc(responses={200: {"links": case_link("$response.body#/items/0/case_id", "the case of the first listed"),
                            **CSV_DOC}})
def list_deadlines(query: dict[str, Any]):  # noqa: ANN201
    store, as_csv = read_store(), wants_csv(query)
    filters = {"today": tramita().today(), "due_soon_days": settings()["due_soon_days"],
               **{k: v for k, v in query.items() if k not in ("limit", "offset", "format")}}
    if as_csv:
        return csv_response("prazos", list(r.DeadlineSchema().fields), queries.each_deadline(store, **filters))
    return page(queries.deadlines(store, **filters, limit=query["limit"], offset=query["offset"]),
                queries.count_deadlines(store, **filters), query)


@reads.route("/alerts", methods=["GET"], endpoint="list_alerts")
@reads.arguments(r.AlertQuerySchema, location="query", unknown=RAISE)
@reads.response(200, r.AlertPageSchema)
@errors_doc(READ_ERRORS, summary="Compliance alerts raised at or after a moment, oldest first")
@reads.doc(responses={200: {"links": case_link("$response.body#/items/0/case_id", "the case of the first listed"),
                            **CSV_DOC}})
def list_alerts(query: dict[str, Any]):  # noqa: ANN201
    since: datetime | None = query.get("since")  # raised_at is stored in UTC: compare in UTC
    filters = {"since": since.astimezone(timezone.utc).isoformat() if since else None,
               "case_id": query.get("case_id")}
    store = read_store()
    if wants_csv(query):
        return csv_response("alertas", list(r.AlertSchema().fields), queries.each_alert(store, **filters))
    return page(queries.alerts(store, **filters, limit=query["limit"], offset=query["offset"]),
                queries.count_alerts(store, **filters), query)


@reads.route("/freezes", methods=["GET"], endpoint="list_freezes")
@reads.arguments(r.FreezeQuerySchema, location="query", unknown=RAISE)
@reads.response(200, r.FreezePageSchema)
@errors_doc(READ_ERRORS, summary="Art. 38: territories frozen by open cases (and lifted freezes)")
@reads.doc(responses={200: {"links": case_link("$response.body#/items/0/case_id", "the case of the first listed")}})
def list_freezes(query: dict[str, Any]):  # noqa: ANN201
    store = read_store()
    filters = {k: v for k, v in query.items() if k not in ("limit", "offset")}
    return page(queries.freezes(store, **query), queries.count_freezes(store, **filters), query)


@reads.route("/municipalities", methods=["GET"], endpoint="list_municipalities")
@reads.arguments(r.MunicipalityQuerySchema, location="query", unknown=RAISE)
@reads.response(200, r.MunicipalityPageSchema)
@errors_doc(READ_ERRORS, summary="The registry: Acre's municipalities and their figures in force")
def list_municipalities(query: dict[str, Any]):  # noqa: ANN201
    store = read_store()
    filters = {k: v for k, v in query.items() if k not in ("limit", "offset")}
    return page(queries.municipalities(store, **query), queries.count_municipalities(store, **filters), query)


@reads.route("/municipalities/<ibge_code>", methods=["GET"], endpoint="get_municipality")
@reads.response(200, r.MunicipalitySchema)
@errors_doc([401, 404], summary="One municipality of the registry by its IBGE code")
def get_municipality(ibge_code: str):  # noqa: ANN201
    found = queries.municipality(read_store(), ibge_code)
    if found is None:
        abort(404, message=_("no municipality %(code)s in the registry", code=ibge_code))
    return found


@reads.route("/toponyms", methods=["GET"], endpoint="list_toponyms")
@reads.response(200, r.ToponymsSchema)
@errors_doc([401], summary="Art. 17 par. ún.: the names a new municipality may not repeat: the IBGE snapshot's "
                           "count and the names added since")
def list_toponyms():  # noqa: ANN201
    toponyms = tramita().toponyms()
    return {"version": toponyms.version, "shipped": len(toponyms) - len(toponyms.added), "added": toponyms.added}


@caller.route("/whoami", methods=["GET"], endpoint="whoami")
@caller.response(200, r.CallerSchema)
@errors_doc([401], summary="Who the request's token acts as: its id, its principal, its body (role) and a municipal "
                           "body's municipality; nothing is read beyond the token's own check")
def whoami():  # noqa: ANN201
    return {"token_id": g.token_id, **g.actor.as_dict()}


@health.route("/health", methods=["GET"], endpoint="health")
@health.response(200, r.HealthSchema)
@health.doc(security=[], summary="Liveness: the database answers; how far each projection has read the log")
def get_health():  # noqa: ANN201
    return tramita_health()


def tramita_health() -> dict[str, Any]:
    app, store = tramita(), read_store()
    positions = dict(store.query("SELECT projection, position FROM projection_tracking")) \
        if store.table_exists("projection_tracking") else {}
    last = app.recorder.max_notification_id() or 0
    return {"status": "ok", "database": settings()["database"], "projections": positions,
            "notifications": last, "read_models": checked.summary(store, positions, last),
            "failures": projector.failures(store)[:HEALTH_FAILURES],
            "documents": current_app.extensions["tramita.documents"].usage()}
