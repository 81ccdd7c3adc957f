"""The scheduler's daily check of the read models against the events (projections/check.py), and one at its
start: the result kept for `/health` and the pages, a `read-model-differs` system alert per table that differs,
and a JSON log line per table."""

from __future__ import annotations

from typing import Any

from infrastructure.store import open_store
from projections.check import check_keep_and_alert
from scheduler.jsonlog import Log
from scheduler.scan import SCHEDULER


def check_read_models(app: Any, database_url: str, log: Log) -> None:
    """Check every read model in a connection of its own (a scan may run meanwhile in another thread of the
    scheduler), as of the application's clock."""
    store = open_store(database_url)
    try:
        result = check_keep_and_alert(app, store, app.clock(), SCHEDULER, log)
        log("read-models-checked", ok=result.ok, tables=sorted(result.counts), positions=result.positions)
    finally:
        store.close()
