"""Business days and statutory deadlines on the Acre calendar (docs/law/deadlines.md).

Holidays are data: the `holidays` library's Brazil/AC calendar (national and Acre state
holidays) corrected by `domain/statute/calendar-corrections.toml`. No clock is read here and no
deadline length is fixed here: callers pass the legal date and the length the statute sets.
"""

from __future__ import annotations

import calendar as _gregorian
import tomllib
from dataclasses import dataclass
from datetime import date, timedelta
from importlib import resources
from pathlib import Path
from typing import Any

import holidays

LEI_9784_ART_66 = "lei-9784-art-66"
CC_ART_132 = "cc-art-132"
CONVENTIONS = (LEI_9784_ART_66, CC_ART_132)
UNITS = ("days", "months")

_ENTRY_KEYS = {"name", "source", "date", "month", "day", "from_year", "until_year"}


@dataclass(frozen=True)
class DueDate:
    """Lei 9.784/1999 art. 66: a deadline's last day, and why it moved to a later business day."""

    due: date
    raw: date
    convention: str
    calendar_version: str
    moved_over: tuple[str, ...]


@dataclass(frozen=True)
class Correction:
    """docs/law/calendars-and-elections.md: one entry of the State's calendar decree.

    Either one-off (`on`) or recurring every year from `from_year` to `until_year` (`month`/`day`).
    """

    name: str
    source: str
    on: date | None = None
    month: int | None = None
    day: int | None = None
    from_year: int | None = None
    until_year: int | None = None

    def day_in(self, year: int) -> date | None:
        """The day this entry falls on in `year`, if any (a recurring 29 Feb skips common years)."""
        if self.on is not None:
            return self.on if self.on.year == year else None
        assert self.month is not None and self.day is not None and self.from_year is not None
        if year < self.from_year or (self.until_year is not None and year > self.until_year):
            return None
        try:
            return date(year, self.month, self.day)
        except ValueError:
            return None


class Calendar:
    """docs/law/calendars-and-elections.md: national and Acre holidays, corrections winning."""

    def __init__(self, corrections_path: Path | None = None) -> None:
        if corrections_path is None:
            resource = resources.files("domain.statute").joinpath("calendar-corrections.toml")
            text, where = resource.read_text(encoding="utf-8"), "calendar-corrections.toml"
        else:
            text, where = corrections_path.read_text(encoding="utf-8"), str(corrections_path)
        data = tomllib.loads(text)
        file_version = data.get("version")
        if not isinstance(file_version, str) or not file_version:
            raise ValueError(f"{where}: missing 'version'")
        self.adds = tuple(_parse_entry(e, f"{where} [[add]] #{i + 1}") for i, e in enumerate(data.get("add", [])))
        self.removes = tuple(
            _parse_entry(e, f"{where} [[remove]] #{i + 1}") for i, e in enumerate(data.get("remove", []))
        )
        self.version = f"holidays-{holidays.__version__}+corrections-{file_version}"
        self._years: dict[int, dict[date, tuple[str, ...]]] = {}

    def holiday_name(self, day: date) -> str | None:
        """Lei 9.784/1999 art. 66 §1: the national or Acre holiday on `day` (names joined by "; ")."""
        names = self._holidays_of(day.year).get(day)
        return "; ".join(names) if names else None

    def is_business_day(self, day: date) -> bool:
        """Lei 9.784/1999 art. 66 §1: a day with office hours: not Saturday, Sunday or a holiday."""
        return _closed_reason(day, self.holiday_name(day)) is None

    def next_business_day(self, day: date) -> date:
        """Lei 9.784/1999 art. 66 §1: `day` itself when it is a business day, else the next one."""
        while not self.is_business_day(day):
            day += timedelta(days=1)
        return day

    def due_date(self, start: date, length: int, unit: str, convention: str) -> DueDate:
        """Lei 9.784/1999 art. 66 (or Código Civil art. 132 §3 for months): the last day to act.

        The start day is excluded and the last day included; days run continuously. Months end on
        the same day number `length` months later; when that month lacks it, on its last day
        (`lei-9784-art-66`) or on the first day of the next month (`cc-art-132`). A last day
        without office hours moves to the next business day.
        """
        if convention not in CONVENTIONS:
            raise ValueError(f"unknown counting convention {convention!r} (known: {', '.join(CONVENTIONS)})")
        if unit not in UNITS:
            raise ValueError(f"unknown deadline unit {unit!r} (known: {', '.join(UNITS)})")
        if length < 0:
            raise ValueError(f"deadline length must be >= 0, got {length}")
        raw = start + timedelta(days=length) if unit == "days" else _add_months(start, length, convention)
        due, moved_over = raw, []
        while (reason := _closed_reason(due, self.holiday_name(due))) is not None:
            moved_over.append(f"{due.isoformat()} {reason}")
            due += timedelta(days=1)
        return DueDate(due, raw, convention, self.version, tuple(moved_over))

    def _holidays_of(self, year: int) -> dict[date, tuple[str, ...]]:
        """The year's holidays: library + recurring adds - removes + one-off adds (cached)."""
        if year not in self._years:
            library = holidays.country_holidays("BR", subdiv="AC", years=year, language="pt_BR")
            table = {d: tuple(str(n).split("; ")) for d, n in library.items()}
            for entry in (e for e in self.adds if e.on is None):
                _add_name(table, entry.day_in(year), entry.name)
            for entry in self.removes:
                _remove_name(table, entry.day_in(year), entry)
            for entry in (e for e in self.adds if e.on is not None):
                _add_name(table, entry.day_in(year), entry.name)
            self._years[year] = table
        return self._years[year]


def _add_months(start: date, months: int, convention: str) -> date:
    """Lei 9.784/1999 art. 66 §3 / CC art. 132 §3: same day number `months` later, or its fallback."""
    years, month_index = divmod(start.month - 1 + months, 12)
    year, month = start.year + years, month_index + 1
    last = _gregorian.monthrange(year, month)[1]
    if start.day <= last:
        return date(year, month, start.day)
    if convention == LEI_9784_ART_66:
        return date(year, month, last)
    return date(year, month, last) + timedelta(days=1)


def _closed_reason(day: date, holiday: str | None) -> str | None:
    """Lei 9.784/1999 art. 66 §1: why `day` has no office hours (weekend and/or holiday), or None."""
    weekend = {5: "Saturday", 6: "Sunday"}.get(day.weekday())
    reasons = [r for r in (weekend, holiday) if r]
    return ", ".join(reasons) if reasons else None


def _add_name(table: dict[date, tuple[str, ...]], day: date | None, name: str) -> None:
    if day is not None and name not in table.get(day, ()):
        table[day] = table.get(day, ()) + (name,)


def _remove_name(table: dict[date, tuple[str, ...]], day: date | None, entry: Correction) -> None:
    if day is None:
        return
    names = table.get(day, ())
    kept = tuple(n for n in names if n.casefold() != entry.name.casefold())
    if kept == names:
        raise ValueError(
            f"calendar correction removes {entry.name!r} on {day.isoformat()} ({entry.source}), "
            f"but the calendar has {' / '.join(names) or 'no holiday'} that day"
        )
    if kept:
        table[day] = kept
    else:
        del table[day]


def _parse_entry(raw: dict[str, Any], where: str) -> Correction:
    """docs/law/calendars-and-elections.md: an entry has name, source and a date or month/day."""
    if not isinstance(raw, dict):
        raise ValueError(f"{where}: not a table")
    if unknown := set(raw) - _ENTRY_KEYS:
        raise ValueError(f"{where}: unknown keys {sorted(unknown)}")
    for key in ("name", "source"):
        if not isinstance(raw.get(key), str) or not raw[key].strip():
            raise ValueError(f"{where}: missing {key!r}")
    on = raw.get("date")
    if on is not None:
        if type(on) is not date:
            raise ValueError(f"{where}: 'date' must be a TOML date (YYYY-MM-DD), got {on!r}")
        if set(raw) & {"month", "day", "from_year", "until_year"}:
            raise ValueError(f"{where}: give either 'date' or 'month'/'day'/'from_year', not both")
        return Correction(raw["name"], raw["source"], on=on)
    month, day, from_year, until_year = (raw.get(k) for k in ("month", "day", "from_year", "until_year"))
    if not all(isinstance(v, int) for v in (month, day, from_year)):
        raise ValueError(f"{where}: needs 'date', or integer 'month', 'day' and 'from_year'")
    try:
        date(2000, month, day)
    except ValueError as error:
        raise ValueError(f"{where}: no such day {month}/{day}") from error
    if until_year is not None and (not isinstance(until_year, int) or until_year < from_year):
        raise ValueError(f"{where}: 'until_year' must be an integer >= 'from_year'")
    return Correction(raw["name"], raw["source"], month=month, day=day, from_year=from_year, until_year=until_year)
