"""The latest read-model check's result, kept where `/health` and the pages can read it without checking again.

One row (`read_model_check`, name `latest`): when the check ran, up to which positions, and the tables whose rows
differed from what the events give, with a sample of the rows. It is a row of the database like any other: a
database administrator can edit or delete it, which is why the check also raises a system alert for each table
that differs (an event, in the hash chain), and why `tramita verify` checks again rather than reading it.
`tramita rebuild` forgets the tables it rebuilt from it in the transaction of its swap: they now come from the
events.
"""

from __future__ import annotations

import json
from typing import Any

from infrastructure.store import Cursor, Store

CHECKED = "CREATE TABLE IF NOT EXISTS read_model_check (name TEXT PRIMARY KEY, checked_at TEXT NOT NULL, " \
          "result TEXT NOT NULL)"
LATEST = "latest"


def save(store: Store, result: dict[str, Any]) -> None:
    """Keep `result` (a `check.ReadModelCheck.as_dict()`) as the latest check's."""
    with store.transaction() as tx:
        tx.execute(CHECKED)
        tx.execute("DELETE FROM read_model_check WHERE name = ?", (LATEST,))
        tx.execute("INSERT INTO read_model_check (name, checked_at, result) VALUES (?, ?, ?)",
                   (LATEST, result["checked_at"], json.dumps(result, ensure_ascii=False, sort_keys=True)))


def latest(store: Store) -> dict[str, Any] | None:
    """The latest check's result, or None when none was kept (or the row no longer reads as one)."""
    if not store.table_exists("read_model_check"):
        return None
    rows = store.query("SELECT result FROM read_model_check WHERE name = ?", (LATEST,))
    try:
        found = json.loads(rows[0][0]) if rows else None
    except (TypeError, ValueError):
        return None
    return found if isinstance(found, dict) and isinstance(found.get("differing"), dict) else None


def forget(tx: Cursor, projections: list[str], tables: list[str]) -> None:
    """In the rebuild's swap: drop these projections' tables (and their tracking and failures rows) from the latest
    check's result: their rows now come from the events."""
    tx.execute(CHECKED)
    rows = tx.execute("SELECT result FROM read_model_check WHERE name = ?", (LATEST,)).fetchall()
    if not rows:
        return
    try:
        result = json.loads(rows[0][0])
        differing = {}
        for table, found in result["differing"].items():
            if table in tables:
                continue
            sample = [row for row in found["sample"] if row["key"].get("projection") not in projections]
            if len(sample) < len(found["sample"]):  # the tracking or failures rows of a projection rebuilt
                found = {"rows": found["rows"] - len(found["sample"]) + len(sample), "sample": sample}
            if found["rows"] > 0:
                differing[table] = found
    except (TypeError, ValueError, KeyError, AttributeError):
        tx.execute("DELETE FROM read_model_check WHERE name = ?", (LATEST,))
        return
    result.update(differing=differing, ok=not differing, rebuilt=sorted({*result.get("rebuilt", []), *projections}))
    tx.execute("UPDATE read_model_check SET result = ? WHERE name = ?",
               (json.dumps(result, ensure_ascii=False, sort_keys=True), LATEST))


def summary(store: Store, positions: dict[str, Any], last: int) -> dict[str, Any]:
    """What `/health` and the pages say of the read models without checking them: each projection behind the log
    (by how many notifications) or ahead of it (a tracking position beyond the last event: pushed forward), and
    the latest check's result (when, the rows that differed per table, a sample)."""
    found = latest(store) or {}
    differing = found.get("differing", {})
    try:
        sample = [row for entry in differing.values() for row in entry["sample"]][:20]
        counts = {table: int(entry["rows"]) for table, entry in differing.items()}
    except (TypeError, KeyError, ValueError, AttributeError):  # an edited result: it says only that it differs
        sample, counts = [], {"read_model_check": 1}
    return {"behind": {name: last - int(p) for name, p in positions.items() if int(p) < last},
            "ahead": sorted(name for name, p in positions.items() if int(p) > last),
            "checked_at": found.get("checked_at"), "differing": counts, "sample": sample}
