"""Reading the read models: what the API and the scheduler ask of them.

A deadline's recorded status is open, missed (found missed by an act), met-on-time or met-late. Whether an open
deadline is due soon or missed depends on the day of the question (RULES.md, Deadlines: missed once its last
day has ended in Rio Branco with no closing act), so `today` is a parameter and the answer is computed here,
with an index on (status, due_on): "due on or before D" reads only the open deadlines due by D.
"""

from __future__ import annotations

import json
from datetime import date, timedelta
from typing import Any

from domain.names import normalise_name
from projections.store import Store

#: The effective statuses a deadline can have on a given day.
DEADLINE_STATUSES = ("open", "due-soon", "missed", "met-on-time", "met-late")

_JSON_COLUMNS = {"municipalities", "impediments", "frozen_municipalities", "figures", "districts", "frozen_by", "ceased"}


def _decoded(row: dict[str, Any]) -> dict[str, Any]:
    return {k: (json.loads(v) if k in _JSON_COLUMNS and v is not None else v) for k, v in row.items()}


def cases(store: Store, *, kind: str | None = None, stage: str | None = None, municipality: str | None = None,
          text: str | None = None, limit: int = 50, offset: int = 0) -> list[dict[str, Any]]:
    """Cases by kind, stage, municipality concerned (origin, receiving or new) and words of their names."""
    where, params = [], []
    if kind:
        where.append("c.kind = ?")
        params.append(kind)
    if stage:
        where.append("c.stage = ?")
        params.append(stage)
    if municipality:
        where.append("EXISTS (SELECT 1 FROM case_municipalities cm WHERE cm.case_id = c.case_id "
                     "AND cm.municipality = ?)")
        params.append(municipality)
    if text:
        pattern = f"%{normalise_name(text)}%"
        where.append("(c.search LIKE ? OR EXISTS (SELECT 1 FROM case_municipalities cm JOIN municipalities m "
                     "ON m.code = cm.municipality WHERE cm.case_id = c.case_id AND m.search LIKE ?))")
        params += [pattern, pattern]
    sql = "SELECT c.* FROM cases c" + (f" WHERE {' AND '.join(where)}" if where else "")
    sql += " ORDER BY c.number LIMIT ? OFFSET ?"
    return [_decoded(r) for r in store.query_dicts(sql, [*params, limit, offset])]


def case(store: Store, case_id: str) -> dict[str, Any] | None:
    rows = store.query_dicts("SELECT * FROM cases WHERE case_id = ?", (case_id,))
    return _decoded(rows[0]) if rows else None


def deadlines(store: Store, *, today: date, due_soon_days: int, status: str | None = None,
              due_before: date | None = None, case_id: str | None = None, limit: int = 500) -> list[dict[str, Any]]:
    """Deadlines with their status on `today`; `due_before` keeps those due on or before that day.

    due-soon: open and due within `due_soon_days` (today included); missed: recorded missed, or open and its
    due day before `today`; open: open and due later (or not yet dated).
    """
    if status is not None and status not in DEADLINE_STATUSES:
        raise ValueError(f"status: {status!r} is not one of {', '.join(DEADLINE_STATUSES)}")
    today_iso, soon_iso = today.isoformat(), (today + timedelta(days=due_soon_days)).isoformat()
    where, params = [], []
    if status == "missed":
        where.append("(status = 'missed' OR (status = 'open' AND due_on < ?))")
        params.append(today_iso)
    elif status == "due-soon":
        where.append("status = 'open' AND due_on >= ? AND due_on <= ?")
        params += [today_iso, soon_iso]
    elif status == "open":
        where.append("status = 'open' AND (due_on IS NULL OR due_on > ?)")
        params.append(soon_iso)
    elif status is not None:
        where.append("status = ?")
        params.append(status)
    if due_before is not None:
        where.append("due_on <= ?")
        params.append(due_before.isoformat())
    if case_id is not None:
        where.append("case_id = ?")
        params.append(case_id)
    sql = "SELECT * FROM deadlines" + (f" WHERE {' AND '.join(where)}" if where else "")
    sql += " ORDER BY due_on, case_number, deadline LIMIT ?"
    rows = store.query_dicts(sql, [*params, limit])
    for row in rows:
        row["recorded_status"] = row["status"]
        row["status"] = effective_status(row, today, due_soon_days)
        row["days_overdue"] = (today - date.fromisoformat(row["due_on"])).days \
            if row["status"] == "missed" and row["due_on"] else 0
    return rows


def open_deadlines_due_by(store: Store, day: date, limit: int = 10_000) -> list[dict[str, Any]]:
    """Open deadlines due on or before `day`: the scheduler's scan (the (status, due_on) index answers it)."""
    return store.query_dicts(OPEN_DUE_BY, (day.isoformat(), limit))


OPEN_DUE_BY = "SELECT * FROM deadlines WHERE status = 'open' AND due_on <= ? ORDER BY due_on LIMIT ?"


def effective_status(row: dict[str, Any], today: date, due_soon_days: int) -> str:
    if row["status"] != "open":
        return row["status"]
    if row["due_on"] is None:
        return "open"
    left = (date.fromisoformat(row["due_on"]) - today).days
    return "missed" if left < 0 else "due-soon" if left <= due_soon_days else "open"


def freezes(store: Store, *, active: bool | None = None, municipality: str | None = None) -> list[dict[str, Any]]:
    """Art. 38: freezes, active or lifted, with the blocking case."""
    where, params = [], []
    if active is not None:
        where.append("active = ?")
        params.append(int(active))
    if municipality:
        where.append("municipality = ?")
        params.append(municipality)
    sql = "SELECT * FROM freezes" + (f" WHERE {' AND '.join(where)}" if where else "")
    rows = store.query_dicts(sql + " ORDER BY municipality, since, case_number", params)
    return [{**r, "active": bool(r["active"])} for r in rows]


def alerts(store: Store, *, since: str | None = None, case_id: str | None = None,
           limit: int = 500) -> list[dict[str, Any]]:
    """Alerts raised at or after `since` (an ISO timestamp), oldest first."""
    where, params = [], []
    if since:
        where.append("raised_at >= ?")
        params.append(since)
    if case_id:
        where.append("case_id = ?")
        params.append(case_id)
    sql = "SELECT * FROM alerts" + (f" WHERE {' AND '.join(where)}" if where else "")
    return store.query_dicts(sql + " ORDER BY raised_at, alert_id LIMIT ?", [*params, limit])


def municipalities(store: Store, *, text: str | None = None) -> list[dict[str, Any]]:
    where, params = "", []
    if text:
        where, params = " WHERE search LIKE ?", [f"%{normalise_name(text)}%"]
    rows = store.query_dicts(f"SELECT * FROM municipalities{where} ORDER BY name", params)
    return [_municipality(r) for r in rows]


def municipality(store: Store, code: str) -> dict[str, Any] | None:
    rows = store.query_dicts("SELECT * FROM municipalities WHERE code = ?", (code,))
    return _municipality(rows[0]) if rows else None


def _municipality(row: dict[str, Any]) -> dict[str, Any]:
    decoded = _decoded(row)
    decoded["frozen"] = bool(decoded["frozen"])
    decoded.pop("search", None)
    return decoded
