"""`tramita rebuild`: the projections rebuilt from the first event beside the live tables, then swapped in.

The live tables stay readable (and the live projector keeps writing them) until the new ones are complete; the
swap, with a last catch-up, is one transaction.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from typing import Any

from projections.failures import Failure
from projections.schema import FAILURES, PROJECTIONS, TRACKING

REBUILD_SUFFIX = "__rebuild"


def rebuild(projector: Any, progress: Callable[[int, int], None] | None = None) -> int:
    """Rebuild `projector`'s projections (a projections.projector.Projector) from the first event beside the
    live tables, then swap them in.

    The live tables stay readable (and the live projector keeps writing them) until the new ones are
    complete; the swap, with a last catch-up, is one transaction. Returns the notifications read.
    """
    token = secrets.token_hex(4)
    with projector.store.transaction() as tx:
        tx.execute(TRACKING)
        tx.execute(FAILURES)
        for name in projector.names:
            for table in PROJECTIONS[name].tables:
                tx.execute(f"DROP TABLE IF EXISTS {table.name}{REBUILD_SUFFIX}")
                for statement in table.ddl(f"{table.name}{REBUILD_SUFFIX}", token):
                    tx.execute(statement)
            tx.execute("DELETE FROM projection_tracking WHERE projection = ?", (name + REBUILD_SUFFIX,))
            tx.execute("DELETE FROM projection_failures WHERE projection = ?", (name + REBUILD_SUFFIX,))
            tx.execute("INSERT INTO projection_tracking (projection, position, token, fingerprint) "
                       "VALUES (?, 0, ?, ?)", (name + REBUILD_SUFFIX, token, PROJECTIONS[name].fingerprint))
    builder = type(projector)(projector.app, projector.store, names=projector.names, batch_size=projector.batch_size,
                                  cache_size=projector.cache_size, audit=False)
    total = projector.app.recorder.max_notification_id() or 0
    targets = builder._targets(REBUILD_SUFFIX)
    done = 0
    recorded: list[tuple[str, Failure]] = []
    while True:
        with projector.store.transaction() as tx:
            covered, failed = builder._batch(tx, targets)
        recorded += failed
        if covered == 0:
            break
        done += covered
        if progress:
            progress(targets[0].position, max(total, targets[0].position))
    with projector.store.transaction() as tx:
        while (last := builder._batch(tx, targets))[0] > 0:
            done += last[0]
            recorded += last[1]
        for target in targets:
            for table in target.projection.tables:
                tx.execute(f"DROP TABLE IF EXISTS {table.name}")
                tx.execute(f"ALTER TABLE {table.name}{REBUILD_SUFFIX} RENAME TO {table.name}")
            name = target.projection.name
            tx.execute("DELETE FROM projection_tracking WHERE projection IN (?, ?)", (name, target.tracking_name))
            tx.execute("INSERT INTO projection_tracking (projection, position, token, fingerprint) "
                       "VALUES (?, ?, ?, ?)", (name, target.position, token, target.projection.fingerprint))
            tx.execute("DELETE FROM projection_failures WHERE projection = ?", (name,))
            tx.execute("UPDATE projection_failures SET projection = ? WHERE projection = ?",
                       (name, target.tracking_name))
    projector._alerts.raise_for(recorded, projector.log)
    if progress:
        progress(targets[0].position if targets else 0, max(total, targets[0].position if targets else 0))
    projector._forget()
    return done
