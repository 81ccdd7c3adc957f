"""The scheduler's log: one JSON object per line on stdout, for a log shipper to read.

Every line has `event` (leader, waiting, alert, scan, case-unreadable, redelivering, delivered, delivery-failed,
delivery-unrecorded, scan-failed, leadership-lost, webhook-not-drained, stopped) and `at` (the clock's time, UTC);
the rest are the event's own fields. Nothing else is printed on stdout.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any, Protocol, TextIO

from domain.alert_words import alert_words
from domain.alerts import Alert
from domain.application import Tramita
from domain.words import SYSTEM_ALERT_NAMES
from projections.rows import json_default


def _same(text: str) -> str:
    return text


def _nameless(code: str) -> str | None:
    return None


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


@dataclass(frozen=True)
class Wording:
    """How an alert's codes are said beside them: the catalogue's gettext in Portuguese (the wiring gives it, as
    the e-mails'; the identity leaves the English msgids) and a municipality's name by its key."""

    gettext: Callable[[str], str] = _same
    municipality_name: Callable[[str], str | None] = _nameless
    #: A whole number in the catalogue's language (Babel's `12.386` in Portuguese).
    number: Callable[[int], str] = str

    @classmethod
    def of(cls, app: Tramita, gettext: Callable[[str], str] = _same, number: Callable[[int], str] = str) -> Wording:
        """The wording of `app`'s alerts: a municipality named by its registry (its code alone when unknown)."""
        def name(code: str) -> str | None:
            try:
                return app.municipality(code).name
            except Exception:  # noqa: BLE001 - an alert is said with the code when the registry cannot name it
                return None

        return cls(gettext, name, number)


def alert_fields(alert: Alert, wording: Wording | None = None) -> dict[str, Any]:
    """What an alert says, for the log line and the webhook's body: the case, the deadline and its article, who
    must act, the due date, the days overdue, and when it was raised, as codes (receivers rely on them); beside them
    the same in words (`kind_name`, `who_name`, `municipality_name`, `deadline_name`, `article_text`, `due_on_text`)
    and `message`, the alert in one sentence in Portuguese (`message_en` in English). A system alert keeps its own
    subject and message (`message_en` the same), null case fields, and its kind in words."""
    wording = wording or Wording()
    fields = {"alert_id": str(alert.id), "case_id": alert.case_id, "case_number": alert.case_number,
              "deadline": alert.deadline, "kind": alert.kind, "rule": alert.rule, "article": alert.article,
              "who": alert.who, "municipality": alert.municipality,
              "due_on": alert.due_on.isoformat() if alert.due_on else None, "days_overdue": alert.days_overdue,
              "raised_on": alert.raised_on.isoformat(), "raised_at": alert.raised_at.isoformat(),
              "subject": alert.subject, "message": alert.message}
    if alert.case_id is None:
        kind = SYSTEM_ALERT_NAMES.get(alert.kind, alert.kind)
        return {**fields, "kind_name": wording.gettext(kind), "message_en": alert.message}
    names: dict[str, str | None] = {}

    def name(code: str) -> str | None:  # each municipality read once for both languages
        if code not in names:
            names[code] = wording.municipality_name(code)
        return names[code]

    said = alert_words(fields, wording.gettext, name, number=wording.number)
    english = alert_words(fields, names=name, dates=date.isoformat, number="{:,}".format)
    return {**fields, "message": said.sentence(alert.case_number or "", wording.gettext),
            "message_en": english.sentence(alert.case_number or ""), "kind_name": said.state,
            "who_name": said.who_name,
            "municipality_name": name(alert.municipality) if alert.municipality else None,
            "deadline_name": said.deadline, "article_text": said.article, "due_on_text": said.due}
