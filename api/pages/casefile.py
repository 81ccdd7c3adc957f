"""What the case file page shows, read as the JSON API reads it: the case (now, and as of a legal date or as
recorded before a moment, with what differs), its timeline, its deadlines, its Art. 38 freezes, its next acts and
the audit's verdict with the latest signed checkpoint.

Each part is one read the API also answers (`GET /cases/{id}`, `/events`, `/deadlines`, `/verify`,
`/checkpoints/latest`, `/freezes`); this module only puts them side by side for one page. The verdict and the
timeline share one read: the events the verification decoded from the stored bytes and checked are the rows of
the timeline (bench/pages.py measures what the page costs against `/events`).
"""

from __future__ import annotations

from datetime import date, datetime, timezone
from typing import Any

from flask import current_app

from api.http import read_store, settings, tramita
from api.pages import format as fmt
from audit.service import NotSignedError
from domain.access import MUNICIPAL_ROLES, READ_ONLY_ROLES
from domain.acts import Actor
from domain.application.reads import event_row
from domain.errors import StoredEventsAlteredError
from projections import queries

#: Days after its legal date past which an act's recording is marked late (TRAMITA_LATE_RECORDING_DAYS).
DEFAULT_LATE_RECORDING_DAYS = "30"


def late_recording_days(config: dict[str, str]) -> int:
    raw = config.get("TRAMITA_LATE_RECORDING_DAYS", DEFAULT_LATE_RECORDING_DAYS).strip()
    if not raw.isascii() or not raw.isdigit() or len(raw) > 5:
        raise ValueError(f"TRAMITA_LATE_RECORDING_DAYS: {raw!r} is not a whole number of days (0 or more)")
    return int(raw)


def case_file(case_ref: str, actor: Actor, *, as_of: date | None = None,
              recorded_before: datetime | None = None) -> dict[str, Any]:
    """Everything the case file page shows; CaseNotFoundError when there is no such case."""
    app = tramita()
    try:
        current, current_version = app.case_view(case_ref)  # type: ignore[misc]
    except StoredEventsAlteredError as altered:  # a read, not an act: what is stored, under the verdict naming it
        current, current_version = as_stored(app, case_ref, altered)
    verdict, checked = current_app.extensions["tramita.audit"].verified_case(case_ref)
    events = [event_row(event) for event in checked] if checked is not None else app.timeline(case_ref)
    asked = as_of is not None or recorded_before is not None
    found = app.case_view(case_ref, as_of=as_of, recorded_before=recorded_before) if asked else None
    view, version = found if found else (current, current_version) if not asked else (None, 0)
    today = app.today()
    day_of_view = as_of or (fmt.legal_day_of(recorded_before.isoformat()) if recorded_before else today)
    catalogue = app.statute.in_force("lifecycle.acts", today).value
    by_act, by_event = fmt.act_labels(catalogue, current["kind"])
    words = fmt.Words()
    shown = view or current
    names = municipality_names([*current.get("municipalities", []), current.get("receiving"),
                                *current.get("frozen", []), *(view or {}).get("frozen", []),
                                *{(e.get("actor") or {}).get("municipality") for e in events},
                                *{d.get("municipality") for d in current.get("deadlines", {}).values()}])
    return {
        "case": shown, "current": current, "version": version, "current_version": current_version,
        "exists_then": view is not None, "asked": asked, "as_of": as_of, "recorded_before": recorded_before,
        "day_of_view": day_of_view, "today": today,
        "late_days": current_app.extensions["tramita.pages"]["late_recording_days"],
        "timeline": timeline_rows(events, by_event, version if view else 0, words),
        "deadlines": deadline_rows(shown if view else {"deadlines": {}}, day_of_view, words, names),
        "difference": difference(view, current, names) if asked and view else None,
        "freezes": [f for f in queries.freezes(read_store()) if f["case_id"] == current["id"]],
        "next_acts": [dict(n, label=by_act.get(n["act"], n["act"]), mine=may_record(actor, n))
                      for n in (view or {}).get("next_acts", [])],
        "verdict": verdict,
        "checkpoint": latest_checkpoint(),
        "names": names,
        "words": words,
    }


#: A moment after every event: the case "as recorded before" it is the case as its stored events give it.
AFTER_EVERY_EVENT = datetime.max.replace(tzinfo=timezone.utc)


def as_stored(app: Any, case_ref: str, altered: StoredEventsAlteredError) -> tuple[dict[str, Any], int]:
    """The case as its stored events give it, unchecked, for the page of a case the store's chain or the audit
    log contradicts: the page shows it under the verdict that names the damage, and no act is judged on it. When
    the stored events do not even replay (a version missing), the refusal stands (a 409 page naming the event)."""
    try:
        found = app.case_view(case_ref, recorded_before=AFTER_EVERY_EVENT)
    except Exception:  # noqa: BLE001 - the stored events do not replay: the refusal says which
        found = None
    if found is None:
        raise altered
    return found


def timeline_rows(events: list[dict[str, Any]], labels: dict[str, str], in_view: int,
                  words: fmt.Words | None = None) -> list[dict[str, Any]]:
    """The events as rows: label, both dates, late recording, closing a deadline late, documents, and whether
    the view (as of a date, as recorded before a moment) holds it yet; with the dates, the role and the article
    as the page writes them (`*_shown`: a timeline has hundreds of rows, written once here, not by the template)."""
    days = current_app.extensions["tramita.pages"]["late_recording_days"]
    words = words or fmt.Words()
    rows: list[dict[str, Any]] = []
    for event in events:
        payload = event["payload"]
        recorded_day = fmt.legal_day_of(event["recorded_at"])
        late_by = (recorded_day - date.fromisoformat(event["occurred_on"])).days
        system, shown = event["type"].rsplit(".", 1)[-1] in fmt.SYSTEM_EVENTS, event["sequence"] <= in_view
        cited = references(payload)
        row = {**event, "label": fmt.event_label(labels, event["type"]), "late_recording": late_by > days,
               "recorded_days_after": late_by, "in_view": shown, "closes_late": None, "system": system,
               "classes": f"{'system' if system else ''} {'' if shown else 'later'}",
               "documents": attached_documents(payload), "references": cited, "references_shown": "; ".join(cited),
               "occurred_on_shown": words.day(event["occurred_on"]),
               "recorded_at_shown": words.moment(event["recorded_at"]),
               "role_shown": words.role((event.get("actor") or {}).get("role")),
               "article_shown": words.article(event.get("article"))}
        if event["type"] == "Case.DeadlineMet" and payload.get("on_time") is False:
            row["closes_late"] = payload.get("days_late")
            for earlier in reversed(rows):  # the act that closed it is the last act before this event
                if not earlier["system"]:
                    earlier["closes_late"] = payload.get("days_late")
                    break
        rows.append(row)
    _ = words.markup  # the marks as the template's _() writes them, each sentence translated once for the page
    for row in rows:
        if row["closes_late"] is not None:
            row["closes_late_title"] = _("closed a deadline late")
            row["closes_late_shown"] = _("closed its deadline %(n)s days late", n=row["closes_late"])
        if not row["in_view"]:
            row["not_yet_shown"] = _("not yet in this view")
        if row["late_recording"]:
            row["late_recording_title"] = _("recorded %(n)s days after its legal date", n=row["recorded_days_after"])
            row["late_recording_shown"] = _("recorded late (%(n)s days)", n=row["recorded_days_after"])
    return rows


def attached_documents(payload: dict[str, Any]) -> list[dict[str, str]]:
    """Files attached to an act (`documents`: a list of `{sha256, name}`), each served at /documents/{sha256}."""
    found = payload.get("documents")
    if not isinstance(found, list):
        return []
    return [{"sha256": d["sha256"], "name": str(d.get("name") or d["sha256"][:12])} for d in found
            if isinstance(d, dict) and isinstance(d.get("sha256"), str)]


def references(payload: dict[str, Any]) -> list[str]:
    """The documents an act cites by reference (`document`, or the petition's Art. 4 documents by item)."""
    cited = payload.get("documents")
    found = [f"{fmt.article(str(item))}: {ref}" for item, ref in cited.items()] if isinstance(cited, dict) else []
    for key in ("document", "decree", "resolution", "law", "bill"):
        if isinstance(payload.get(key), str):
            found.append(payload[key])
    return found


def deadline_rows(document: dict[str, Any], day: date, words: fmt.Words | None = None,
                  names: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """The case's deadlines with their status on `day` (the view's), in due-date order; with their name, article,
    who, dates and status as the page writes them (`*_shown`; `names`: municipalities' names by code)."""
    due_soon = settings()["due_soon_days"]
    words = words or fmt.Words()
    rows = []
    for name, row in (document.get("deadlines") or {}).items():
        row = {k: v.isoformat() if isinstance(v, date) else v for k, v in row.items()}
        status = queries.effective_status(row, day, due_soon)
        rows.append(dict(row, deadline=name, deadline_shown=words.deadline(name, names),
                         municipality_shown=(names or {}).get(row.get("municipality") or "", row.get("municipality")),
                         recorded_status=row["status"], status=status,
                         article_shown=words.article(row.get("article")), who_shown=words.role(row.get("who")),
                         starts_on_shown=words.day(row.get("starts_on")), due_on_shown=words.day(row.get("due_on")),
                         closed_on_shown=words.day(row.get("closed_on")), status_shown=words.deadline_status(status)))
    return sorted(rows, key=lambda r: (r["due_on"] is None, r["due_on"] or "", r["deadline"]))


def difference(then: dict[str, Any], now: dict[str, Any], names: dict[str, str]) -> dict[str, Any]:
    """What the case as asked lacks of the case now: its stage, acts, freezes and the deadlines since settled."""
    later = {name: row for name, row in now["deadlines"].items()
             if then["deadlines"].get(name, {}).get("status") != row["status"]}
    return {"stage": (then["stage"], now["stage"]), "acts": now["version"] - then["version"],
            "frozen": ([names.get(c, c) for c in then["frozen"]], [names.get(c, c) for c in now["frozen"]]),
            "deadlines": later}


def may_record(actor: Actor, next_act: dict[str, Any]) -> bool:
    """Is the reader's body one of those competent for this next act (never a read-only role)?"""
    if actor.role in READ_ONLY_ROLES or actor.role not in next_act["roles"]:
        return False
    return actor.role not in MUNICIPAL_ROLES or not next_act["municipalities"] or \
        actor.municipality in next_act["municipalities"]


def latest_checkpoint() -> dict[str, Any] | None:
    try:
        return current_app.extensions["tramita.audit"].latest_checkpoint().as_dict()
    except NotSignedError:
        return None


def municipality_names(codes: list[str | None]) -> dict[str, str]:
    store = read_store()
    names = {}
    for code in dict.fromkeys(codes):  # each code read once
        if code and (found := queries.municipality(store, code)):
            names[code] = found["name"]
    return names
