"""iCalendar: a body's deadlines as all-day events, for the calendar feeds (api/subscriptions.py) and the
attachment of each alert mailed (infrastructure/mail.py).

Each deadline is an all-day event on its due day, with a UID stable across reads and versions of the feed (derived
from the case and the deadline's key), so a calendar program updates the event rather than adding another; an open
deadline's event carries a VALARM on each day the scheduler warns on.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta, timezone
from typing import Any
from uuid import NAMESPACE_URL, uuid5

FEED_NAMESPACE = uuid5(NAMESPACE_URL, "urn:tramita:deadline-events")


def deadline_uid(case_id: str, deadline: str) -> str:
    """The iCalendar UID of a deadline: the same at every read of every feed that lists it."""
    return f"{uuid5(FEED_NAMESPACE, f'{case_id}:{deadline}')}@tramita"


#: The hour of the day, in the reader's calendar, at which a deadline's reminders ring (a working morning).
REMINDER_HOUR = 9


def calendar(name: str, deadlines: list[dict[str, Any]], *, expected: dict[tuple[str, str], list[str]],
             stamp: datetime, reminders: tuple[int, ...] = ()) -> bytes:
    """An iCalendar of the deadlines: one all-day event each, on its due day, naming the case, the act expected,
    the article and who must act (in Portuguese); `expected` maps (case kind, rule) to the acts that close it.
    Each event of a deadline still open reminds its reader (a VALARM) `reminders` days before its due day, the
    days the scheduler warns on (TRAMITA_ALERT_THRESHOLDS); 0 is the due day itself."""
    from icalendar import Alarm, Calendar, Event

    feed = Calendar()
    feed.add("prodid", "-//tramita//prazos LC 35-1991//PT-BR")
    feed.add("version", "2.0")
    feed.add("calscale", "GREGORIAN")
    feed.add("method", "PUBLISH")
    feed.add("x-wr-calname", name)
    feed.add("x-wr-timezone", "America/Rio_Branco")
    for row in deadlines:
        due = date.fromisoformat(row["due_on"])
        acts = expected.get((row.get("case_kind") or "", row["rule"])) or [row["rule"]]
        event = Event()
        event.add("uid", deadline_uid(row["case_id"], row["deadline"]))
        event.add("dtstamp", stamp.astimezone(timezone.utc))
        event.add("dtstart", due)
        event.add("dtend", due + timedelta(days=1))
        event.add("transp", "TRANSPARENT")
        late = " (vencido)" if row.get("status") == "missed" else ""
        event.add("summary", f"Prazo{late}: {' ou '.join(acts)} — {row['case_number']} ({row['article']})")
        event.add("description", "\n".join([
            f"Processo {row['case_number']}: prazo {row['deadline']} ({row['article']}).",
            f"Ato esperado: {' ou '.join(acts)}.",
            f"Quem deve agir: {row['who']}{' de ' + row['municipality'] if row.get('municipality') else ''}.",
            f"Vence em {due.isoformat()} (último dia, horário de Rio Branco).",
        ]))
        event.add("categories", ["prazo", row["article"]])
        for days in reminders if row.get("status") != "missed" else ():
            alarm = Alarm()
            alarm.add("action", "DISPLAY")
            alarm.add("trigger", timedelta(days=-days, hours=REMINDER_HOUR))  # from the due day's start, local
            when = "hoje" if days == 0 else "amanhã" if days == 1 else f"em {days} dias"
            alarm.add("description", f"Prazo vence {when}: {' ou '.join(acts)} — {row['case_number']}")
            event.add_component(alarm)
        feed.add_component(event)
    return feed.to_ical()
