"""What the printable case file (`GET /cases/{id}/dossier.pdf`) shows, gathered in one call as plain data.

The dossier is an audit artefact: beside the case's acts it carries what only the audit service holds, the
case's verification verdict and the latest signed checkpoint with the log's origin. So it is gathered here,
from the events (the source of truth, never a projection a database administrator could edit), and the API
only renders it. Every value is text, a number, a boolean or None, so the renderer needs nothing of the domain
and a fingerprint of the data names what a rendering shows (`fingerprint`, which leaves out the moment).

Bounded per event: a row holds the event's dates, label, article, actor, hashes and its document references,
never its free text (a justification, a reason); the whole payload is in the JSON Lines export.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator
from datetime import date
from typing import Any
from uuid import UUID

from domain.acts import Actor
from domain.case import Case
from domain.dossiers import DossierIssue
from domain.errors import (
    CaseNotFoundError, MunicipalityNotFoundError, RuleNotInForceError, StoredEventsAlteredError,
    StoredEventsUnreadableError,
)
from domain.lifecycle import act_catalogue, lifecycle_of

#: Payload fields that name a document (a reference: an official letter, a decree, a law, a bill).
REFERENCE_FIELDS = ("documents", "document", "decree", "resolution", "law", "bill")
#: Characters of a reference or a name a row keeps (the API accepts at most 500 for a reference).
MAX_TEXT = 500
#: How deep a payload is searched for attached documents (mappings holding a `sha256`).
MAX_DEPTH = 6
#: Members of an attached document's mapping that name it, first found first.
DOCUMENT_NAMES = ("filename", "name", "title", "reference", "key", "item")

#: Members every event has: not where a document is named.
EVENT_FIELDS = ("originator_id", "originator_version", "timestamp", "occurred_on", "actor", "article",
                "rule_versions", "prev_hash", "hash", "originator_topic", "signature")

#: A case's deadlines as rows with their status on `today` (projections.queries.case_deadlines).
DeadlinesOf = Callable[..., list[dict[str, Any]]]

#: Case events that no act of the catalogue records: the consequences an act or the scheduler records.
CONSEQUENCE_LABELS = {
    "DeadlineOpened": "abertura de prazo",
    "DeadlineDueDateSet": "fixação do termo final do prazo",
    "DeadlineMet": "cumprimento de prazo",
    "DeadlineMissed": "prazo descumprido",
    "RequirementsLapsed": "requisitos deixaram de ser atendidos",
    "CaseConcluded": "conclusão do processo",
    "DocumentsAttached": "anexação de documentos",
}


def gather(audit: Any, case_ref: str, *, due_soon_days: int, deadlines: DeadlinesOf) -> dict[str, Any]:
    """The dossier of one case: cover, timeline, deadlines, documents, verdict and checkpoint (one read of the
    case's events, one verification). An unknown case is CaseNotFoundError naming the reference asked for.
    `deadlines` lists a case's deadlines as the read models do (the caller's, so the audit log needs none)."""
    app = audit.app
    try:
        events = app.events_of(case_ref)
    except CaseNotFoundError:
        raise CaseNotFoundError(case_ref) from None
    except Exception:  # a stored event no longer decodes (its bytes were altered): the verdict says which
        return _unreadable(audit, case_ref)
    case = None
    try:
        for event in events:
            case = event.mutate(case)
    except Exception:  # noqa: BLE001 - an event deleted in the middle: no state is shown, the verdict names it
        return _unreadable(audit, case_ref)
    assert isinstance(case, Case)
    today = app.today()
    labels = _act_labels(app.statute, case.kind, case.opened_on)
    rows = [_event_row(event, labels) for event in events]
    for before, row in zip(rows, rows[1:]):  # the files an act attaches are recorded right after it
        if row["type"].endswith("DocumentsAttached"):
            row["label"] = f"anexação de documentos ao ato: {before['label']}"
    checkpoint = audit.log.checkpoint() if audit.log.exists() else None
    key = audit.signer or audit.verifier
    cover = _cover(app, case)
    shown = [_deadline(d) for d in deadlines(case, today=today, due_soon_days=due_soon_days)]
    return {
        "case": cover,
        "generated_at": app.clock().isoformat(),
        "today": today.isoformat(),
        "origin": key.name if key is not None else None,
        "signed_deployment": audit.signer is not None,
        "events": rows,
        "deadlines": shown,
        "names": _names(app, cover, rows, shown),
        "documents": [document for event, row in zip(events, rows) for document in _documents(event, row)],
        "verdict": audit.verify_case(case.id),
        "checkpoint": _checkpoint(checkpoint),
    }


def _unreadable(audit: Any, case_ref: str) -> dict[str, Any]:
    """A case whose stored events do not all decode: no timeline can be read, only the verdict naming the event."""
    verdict = audit.verify_case(case_ref)
    key = audit.signer or audit.verifier
    checkpoint = audit.log.checkpoint() if audit.log.exists() else None
    number = verdict["label"]
    if number == verdict["aggregate_id"]:  # the petition, which holds the number, is the event unread
        number = case_ref if not _is_uuid(case_ref) else audit._labels().get(number, number)
    case = {"id": verdict["aggregate_id"], "number": number, "kind": None, "stage": None, "version": None,
            "opened_on": None, "last_act_on": None, "proposed_name": None, "district": None, "territories": [],
            "impediments": []}
    return {"case": case, "generated_at": audit.app.clock().isoformat(), "today": audit.app.today().isoformat(),
            "origin": key.name if key is not None else None, "signed_deployment": audit.signer is not None,
            "events": [], "deadlines": [], "documents": [], "names": {}, "verdict": verdict,
            "checkpoint": _checkpoint(checkpoint)}


def _is_uuid(text: str) -> bool:
    try:
        UUID(text)
    except ValueError:
        return False
    return True


def _checkpoint(checkpoint: Any) -> dict[str, Any] | None:
    return None if checkpoint is None else {"size": checkpoint.size, "root": checkpoint.root,
                                             "note": checkpoint.note, "signed_at": checkpoint.signed_at,
                                             "legal_date": checkpoint.legal_date}


def fingerprint(dossier: dict[str, Any]) -> str:
    """SHA-256 of what the dossier shows but the moment it was gathered: equal fingerprints, equal pages."""
    shown = {k: v for k, v in dossier.items() if k != "generated_at"}
    return hashlib.sha256(json.dumps(shown, sort_keys=True, ensure_ascii=False, default=str).encode()).hexdigest()


def _act_labels(statute: Any, kind: str, on: date) -> dict[str, tuple[str, str]]:
    """Event class name -> (act, its Portuguese label) for this kind of case; an event that several acts record
    (PetitionFiled: a petition, a district's request, an extinction's request) gets the act of the kind's own
    lifecycle."""
    catalogue = act_catalogue(statute, on)
    try:
        own = set(lifecycle_of(statute, kind, on).acts)
    except RuleNotInForceError:  # no lifecycle in force for the kind on its opening: any act of the event serves
        own = set()
    labels: dict[str, tuple[str, str]] = {}
    for act, entry in catalogue.items():
        if entry.event not in labels or act in own:
            labels[entry.event] = (act, entry.label)
    return labels


def _cover(app: Any, case: Case) -> dict[str, Any]:
    territories = [{"code": code, "name": _name(app, code), "role": "origem"} for code in case.municipalities]
    if case.receiving:
        territories.append({"code": case.receiving, "name": _name(app, case.receiving), "role": "receptor"})
    new = getattr(case, "new_municipality", None)
    if new and all(t["code"] != new for t in territories):
        territories.append({"code": new, "name": _name(app, new), "role": "novo Município"})
    return {"id": str(case.id), "number": case.number, "kind": case.kind, "stage": case.stage,
            "version": case.version, "opened_on": case.opened_on.isoformat(),
            "last_act_on": case.last_act_on.isoformat() if case.last_act_on else None,
            "proposed_name": _text(case.proposed_name), "district": _text(case.district), "territories": territories,
            "impediments": [{"article": _text(i.get("article")), "message": _text(i.get("message"))}
                            for i in case.impediments_on(app.statute, app.today())]}


def _names(app: Any, cover: dict[str, Any], rows: list[dict[str, Any]],
           deadlines: list[dict[str, Any]]) -> dict[str, str]:
    """The municipalities the dossier names by code (the territories, the acting bodies', a deadline's origin),
    code -> name, so that the case file says them by name; a code the registry cannot name is left out."""
    names = {t["code"]: t["name"] for t in cover["territories"] if t["name"]}
    codes = {row["municipality"] for row in rows} | {d.get("municipality") for d in deadlines}
    codes |= {str(d.get("deadline") or "").partition(":")[2] for d in deadlines}
    for code in sorted(c for c in codes if c and c not in names):
        name = _name(app, code)
        if name:
            names[code] = name
    return names


def _name(app: Any, code: str) -> str | None:
    try:
        return _text(app.municipality(code).name)
    except (MunicipalityNotFoundError, CaseNotFoundError, AttributeError, StoredEventsAlteredError,
            StoredEventsUnreadableError):  # an altered registry entry: unnamed here, the verdict names it
        return None


def _event_row(event: Any, labels: dict[str, tuple[str, str]]) -> dict[str, Any]:
    name = type(event).__name__
    act, label = labels.get(name, (None, CONSEQUENCE_LABELS.get(name, name)))
    actor = event.actor or {}
    return {"sequence": event.originator_version, "type": type(event).__qualname__, "act": act, "label": label,
            "occurred_on": event.occurred_on.isoformat(), "recorded_at": event.timestamp.isoformat(),
            "article": event.article, "role": _text(actor.get("role")), "principal": _text(actor.get("principal")),
            "municipality": _text(actor.get("municipality")), "hash": event.hash, "prev_hash": event.prev_hash,
            "signed": getattr(event, "signature", None) is not None}


def _deadline(row: dict[str, Any]) -> dict[str, Any]:
    keep = ("deadline", "rule", "article", "who", "municipality", "starts_on", "due_on", "status", "closed_by",
            "closed_on", "days_late", "days_overdue")
    return {k: row.get(k) for k in keep}


def _documents(event: Any, row: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """The documents an event names: its references (`documents`, `document`, `decree`, ...) and any attached
    document it carries (a mapping with a `sha256`, at any depth of its payload), each with its hash if it has one."""
    where = {"sequence": row["sequence"], "label": row["label"], "occurred_on": row["occurred_on"], "size": None,
             "media_type": None}
    payload = {k: v for k, v in vars(event).items() if k not in EVENT_FIELDS}
    for field in REFERENCE_FIELDS:
        value = payload.get(field)
        if isinstance(value, str):
            yield {**where, "item": field, "reference": _text(value), "sha256": None}
        elif isinstance(value, dict):
            for item, reference in value.items():
                if isinstance(reference, str):
                    yield {**where, "item": _text(str(item)), "reference": _text(reference), "sha256": None}
    for path, attached in _attached(payload, (), 0):
        name = next((attached[k] for k in DOCUMENT_NAMES if isinstance(attached.get(k), str)), None)
        yield {**where, "item": _text(".".join(path)), "reference": _text(name), "sha256": _text(attached["sha256"]),
               "size": attached.get("size") if isinstance(attached.get("size"), int) else None,
               "media_type": _text(attached.get("media_type") or attached.get("content_type"))}


def _attached(value: Any, path: tuple[str, ...], depth: int) -> Iterator[tuple[tuple[str, ...], dict[str, Any]]]:
    if depth > MAX_DEPTH:
        return
    if isinstance(value, dict):
        if isinstance(value.get("sha256"), str):
            yield path, value
            return
        for key, inner in value.items():
            if isinstance(key, str) and not key.startswith("_"):
                yield from _attached(inner, (*path, key), depth + 1)
    elif isinstance(value, (list, tuple)):
        for index, inner in enumerate(value):
            yield from _attached(inner, (*path, str(index)), depth + 1)


def _text(value: Any) -> str | None:
    if value is None:
        return None
    text = str(value)
    return text if len(text) <= MAX_TEXT else text[:MAX_TEXT] + "…"


def issue(audit: Any, dossier: dict[str, Any], *, code: str, pdf: bytes, signed: bool, actor: Actor) -> None:
    """Record that the dossier with `code` was delivered as `pdf` (its SHA-256 as delivered, after any signature),
    by `actor`, against the checkpoint it showed: an event of its own (domain/dossiers.py), chained and logged."""
    checkpoint = dossier.get("checkpoint") or {}
    case = dossier["case"]
    app = audit.app
    app.save(DossierIssue.issue(app.system_context(actor), code=code, case_id=case["id"],
                                case_number=case["number"], case_version=case.get("version"),
                                sha256=hashlib.sha256(pdf).hexdigest(), size=len(pdf),
                                checkpoint_size=checkpoint.get("size"), checkpoint_root=checkpoint.get("root"),
                                signed=signed))


def issued(audit: Any, code: str) -> dict[str, Any] | None:
    """What a verification code was issued for, whether its record holds (its event's chain recomputed from the
    stored bytes and its hash the one the audit log holds: an administrator's edit shows here, not only in
    `tramita verify`), and the case's verdict now; None for a code never issued."""
    app, aggregate_id = audit.app, DossierIssue.id_for(code)
    try:
        report, events = app.verified_events(aggregate_id)
    except CaseNotFoundError:
        return None
    logged = {leaf.version: leaf.event_hash for leaf in audit.log.leaves_of(aggregate_id)} if audit.log.exists() \
        else {}
    first = events[0] if events else None
    if not isinstance(first, DossierIssue.Issued):  # its one event no longer reads as an issuance
        return {"code": code, "record_intact": False, "case_number": None, "sha256": None, "issued_at": None,
                "verdict": None}
    intact = report.ok and all(logged.get(event.originator_version, event.hash) == event.hash for event in events)
    return {"code": first.code, "case_id": first.case_id, "case_number": first.case_number,
            "case_version": first.case_version, "sha256": first.sha256, "size": first.size,
            "checkpoint_size": first.checkpoint_size, "checkpoint_root": first.checkpoint_root,
            "signed": first.signed, "issued_at": first.timestamp.isoformat(), "record_intact": intact,
            "verdict": audit.verify_case(first.case_id)}
