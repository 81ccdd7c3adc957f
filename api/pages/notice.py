"""The banner every signed-in page shows when its lists may not be what the events say: the latest check of the
read models against the events found rows that differ (projections/check.py), a projection's tracking position is
beyond the last event, or the projector is behind the log. It reads what `/health` reads (two small queries), never
checks again itself."""

from __future__ import annotations

from typing import Any

from flask_babel import gettext as _

from api.http import read_store, tramita
from projections import checked


def table_words(table: str) -> str:
    """A read model's table in the reader's words."""
    words = {
        "cases": _("cases"), "case_municipalities": _("the municipalities of the cases"), "deadlines": _("deadlines"),
        "freezes": _("Art. 38 freezes"), "alerts": _("alerts"), "alert_deliveries": _("alert deliveries"),
        "case_attachments": _("the documents of the cases"), "municipalities": _("municipalities"),
        "projection_tracking": _("the projections' positions"), "projection_failures": _("the projections' failures"),
    }
    return words.get(table, table)


def read_model_notice() -> dict[str, Any] | None:
    """What the banner says (None: nothing): `differs`, the tables in words, and `behind`, the most notifications a
    projection is behind the log."""
    store = read_store()
    if not store.table_exists("projection_tracking"):
        return None
    positions = dict(store.query("SELECT projection, position FROM projection_tracking"))
    found = checked.summary(store, positions, tramita().recorder.max_notification_id() or 0)
    differing = [*found["differing"], *(["projection_tracking"] if found["ahead"] else [])]
    behind = max(found["behind"].values(), default=0)
    if not differing and not behind:
        return None
    return {"differs": ", ".join(table_words(t) for t in dict.fromkeys(differing)), "behind": behind}
