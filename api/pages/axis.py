"""A case's deadlines on a time axis, drawn on the server as inline SVG (no script, no external file).

One row per deadline: a bar from the day it started to its due date, a mark on the day an act closed it (on time:
inside the bar; late: past the due date, the delay drawn in red), and for a deadline still open the line runs on to
the day of the view (past its due date: missed). The status is also written in words on each row, so the colour is
never the only sign. Dates are the legal dates of the acts.
"""

from __future__ import annotations

from datetime import date
from typing import Any
from xml.sax.saxutils import escape, quoteattr

from markupsafe import Markup

from api.pages import format as fmt

WIDTH, LABEL, ROW, TOP, RIGHT = 960, 330, 30, 34, 20
TICKS = 6


def _x(day: date, first: date, last: date) -> float:
    span = max((last - first).days, 1)
    return LABEL + (WIDTH - LABEL - RIGHT) * (day - first).days / span


def _days(row: dict[str, Any]) -> list[date]:
    return [date.fromisoformat(row[k]) for k in ("starts_on", "due_on", "closed_on") if row.get(k)]


def deadline_axis(rows: list[dict[str, Any]], today: date, words: fmt.Words) -> Markup:
    """The SVG of `rows` (the case file's deadline rows, casefile.deadline_rows: with their status on `today`, the
    day of the view, and their words written), in the page's `words`."""
    if not rows:
        return Markup("")
    _ = words.gettext
    days = [d for row in rows for d in _days(row)]
    if any(row["status"] in ("open", "due-soon", "missed") and not row.get("closed_on") for row in rows):
        days.append(today)
    first, last = min(days), max(days)
    height = TOP + ROW * len(rows) + 10
    title = _("Deadlines of the case on a time axis, as of %(day)s", day=words.day(today))
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="axis" viewBox="0 0 {WIDTH} {height}" '
             f'role="img" aria-label={quoteattr(title)}>', f"<title>{escape(title)}</title>"]
    parts += _ticks(first, last, height, words)
    if first <= today <= last:
        x = _x(today, first, last)
        parts.append(f'<line class="today" x1="{x:.1f}" y1="{TOP - 12}" x2="{x:.1f}" y2="{height - 6}"/>'
                     f'<text class="today-label" x="{x + 3:.1f}" y="{TOP - 14}">{escape(words.day(today))}</text>')
    for index, row in enumerate(rows):
        parts += _row(row, TOP + ROW * index, first, last, today, words)
    parts.append("</svg>")
    return Markup("".join(parts))


def _ticks(first: date, last: date, height: int, words: fmt.Words) -> list[str]:
    span = max((last - first).days, 1)
    out = []
    for n in range(TICKS + 1):
        day = date.fromordinal(first.toordinal() + round(span * n / TICKS))
        x = _x(day, first, last)
        anchor = "end" if n == TICKS else "middle"  # the last label ends at the axis's end, not past it
        out.append(f'<line class="tick" x1="{x:.1f}" y1="{TOP - 6}" x2="{x:.1f}" y2="{height - 6}"/>'
                   f'<text class="tick-label" x="{x:.1f}" y="{TOP - 22}" text-anchor="{anchor}">'
                   f"{escape(words.day(day))}</text>")
    return out


def _row(row: dict[str, Any], y: int, first: date, last: date, today: date, words: fmt.Words) -> list[str]:
    status = row["status"]
    _ = words.gettext
    who = row["who_shown"]
    if row.get("municipality"):
        who += f" ({row.get('municipality_shown') or row['municipality']})"
    legend = f"{row['article_shown']} · {who}"
    middle = y + ROW / 2
    start = date.fromisoformat(row["starts_on"]) if row.get("starts_on") else first
    due = date.fromisoformat(row["due_on"]) if row.get("due_on") else None
    closed = date.fromisoformat(row["closed_on"]) if row.get("closed_on") else None
    tooltip = _("%(deadline)s: started %(start)s, due %(due)s, %(status)s",
                deadline=row.get("deadline_shown") or row.get("deadline", ""),
                start=words.day(start), due=words.day(due) or _("no due date yet"),
                status=row["status_shown"])
    if closed:
        tooltip += " — " + _("closed on %(day)s", day=words.day(closed))
    out = [f'<g class="deadline {escape(status)}" data-deadline={quoteattr(row.get("deadline", ""))}>',
           f"<title>{escape(tooltip)}</title>",
           f'<text class="who" x="4" y="{middle - 2:.1f}">{escape(legend)}</text>',
           f'<text class="status" x="4" y="{middle + 10:.1f}">{escape(row["status_shown"])}</text>']
    x0 = _x(start, first, last)
    if due is not None:
        x1 = _x(due, first, last)
        out.append(f'<rect class="span" x="{x0:.1f}" y="{middle - 5:.1f}" width="{max(x1 - x0, 2):.1f}" height="10"/>'
                   f'<line class="due" x1="{x1:.1f}" y1="{middle - 9:.1f}" x2="{x1:.1f}" y2="{middle + 9:.1f}"/>')
    else:
        x1 = _x(closed or today, first, last)
        out.append(f'<line class="undated" x1="{x0:.1f}" y1="{middle:.1f}" x2="{x1:.1f}" y2="{middle:.1f}"/>')
    if closed is not None:
        xc = _x(closed, first, last)
        if due is not None and closed > due:
            out.append(f'<line class="delay" x1="{x1:.1f}" y1="{middle:.1f}" x2="{xc:.1f}" y2="{middle:.1f}"/>')
        out.append(f'<circle class="closing" cx="{xc:.1f}" cy="{middle:.1f}" r="5"/>')
    elif due is not None and status == "missed" and today > due:
        out.append(f'<line class="overdue" x1="{x1:.1f}" y1="{middle:.1f}" x2="{_x(today, first, last):.1f}" '
                   f'y2="{middle:.1f}"/>')
    elif due is not None and today < due:
        out.append(f'<line class="waiting" x1="{x0:.1f}" y1="{middle:.1f}" x2="{_x(today, first, last):.1f}" '
                   f'y2="{middle:.1f}"/>')
    out.append("</g>")
    return out
