"""Rows of the read models, each a pure function of one aggregate's state (and, for a deadline's alerts, of which
of its alerts are recorded).

Because a row depends on its own aggregate's state only, replaying the log from the first event (rebuild) and
following it batch by batch (the projector) give the same tables: each aggregate's rows are those of its latest
state. One column depends on other aggregates too: a deadline row's `alerts_due_on` is None once the deadline's
`missed` alert is recorded. Alerts are never undone, so both ways of writing it give the same value whichever
comes first: the case's rows are written knowing which of its `missed` alerts the event store holds
(`RECORDED`), and an alert `missed`, when projected, sets the column of its deadline's row (`AMENDS`).
Nothing here reads the clock: "due soon" and "missed" of a still-open deadline are decided when queried.

Every value is written through `storable` (the projector's one place for it): a row holds what both stores can
hold, whatever an event holds. PostgreSQL's text cannot contain U+0000 and UTF-8 cannot encode a lone surrogate,
so each of those characters is shown as U+FFFD (the replacement character) in the row, on SQLite too, so that both
stores show the same; the event itself is never changed (`GET /cases/{id}` and the export give it as stored).
A row's value is text, a number or None; any other (an edited event's dict where text was) is that aggregate's
failure, recorded, never a statement the database driver refuses for the whole batch.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Collection, Mapping
from datetime import date, datetime
from decimal import Decimal
from typing import Any
from uuid import UUID

from domain.alerts import MISSED, Alert
from domain.case import Case
from domain.names import normalise_name
from domain.registry import Municipality

Row = tuple[Any, ...]

#: What no projection row holds: NUL (PostgreSQL text refuses it) and lone surrogates (UTF-8 cannot encode them).
UNSTORABLE = re.compile("[\x00\ud800-\udfff]")
#: What a row shows instead: U+FFFD REPLACEMENT CHARACTER.
REPLACEMENT = "\ufffd"


#: The types a row's value may have besides text: what every column of both stores takes from it.
_COLUMN_TYPES = frozenset({int, float, type(None)})


class UnstorableValue(TypeError):
    """A row value no column holds (a dict, a list or a `True` where an event's field had text or a number: an
    edited event can apply and still give one). The row's fault, recorded as its aggregate's failure like any
    other row the database refuses, where the database driver would have refused it as a fault of the statement
    and stopped the read models."""


def storable(value: Any) -> Any:
    """`value` as every store can hold it: in text, NUL and lone surrogates become U+FFFD; a number or None as
    is; anything else is refused (`UnstorableValue`)."""
    kind = type(value)
    if kind is str:
        if "\x00" in value or not value.isascii():
            return UNSTORABLE.sub(REPLACEMENT, value)
        return value
    if kind in _COLUMN_TYPES:
        return value
    raise UnstorableValue(f"a row cannot hold a value of type {kind.__name__} ({value!r:.80})")


def storable_row(row: Row) -> Row:
    """The row with every value `storable`: the row itself when each already is (text without NUL or a lone
    surrogate, a number, None), which a rebuild's rows almost always are, without a call per value."""
    for value in row:
        kind = type(value)
        if kind is str:
            if ("\x00" in value or not value.isascii()) and UNSTORABLE.search(value):
                break
        elif kind not in _COLUMN_TYPES:
            break
    else:
        return tuple(row)
    return tuple(map(storable, row))


def to_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=json_default)


def json_default(value: Any) -> Any:
    """How the read models and the scheduler's log write what JSON has no type for: ISO dates, text."""
    if isinstance(value, (date, datetime)):
        return value.isoformat()
    if isinstance(value, (Decimal, UUID)):
        return str(value)
    raise TypeError(f"{type(value).__name__} is not JSON")


def _iso(value: date | datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def _open_deadlines(case: Case) -> list[tuple[str, dict[str, Any]]]:
    return [(key, d) for key, d in case.standing_deadlines().items() if d["closed_by"] is None]


def case_rows(case: Case) -> list[Row]:
    """The `cases` row: where the case stands, what is next due, and its last act."""
    open_deadlines = _open_deadlines(case)
    dated = sorted((d["due_on"], key) for key, d in open_deadlines if d["due_on"] is not None)
    next_key = dated[0][1] if dated else None
    following = dict(open_deadlines).get(next_key, {}) if next_key else {}
    closed = case.archived is not None or case.concluded_on is not None
    law = case.law or {}
    name = law.get("name") or case.proposed_name
    words = [case.number, name, case.proposed_name, case.district, law.get("seat"), law.get("law")]
    return [(
        str(case.id), case.number, case.kind, case.stage, case.initiator, to_json(case.municipalities),
        case.receiving, name, case.district, law.get("seat"), case.new_municipality, to_json(case.impediments),
        0 if closed else len(case.impediments), to_json(case.frozen), len(open_deadlines),
        _iso(following.get("due_on")), next_key, following.get("article"), following.get("who"),
        case.last_act, _iso(case.last_act_on), _iso(case.modified_on), _iso(case.opened_on), law.get("law"),
        _iso(law.get("on")), _iso(case.concluded_on), _iso((case.archived or {}).get("on")), case.version,
        " ".join(normalise_name(w) for w in words if w),
        to_json([breach["requisition"] for breach in case.breaches]) if case.breaches else None,
    )]


def case_municipality_rows(case: Case) -> list[Row]:
    """Which municipalities a case concerns, and how: origin, receiving, new."""
    roles = [(code, "origin") for code in case.municipalities]
    roles += [(case.receiving, "receiving")] if case.receiving else []
    roles += [(case.new_municipality, "new")] if case.new_municipality else []
    return sorted({(str(case.id), code, role) for code, role in roles})


def deadline_rows(case: Case, recorded: Collection[UUID] = frozenset(),
                  missed_ids: dict[UUID, str] | None = None) -> list[Row]:
    """One row per statutory deadline of the case, as recorded (open, missed, met-on-time, met-late), with its
    due day again as `alerts_due_on` while it can still call for an alert, the column the scheduler's scan reads.

    `recorded`: which of the case's `missed` alerts (`missed_alert_ids`, or `missed_ids` when the caller has
    worked them out already: each id is a SHA-1) are recorded. A deadline calls for no alert of any kind,
    whatever the thresholds, once it is closed, while it has no due date, and once its `missed` alert is recorded
    (domain/alerts.py: from the day it is missed only `missed` can be due, and it is recorded once): its
    `alerts_due_on` is None. Otherwise a warning `due-in-N-days` can be due from N days before the due day, so
    the scan asks for `alerts_due_on <= today + its largest threshold`; what has been warned is left to the
    scan's judgement.
    """
    ids = missed_alert_ids(case) if missed_ids is None else missed_ids
    missed = {key for alert_id, key in ids.items() if alert_id in recorded}
    return [(
        str(case.id), key, case.number, case.kind, d["rule"], d["article"], d["who"], d["municipality"],
        _iso(d["starts_on"]), _iso(d["due_on"]), d["status"], d["closed_by"], _iso(d["closed_on"]), d["days_late"],
        None if d["closed_by"] is not None or key in missed else _iso(d["due_on"]),
    ) for key, d in case.standing_deadlines().items()]


def missed_alert_ids(case: Case) -> dict[UUID, str]:
    """The id of the `missed` alert each deadline of the case that can still call for an alert would have (no
    closing act, a due date), with the deadline's key: whether each is recorded is `deadline_rows`' to know."""
    case_id = str(case.id)
    return {Alert.id_for(case_id, key, MISSED): key for key, d in case.standing_deadlines().items()
            if d["closed_by"] is None and d["due_on"] is not None}


def deadline_amends(alert: Alert) -> list[tuple[Row, dict[str, Any]]]:
    """A `missed` alert ends its deadline's alerts: the deadline row (by its key) gets `alerts_due_on` None, as
    `deadline_rows` gives it once the alert is recorded. Any other alert changes no deadline row."""
    if alert.kind != MISSED or alert.case_id is None:
        return []
    return [((alert.case_id, alert.deadline), {"alerts_due_on": None})]


def attachment_rows(case: Case) -> list[Row]:
    """The documents the case's acts cite (domain/case/attachments.py): one row per act and document."""
    return [(str(case.id), a["act_version"], a["sha256"], case.number, a["act"], a["name"], a["type"], a["size"],
             _iso(a["on"])) for a in getattr(case, "attachments", [])]


def freeze_rows(municipality: Municipality) -> list[Row]:
    """Art. 38: every freeze of the municipality, active or lifted, with the blocking case."""
    return [(
        municipality.key, f["case_id"], _iso(f["since"]), municipality.name, f["case_number"], _iso(f["lifted_on"]),
        int(f["lifted_on"] is None),
    ) for f in municipality.freezes]


def municipality_rows(municipality: Municipality) -> list[Row]:
    """The registry entry: the figure of each kind in force now, as the rules read it (`Municipality.entry_on`: the
    latest by its as-of date, the last recorded of a day, the seed's undated area until an act changes it),
    districts, freeze state."""
    latest = {}
    for figure, history in municipality.figures.items():
        if history:
            latest[figure] = municipality.entry_on(figure, date.max)
    active = [f["case_number"] for f in municipality.freezes if f["lifted_on"] is None]
    return [(
        municipality.key, municipality.name, municipality.uf, to_json(latest), to_json(municipality.districts),
        int(bool(active)), to_json(active), to_json(municipality.ceased), municipality.created_by_case,
        normalise_name(municipality.name), municipality.version,
    )]


def alert_rows(alert: Alert) -> list[Row]:
    """A case's alert, or a system alert (its case fields None, its subject and message given)."""
    return [(
        str(alert.id), alert.case_id, alert.case_number, alert.deadline, alert.kind, alert.rule, alert.article,
        alert.who, alert.municipality, _iso(alert.due_on), alert.days_overdue, _iso(alert.raised_on),
        _iso(alert.raised_at), alert.delivery, alert.delivery_tries, alert.delivery_error, alert.subject,
        alert.message,
    )]


def delivery_rows(alert: Alert) -> list[Row]:
    """Each subscription's delivery record of the alert (domain/subscriptions.py): delivered or failed, the tries
    of every round, the last error."""
    return [(str(alert.id), subscription, d["delivery"], d["tries"], d["error"])
            for subscription, d in sorted(alert.deliveries.items())]


KINDS: dict[type, str] = {Case: "case", Municipality: "municipality", Alert: "alert"}

#: table name -> the function giving its rows from one aggregate's state.
ROWS: dict[str, Callable[[Any], list[Row]]] = {
    "cases": case_rows,
    "case_municipalities": case_municipality_rows,
    "deadlines": deadline_rows,
    "case_attachments": attachment_rows,
    "freezes": freeze_rows,
    "alerts": alert_rows,
    "alert_deliveries": delivery_rows,
    "municipalities": municipality_rows,
}

#: table name -> the ids of the other aggregates whose being recorded its rows of one aggregate depend on, as the
#: keys of a mapping (its values are the function's own: a deadline's key for each `missed` alert id); its
#: function in ROWS then takes, after the aggregate, the set of those the event store holds, and that mapping
#: (so that it is not worked out twice).
RECORDED: dict[str, Callable[[Any], Mapping[UUID, Any]]] = {
    "deadlines": missed_alert_ids,
}

#: table name -> what one aggregate of a kind its projection is `amended_by` sets in rows another aggregate owns:
#: (the row's key, {column: value}) for each row it changes.
AMENDS: dict[str, Callable[[Any], list[tuple[Row, dict[str, Any]]]]] = {
    "deadlines": deadline_amends,
}

#: aggregate kind -> the value of a table's `owner` column for one aggregate.
OWNERS: dict[str, Callable[[Any], str]] = {
    "case": lambda case: str(case.id),
    "municipality": lambda municipality: municipality.key,
    "alert": lambda alert: str(alert.id),
}
