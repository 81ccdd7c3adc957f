"""What the lists give besides JSON pages: every row as CSV, streamed, and a body's open deadlines as iCalendar.

CSV (`GET /deadlines` and `GET /alerts` with `?format=csv` or `Accept: text/csv`): every row the filters select,
never a page, written as it is read (a few thousand rows at a time), for the spreadsheet programs the clerks use.
The choices, for Excel as installed in Brazil (pt-BR):

- UTF-8 with a byte order mark: without it Excel reads the file as Windows-1252 and shows "FeijÃ³" for "Feijó";
  the csv module (`encoding="utf-8-sig"`), LibreOffice and pandas read the mark and drop it;
- `;` between fields: pt-BR Excel takes `,` as the decimal separator and splits a double-click-opened file on
  the list separator of the locale, `;`; CRLF line ends, fields quoted when they hold `;`, quotes or line ends
  (RFC 4180 with another separator);
- the header row is the JSON fields' names, so a column means what it means in the API; dates are ISO 8601
  (YYYY-MM-DD), which pt-BR Excel reads as dates;
- a text cell that begins with `=`, `+`, `-`, `@`, a tab or a carriage return is written after an apostrophe
  (`'=...`): a spreadsheet would run it as a formula (OWASP's "CSV injection"); numbers are written as they are.

iCalendar (`/feeds/...`, api/subscriptions.py): each open deadline is an all-day event on its due day, with a
UID stable across reads and versions of the feed (derived from the case and the deadline's key), so a calendar
program updates the event rather than adding another.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Iterator
from datetime import date, datetime, timedelta, timezone
from typing import Any
from uuid import NAMESPACE_URL, uuid5

#: The byte order mark, first in every CSV file.
BOM = "\ufeff"
SEPARATOR = ";"
#: Cells a spreadsheet would take for a formula.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
#: Rows written to the answer at a time.
CSV_CHUNK = 500
FEED_NAMESPACE = uuid5(NAMESPACE_URL, "urn:tramita:deadline-events")


def _cell(value: Any) -> Any:
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return "" if value is None else value


def csv_lines(columns: list[str], rows: Iterable[dict[str, Any]]) -> Iterator[str]:
    """The CSV text of `rows` (only `columns`, in that order), a few hundred rows per piece, the BOM and the header
    first."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, delimiter=SEPARATOR, lineterminator="\r\n")
    writer.writerow(columns)
    yield BOM + buffer.getvalue()
    buffer.seek(0)
    buffer.truncate()
    for count, row in enumerate(rows, 1):
        writer.writerow([_cell(row.get(column)) for column in columns])
        if count % CSV_CHUNK == 0:
            yield buffer.getvalue()
            buffer.seek(0)
            buffer.truncate()
    yield buffer.getvalue()


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
