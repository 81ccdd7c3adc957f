"""The scheduler's log: one JSON object per line on stdout, for a log shipper to read.

Every line has `event` (leader, waiting, alert, scan, case-unreadable, redelivering, delivered, delivery-failed,
delivery-unrecorded, scan-failed, leadership-lost, webhook-not-drained, stopped) and `at` (the clock's time, UTC);
the rest are the event's own fields. Nothing else is printed on stdout.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from datetime import datetime
from typing import Any, Protocol, TextIO

from domain.alerts import Alert
from projections.rows import json_default


class Log(Protocol):
    def __call__(self, event: str, **fields: Any) -> None: ...


def json_lines(clock: Callable[[], datetime], stream: TextIO | None = None) -> Log:
    """A log writing each event as one JSON line to `stream` (stdout by default), flushed at once.

    Writing the log never fails its caller: a line the stream refuses (a full disk under `>> alerts.jsonl`, a
    closed pipe) is said on stderr if it can be, and dropped otherwise. The alerts themselves are events; the log
    only tells of them, and a delivery or a scan must not stop because it could not be told."""

    def log(event: str, **fields: Any) -> None:
        line = json.dumps({"event": event, "at": clock(), **fields}, default=json_default, ensure_ascii=False)
        out = stream or sys.stdout
        try:
            out.write(line + "\n")
            out.flush()
        except (OSError, ValueError) as error:  # ValueError: a closed stream
            try:
                sys.stderr.write(f"tramita-scheduler: log line not written ({type(error).__name__}: {error}): "
                                 f"{line}\n")
                sys.stderr.flush()
            except (OSError, ValueError):
                pass  # nowhere left to say it

    return log


def alert_fields(alert: Alert) -> dict[str, Any]:
    """What an alert says, for the log line and the webhook's body: the case, the deadline and its article, who
    must act, the due date, the days overdue, and when it was raised; a system alert's subject and message (None
    on a case's alert), and null case fields on a system alert."""
    return {"alert_id": str(alert.id), "case_id": alert.case_id, "case_number": alert.case_number,
            "deadline": alert.deadline, "kind": alert.kind, "rule": alert.rule, "article": alert.article,
            "who": alert.who, "municipality": alert.municipality,
            "due_on": alert.due_on.isoformat() if alert.due_on else None, "days_overdue": alert.days_overdue,
            "raised_on": alert.raised_on.isoformat(), "raised_at": alert.raised_at.isoformat(),
            "subject": alert.subject, "message": alert.message}
