"""Properties that must hold for every input, not only at the boundaries the other tests pin."""

from __future__ import annotations

from datetime import date, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from domain.calendar import CONVENTIONS, Calendar
from domain.parameters import shipped_statute
from domain.rules import judge_plebiscite

STATUTE = shipped_statute()
CALENDAR = Calendar()
ON = date(2026, 1, 5)


@st.composite
def ballots(draw):
    registered = draw(st.integers(min_value=1, max_value=200_000))
    turnout = draw(st.integers(min_value=0, max_value=registered))
    yes = draw(st.integers(min_value=0, max_value=turnout))
    no = draw(st.integers(min_value=0, max_value=turnout - yes))
    blank = draw(st.integers(min_value=0, max_value=turnout - yes - no))
    return {"registered": registered, "turnout": turnout, "yes": yes, "no": no, "blank": blank,
            "void": turnout - yes - no - blank}


@given(ballots())
@settings(max_examples=300, deadline=None)
def test_a_plebiscite_is_favourable_exactly_when_turnout_and_yes_are_absolute_majorities(result):
    verdict = judge_plebiscite(STATUTE, ON, result)
    expected = 2 * result["turnout"] > result["registered"] and 2 * result["yes"] > result["turnout"]
    assert verdict.holds is expected
    assert bool(verdict.reasons) is not expected


@given(st.dates(min_value=date(1992, 1, 1), max_value=date(2030, 12, 31)),
       st.integers(min_value=0, max_value=180), st.sampled_from(CONVENTIONS))
@settings(max_examples=300, deadline=None)
def test_a_deadline_in_days_falls_due_on_the_first_business_day_from_its_raw_last_day(start, length, convention):
    due = CALENDAR.due_date(start, length, "days", convention)
    assert due.raw == start + timedelta(days=length)
    assert due.due >= due.raw and CALENDAR.is_business_day(due.due)
    assert all(not CALENDAR.is_business_day(due.raw + timedelta(days=n)) for n in range((due.due - due.raw).days))


@given(st.dates(min_value=date(1992, 1, 1), max_value=date(2030, 12, 31)), st.integers(min_value=1, max_value=24))
@settings(max_examples=300, deadline=None)
def test_the_two_conventions_differ_only_when_the_month_lacks_the_day_number(start, months):
    lei = CALENDAR.due_date(start, months, "months", "lei-9784-art-66")
    cc = CALENDAR.due_date(start, months, "months", "cc-art-132")
    if lei.raw.day == start.day:
        assert lei.raw == cc.raw
    else:
        assert lei.raw.day < start.day and cc.raw == lei.raw + timedelta(days=1)
