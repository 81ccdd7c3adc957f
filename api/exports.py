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

iCalendar (`/feeds/...`, api/subscriptions.py): built by infrastructure/ical.py, which the scheduler's e-mails
share (imported here, so `api.exports.calendar` stays where the API's readers look for it).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Iterator
from typing import Any

from infrastructure.ical import FEED_NAMESPACE, REMINDER_HOUR, calendar, deadline_uid

__all__ = ["BOM", "CSV_CHUNK", "FEED_NAMESPACE", "FORMULA_STARTS", "REMINDER_HOUR", "SEPARATOR", "calendar",
           "csv_lines", "deadline_uid"]

#: The byte order mark, first in every CSV file.
BOM = "\ufeff"
SEPARATOR = ";"
#: Cells a spreadsheet would take for a formula.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
#: Rows written to the answer at a time.
CSV_CHUNK = 500


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
