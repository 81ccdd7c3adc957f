"""Reading the read models: what the API and the scheduler ask of them.

A deadline's recorded status is open, missed (found missed by an act), met-on-time or met-late. Whether an open
deadline is due soon or missed depends on the day of the question (docs/law/deadlines.md, "When a deadline is
missed": missed once its last day has ended in Rio Branco with no closing act), so `today` is a parameter and
the answer is computed here, with an index on (status, due_on): "due on or before D" reads only the open
deadlines due by D. The scheduler's scan reads another index, `alerts_due_on`, which leaves out the deadlines
already alerted missed.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import date, timedelta
from typing import Any

from domain.case import Case
from domain.names import normalise_name
from projections.rows import deadline_rows
from projections.schema import PROJECTIONS
from infrastructure.store import Store

#: Rows a page of cases holds unless asked otherwise.
PAGE = 100

#: The effective statuses a deadline can have on a given day.
DEADLINE_STATUSES = ("open", "due-soon", "missed", "met-on-time", "met-late", "ended")

_JSON_COLUMNS = {"breaches", "municipalities", "impediments", "frozen_municipalities", "figures", "districts",
                 "frozen_by", "ceased"}


def _decoded(row: dict[str, Any]) -> dict[str, Any]:
    return {k: (json.loads(v) if k in _JSON_COLUMNS and v is not None else v) for k, v in row.items()}


def _where(*conditions: tuple[str, tuple[Any, ...] | None]) -> tuple[str, list[Any]]:
    """` WHERE a AND b` and its parameters, from (condition, parameters) pairs; None leaves a condition out."""
    chosen = [(sql, values) for sql, values in conditions if values is not None]
    if not chosen:
        return "", []
    return " WHERE " + " AND ".join(sql for sql, _ in chosen), [v for _, values in chosen for v in values]


def _given(value: Any) -> tuple[Any, ...] | None:
    return (value,) if value not in (None, "") else None


def _containing(text: str) -> str:
    """A LIKE pattern for rows whose search key contains the words of `text`, with `%`, `_` and the escape
    character itself taken literally (SQLite and PostgreSQL both read `ESCAPE '\\'`)."""
    words = normalise_name(text)
    return "%" + words.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


#: The condition every text search uses, with its escape character (see `_containing`).
LIKE = "LIKE ? ESCAPE '\\'"


def cases(store: Store, *, kind: str | None = None, stage: str | None = None, municipality: str | None = None,
          text: str | None = None, limit: int = PAGE, offset: int = 0) -> list[dict[str, Any]]:
    """Cases by kind, stage, municipality concerned (origin, receiving or new) and words of their names."""
    where, params = _case_filter(kind, stage, municipality, text)
    sql = f"SELECT c.* FROM cases c{where} ORDER BY c.number LIMIT ? OFFSET ?"
    return [_decoded(r) for r in store.query_dicts(sql, [*params, limit, offset])]


def count_cases(store: Store, *, kind: str | None = None, stage: str | None = None, municipality: str | None = None,
                text: str | None = None) -> int:
    where, params = _case_filter(kind, stage, municipality, text)
    return int(store.query(f"SELECT COUNT(*) FROM cases c{where}", params)[0][0])


def _case_filter(kind: str | None, stage: str | None, municipality: str | None,
                 text: str | None) -> tuple[str, list[Any]]:
    pattern = _containing(text) if text else None
    return _where(
        ("c.kind = ?", _given(kind)),
        ("c.stage = ?", _given(stage)),
        ("EXISTS (SELECT 1 FROM case_municipalities cm WHERE cm.case_id = c.case_id AND cm.municipality = ?)",
         _given(municipality)),
        (f"(c.search {LIKE} OR EXISTS (SELECT 1 FROM case_municipalities cm JOIN municipalities m "
         f"ON m.code = cm.municipality WHERE cm.case_id = c.case_id AND m.search {LIKE}))",
         (pattern, pattern) if pattern else None),
    )


def case(store: Store, case_id: str) -> dict[str, Any] | None:
    rows = store.query_dicts("SELECT * FROM cases WHERE case_id = ?", (case_id,))
    return _decoded(rows[0]) if rows else None


def _deadline_filter(today: date, due_soon_days: int, status: str | None, due_before: date | None,
                     case_id: str | None, who: str | None = None, municipality: str | None = None,
                     open_only: bool = False) -> tuple[str, list[Any]]:
    if status is not None and status not in DEADLINE_STATUSES:
        raise ValueError(f"status: {status!r} is not one of {', '.join(DEADLINE_STATUSES)}")
    today_iso, soon_iso = today.isoformat(), (today + timedelta(days=due_soon_days)).isoformat()
    by_status = {
        "missed": ("(status = 'missed' OR (status = 'open' AND due_on < ?))", (today_iso,)),
        "due-soon": ("status = 'open' AND due_on >= ? AND due_on <= ?", (today_iso, soon_iso)),
        "open": ("status = 'open' AND (due_on IS NULL OR due_on > ?)", (soon_iso,)),
    }
    return _where(by_status.get(status or "", ("status = ?", _given(status))),
                  ("due_on <= ?", _given(due_before and due_before.isoformat())),
                  ("case_id = ?", _given(case_id)), ("who = ?", _given(who)),
                  ("municipality = ?", _given(municipality)),
                  ("closed_by IS NULL AND due_on IS NOT NULL", () if open_only else None))


#: The order of every list of deadlines: by due day, then case and deadline (the key: a total order, so that
#: pages neither repeat nor skip a row).
DEADLINE_ORDER = " ORDER BY due_on, case_number, case_id, deadline"


def deadlines(store: Store, *, today: date, due_soon_days: int, status: str | None = None,
              due_before: date | None = None, case_id: str | None = None, limit: int = 500,
              offset: int = 0) -> list[dict[str, Any]]:
    """Deadlines with their status on `today`; `due_before` keeps those due on or before that day; a page of
    `limit` rows from `offset` (`count_deadlines` says how many there are in all).

    due-soon: open and due within `due_soon_days` (today included); missed: recorded missed, or open and its
    due day before `today`; open: open and due later (or not yet dated).
    """
    where, params = _deadline_filter(today, due_soon_days, status, due_before, case_id)
    sql = f"SELECT * FROM deadlines{where}{DEADLINE_ORDER} LIMIT ? OFFSET ?"
    return [_with_status(row, today, due_soon_days) for row in store.query_dicts(sql, [*params, limit, offset])]


def count_deadlines(store: Store, *, today: date, due_soon_days: int, status: str | None = None,
                    due_before: date | None = None, case_id: str | None = None) -> int:
    """How many deadlines `deadlines` lists with these filters, over all its pages."""
    where, params = _deadline_filter(today, due_soon_days, status, due_before, case_id)
    return int(store.query(f"SELECT COUNT(*) FROM deadlines{where}", params)[0][0])


def each_deadline(store: Store, *, chunk: int = 2000, **filters: Any) -> Iterator[dict[str, Any]]:
    """Every deadline `deadlines` lists with these filters, in its order, read `chunk` rows at a time (for an
    export streamed row by row: no cap)."""
    return _every(deadlines, store, chunk, filters)


def open_deadlines_of(store: Store, *, today: date, due_soon_days: int, who: str | None,
                      municipality: str | None, case_id: str | None) -> list[dict[str, Any]]:
    """The deadlines a body must still meet (no closing act, a due day), for its calendar feed: those of `who`
    (every body's when None), of `municipality` and of `case_id` when given, with their status on `today`."""
    where, params = _deadline_filter(today, due_soon_days, None, None, case_id, who, municipality, open_only=True)
    rows = store.query_dicts(f"SELECT * FROM deadlines{where}{DEADLINE_ORDER}", params)
    return [_with_status(row, today, due_soon_days) for row in rows]


def case_deadlines(case: Case, *, today: date, due_soon_days: int) -> list[dict[str, Any]]:
    """One case's deadlines from its own state (not the projection), with the same columns and status but the
    scheduler's `alerts_due_on`, which needs the case's alerts."""
    columns = PROJECTIONS["deadlines"].tables[0].column_names
    rows = [{c: v for c, v in zip(columns, row) if c != "alerts_due_on"} for row in deadline_rows(case)]
    return sorted((_with_status(row, today, due_soon_days) for row in rows),
                  key=lambda r: (r["due_on"] is None, r["due_on"] or "", r["deadline"]))


def _with_status(row: dict[str, Any], today: date, due_soon_days: int) -> dict[str, Any]:
    """The recorded status kept as `recorded_status`; `status` as of `today`; days overdue when missed."""
    row["recorded_status"] = row["status"]
    row["status"] = effective_status(row, today, due_soon_days)
    row["days_overdue"] = (today - date.fromisoformat(row["due_on"])).days \
        if row["status"] == "missed" and row["due_on"] else 0
    return row


def open_deadlines_due_by(store: Store, day: date, limit: int = 10_000) -> list[dict[str, Any]]:
    """Deadlines without a closing act due on or before `day`, alerted or not (the scheduler's scan reads
    `alerting_deadlines_due_by`).

    Both recorded statuses without a closing act are read: `open`, and `missed` (found missed by an act, Art. 26
    par. ún., and still waiting for it). The (status, due_on) index answers it, one range per status.
    """
    return store.query_dicts(OPEN_DUE_BY, (day.isoformat(), limit))


OPEN_DUE_BY = "SELECT * FROM deadlines WHERE status IN ('open', 'missed') AND due_on <= ? ORDER BY due_on LIMIT ?"


def alerting_deadlines_due_by(store: Store, day: date) -> list[dict[str, Any]]:
    """Deadlines that can still call for an alert, due on or before `day`: the scheduler's scan, `day` being
    today plus its largest threshold.

    Those are the deadlines without a closing act whose `missed` alert is not recorded (projections/rows.py,
    `deadline_rows`): a deadline overdue and left open stops being read once it has been alerted missed. The
    `alerts_due_on` index answers it, one range.
    """
    return store.query_dicts(ALERTING_DUE_BY, (day.isoformat(),))


ALERTING_DUE_BY = "SELECT * FROM deadlines WHERE alerts_due_on <= ? ORDER BY alerts_due_on"


def breached_requisitions(store: Store) -> list[tuple[str, str | None]]:
    """Art. 10 §1: (case id, requisition) of every requisition a body refused (a breach; few, and never undone);
    (case id, None) for a row whose breaches are not the list of text the projector writes (an administrator's
    edit), which the case itself must judge."""
    found: list[tuple[str, str | None]] = []
    for case_id, breaches in store.query("SELECT case_id, breaches FROM cases WHERE breaches IS NOT NULL"):
        try:
            requisitions = json.loads(breaches)
        except (TypeError, ValueError):
            requisitions = None
        if type(requisitions) is list and all(type(requisition) is str for requisition in requisitions):
            found += [(case_id, requisition) for requisition in requisitions]
        else:
            found.append((case_id, None))
    return found


def undelivered_alerts(store: Store, limit: int = 10_000, *, system: bool = False) -> list[dict[str, Any]]:
    """Alerts whose last delivery round did not reach the webhook (none yet, or failed), as the alerts table shows
    them, oldest first; `system`: only system alerts (those of no case, domain/alerts.py). The scheduler decides
    what to deliver from the alert events instead (scheduler/pending.py): this is the view."""
    only = " AND case_id IS NULL" if system else ""
    return store.query_dicts(f"SELECT * FROM alerts WHERE (delivery IS NULL OR delivery = 'failed'){only} "
                             "ORDER BY raised_at, alert_id LIMIT ?", (limit,))


def effective_status(row: dict[str, Any], today: date, due_soon_days: int) -> str:
    if row["status"] != "open":
        return row["status"]
    if row["due_on"] is None:
        return "open"
    left = (date.fromisoformat(row["due_on"]) - today).days
    return "missed" if left < 0 else "due-soon" if left <= due_soon_days else "open"


def _freeze_filter(active: bool | None, municipality: str | None) -> tuple[str, list[Any]]:
    return _where(("active = ?", None if active is None else (int(active),)),
                  ("municipality = ?", _given(municipality)))


def freezes(store: Store, *, active: bool | None = None, municipality: str | None = None, limit: int | None = None,
            offset: int = 0) -> list[dict[str, Any]]:
    """Art. 38: freezes, active or lifted, with the blocking case (all of them, or a page)."""
    where, params = _freeze_filter(active, municipality)
    page = "" if limit is None else f" LIMIT {int(limit)} OFFSET {int(offset)}"
    rows = store.query_dicts(f"SELECT * FROM freezes{where} ORDER BY municipality, since, case_number, case_id{page}",
                             params)
    return [{**r, "active": bool(r["active"])} for r in rows]


def count_freezes(store: Store, *, active: bool | None = None, municipality: str | None = None) -> int:
    where, params = _freeze_filter(active, municipality)
    return int(store.query(f"SELECT COUNT(*) FROM freezes{where}", params)[0][0])


def _alert_filter(since: str | None, case_id: str | None) -> tuple[str, list[Any]]:
    return _where(("raised_at >= ?", _given(since)), ("case_id = ?", _given(case_id)))


def alerts(store: Store, *, since: str | None = None, case_id: str | None = None, limit: int = 500,
           offset: int = 0) -> list[dict[str, Any]]:
    """Alerts raised at or after `since` (an ISO timestamp), oldest first; a page of `limit` rows from `offset`
    (`count_alerts` says how many in all)."""
    where, params = _alert_filter(since, case_id)
    return store.query_dicts(f"SELECT * FROM alerts{where} ORDER BY raised_at, alert_id LIMIT ? OFFSET ?",
                             [*params, limit, offset])


def count_alerts(store: Store, *, since: str | None = None, case_id: str | None = None) -> int:
    where, params = _alert_filter(since, case_id)
    return int(store.query(f"SELECT COUNT(*) FROM alerts{where}", params)[0][0])


def each_alert(store: Store, *, chunk: int = 2000, **filters: Any) -> Iterator[dict[str, Any]]:
    """Every alert `alerts` lists with these filters, oldest first, `chunk` rows at a time (an export: no cap)."""
    return _every(alerts, store, chunk, filters)


def _every(read: Any, store: Store, chunk: int, filters: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Every row `read` lists with `filters`, in its order, `chunk` rows at a time."""
    offset = 0
    while rows := read(store, **filters, limit=chunk, offset=offset):
        yield from rows
        offset += len(rows)
        if len(rows) < chunk:
            return


def deliveries(store: Store, subscription_id: str) -> dict[str, int]:
    """How the subscription's deliveries stand: rounds' outcomes counted by their last state."""
    rows = store.query("SELECT delivery, COUNT(*) FROM alert_deliveries WHERE subscription_id = ? GROUP BY delivery",
                       (subscription_id,))
    return {str(delivery): int(count) for delivery, count in rows}


def municipalities(store: Store, *, text: str | None = None, limit: int | None = None,
                   offset: int = 0) -> list[dict[str, Any]]:
    """The registry's municipalities by name (all of them, or a page)."""
    where, params = _where((f"search {LIKE}", (_containing(text),) if text else None))
    page = "" if limit is None else f" LIMIT {int(limit)} OFFSET {int(offset)}"
    rows = store.query_dicts(f"SELECT * FROM municipalities{where} ORDER BY name, code{page}", params)
    return [_municipality(r) for r in rows]


def count_municipalities(store: Store, *, text: str | None = None) -> int:
    where, params = _where((f"search {LIKE}", (_containing(text),) if text else None))
    return int(store.query(f"SELECT COUNT(*) FROM municipalities{where}", params)[0][0])


def municipality(store: Store, code: str) -> dict[str, Any] | None:
    rows = store.query_dicts("SELECT * FROM municipalities WHERE code = ?", (code,))
    return _municipality(rows[0]) if rows else None


def _municipality(row: dict[str, Any]) -> dict[str, Any]:
    decoded = _decoded(row)
    decoded["frozen"] = bool(decoded["frozen"])
    decoded.pop("search", None)
    return decoded


def document_cited(store: Store, sha256: str) -> bool:
    """Does an act of some case cite the document with this digest (the `attachments` projection)?"""
    return bool(store.query("SELECT 1 FROM case_attachments WHERE sha256 = ? LIMIT 1", (sha256,)))
