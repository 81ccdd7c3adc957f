"""Business days and deadline arithmetic on the Acre calendar (docs/law/deadlines.md)."""

from __future__ import annotations

import tomllib
from datetime import date
from importlib import resources
from pathlib import Path

import holidays
import pytest

from domain.calendar import CC_ART_132, CONVENTIONS, LEI_9784_ART_66, Calendar, DueDate


@pytest.fixture(scope="module")
def acre() -> Calendar:
    return Calendar()


def shipped_corrections() -> dict:
    resource = resources.files("domain.statute").joinpath("calendar-corrections.toml")
    return tomllib.loads(resource.read_text(encoding="utf-8"))


# --- The worked examples of docs/law/deadlines.md -------------------------------------------------------


def test_thirty_days_from_a_friday_ending_on_sunday_before_a_state_holiday_fall_due_on_tuesday(acre: Calendar) -> None:
    result = acre.due_date(date(2025, 10, 17), 30, "days", LEI_9784_ART_66)

    assert result == DueDate(
        due=date(2025, 11, 18),
        raw=date(2025, 11, 16),
        convention=LEI_9784_ART_66,
        calendar_version=acre.version,
        moved_over=("2025-11-16 Sunday", "2025-11-17 Assinatura do Tratado de Petrópolis"),
    )


def test_six_months_from_31_december_end_on_30_june_under_lei_9784_art_66(acre: Calendar) -> None:
    result = acre.due_date(date(2025, 12, 31), 6, "months", LEI_9784_ART_66)

    assert (result.raw, result.due, result.moved_over) == (date(2026, 6, 30), date(2026, 6, 30), ())


def test_six_months_from_31_december_end_on_1_july_under_cc_art_132(acre: Calendar) -> None:
    result = acre.due_date(date(2025, 12, 31), 6, "months", CC_ART_132)

    assert (result.raw, result.due, result.convention) == (date(2026, 7, 1), date(2026, 7, 1), CC_ART_132)


# --- Holidays --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("day", "name"),
    [
        (date(2026, 1, 23), "Dia do Evangélico"),  # Friday
        (date(2024, 3, 8), "Dia Internacional da Mulher"),  # Friday
        (date(2026, 6, 15), "Aniversário do Acre"),  # Monday
        (date(2025, 9, 5), "Dia da Amazônia"),  # Friday
        (date(2025, 11, 17), "Assinatura do Tratado de Petrópolis"),  # Monday
    ],
)
def test_each_acre_state_holiday_on_a_weekday_has_no_office_hours(acre: Calendar, day: date, name: str) -> None:
    assert day.weekday() < 5
    assert acre.holiday_name(day) == name
    assert not acre.is_business_day(day)


def test_a_state_holiday_falling_on_a_thursday_is_kept_on_the_following_friday_under_lei_2126_2009(
    acre: Calendar,
) -> None:
    assert acre.is_business_day(date(2025, 1, 23))
    assert acre.holiday_name(date(2025, 1, 24)) == "Dia do Evangélico"
    assert not acre.is_business_day(date(2025, 1, 24))


@pytest.mark.parametrize(
    ("day", "name"),
    [
        (date(2025, 11, 20), "Dia Nacional de Zumbi e da Consciência Negra"),
        (date(2025, 12, 25), "Natal"),
        (date(2025, 4, 18), "Sexta-feira Santa"),
    ],
)
def test_a_national_holiday_has_no_office_hours_in_acre(acre: Calendar, day: date, name: str) -> None:
    assert acre.holiday_name(day) == name
    assert not acre.is_business_day(day)


def test_dia_do_catolico_is_a_state_holiday_on_20_january_from_2017(acre: Calendar) -> None:
    assert acre.holiday_name(date(2025, 1, 20)) == "Dia do Católico"
    assert not acre.is_business_day(date(2025, 1, 20))


def test_dia_do_catolico_did_not_exist_before_lei_3137_2016(acre: Calendar) -> None:
    assert acre.holiday_name(date(2016, 1, 20)) is None
    assert acre.is_business_day(date(2016, 1, 20))


def test_the_2022_calendar_kept_dia_do_catolico_of_thursday_20_january_on_friday_21(acre: Calendar) -> None:
    assert acre.is_business_day(date(2022, 1, 19)) and acre.is_business_day(date(2022, 1, 20))
    assert acre.holiday_name(date(2022, 1, 21)) == "Dia do Católico"
    assert acre.next_business_day(date(2022, 1, 21)) == date(2022, 1, 24)


def test_the_2026_decree_moved_dia_do_catolico_from_tuesday_20_to_thursday_22_january(acre: Calendar) -> None:
    assert acre.is_business_day(date(2026, 1, 20))
    assert acre.holiday_name(date(2026, 1, 22)) == "Dia do Católico"
    assert acre.holiday_name(date(2026, 1, 23)) == "Dia do Evangélico"


def test_a_weekday_without_holiday_is_a_business_day_and_its_own_next_business_day(acre: Calendar) -> None:
    assert acre.holiday_name(date(2025, 10, 15)) is None
    assert acre.is_business_day(date(2025, 10, 15))
    assert acre.next_business_day(date(2025, 10, 15)) == date(2025, 10, 15)


def test_the_next_business_day_after_a_weekend_and_a_holiday_monday_is_tuesday(acre: Calendar) -> None:
    assert not acre.is_business_day(date(2025, 11, 15))  # Saturday, Proclamação da República
    assert acre.next_business_day(date(2025, 11, 15)) == date(2025, 11, 18)


# --- The day before, of and after a boundary -------------------------------------------------


def test_a_deadline_ending_on_a_thursday_business_day_stays(acre: Calendar) -> None:
    result = acre.due_date(date(2025, 10, 5), 4, "days", LEI_9784_ART_66)

    assert (result.raw, result.due, result.moved_over) == (date(2025, 10, 9), date(2025, 10, 9), ())


def test_a_deadline_ending_on_a_friday_business_day_stays(acre: Calendar) -> None:
    result = acre.due_date(date(2025, 10, 5), 5, "days", LEI_9784_ART_66)

    assert (result.raw, result.due, result.moved_over) == (date(2025, 10, 10), date(2025, 10, 10), ())


def test_a_deadline_ending_on_saturday_falls_due_on_monday(acre: Calendar) -> None:
    result = acre.due_date(date(2025, 10, 5), 6, "days", LEI_9784_ART_66)

    assert result.raw == date(2025, 10, 11)
    assert result.due == date(2025, 10, 13)
    assert result.moved_over == ("2025-10-11 Saturday", "2025-10-12 Sunday, Nossa Senhora Aparecida")


def test_a_deadline_ending_on_a_holiday_monday_falls_due_on_tuesday(acre: Calendar) -> None:
    result = acre.due_date(date(2026, 6, 5), 10, "days", LEI_9784_ART_66)

    assert result.raw == date(2026, 6, 15)
    assert result.due == date(2026, 6, 16)
    assert result.moved_over == ("2026-06-15 Aniversário do Acre",)


def test_a_deadline_of_zero_days_falls_due_on_its_start_day_when_that_is_a_business_day(acre: Calendar) -> None:
    result = acre.due_date(date(2025, 10, 15), 0, "days", LEI_9784_ART_66)

    assert (result.raw, result.due) == (date(2025, 10, 15), date(2025, 10, 15))


def test_a_deadline_of_zero_days_starting_on_saturday_falls_due_on_monday(acre: Calendar) -> None:
    result = acre.due_date(date(2025, 10, 18), 0, "days", LEI_9784_ART_66)

    assert (result.raw, result.due) == (date(2025, 10, 18), date(2025, 10, 20))


# --- Month ends --------------------------------------------------------------------------------


def test_thirty_days_run_continuously_across_a_month_end(acre: Calendar) -> None:
    result = acre.due_date(date(2025, 1, 15), 30, "days", LEI_9784_ART_66)

    assert (result.raw, result.due) == (date(2025, 2, 14), date(2025, 2, 14))


def test_thirty_days_run_continuously_across_a_year_end(acre: Calendar) -> None:
    result = acre.due_date(date(2025, 12, 10), 30, "days", LEI_9784_ART_66)

    assert (result.raw, result.due) == (date(2026, 1, 9), date(2026, 1, 9))


def test_one_month_from_31_january_ends_on_28_february_under_lei_9784_art_66(acre: Calendar) -> None:
    result = acre.due_date(date(2023, 1, 31), 1, "months", LEI_9784_ART_66)

    assert (result.raw, result.due) == (date(2023, 2, 28), date(2023, 2, 28))


def test_one_month_from_31_january_ends_on_1_march_under_cc_art_132(acre: Calendar) -> None:
    result = acre.due_date(date(2023, 1, 31), 1, "months", CC_ART_132)

    assert (result.raw, result.due) == (date(2023, 3, 1), date(2023, 3, 1))


@pytest.mark.parametrize("convention", CONVENTIONS)
def test_one_month_from_29_january_of_a_leap_year_ends_on_29_february_under_both_conventions(
    acre: Calendar, convention: str
) -> None:
    result = acre.due_date(date(2024, 1, 29), 1, "months", convention)

    assert (result.raw, result.due) == (date(2024, 2, 29), date(2024, 2, 29))


@pytest.mark.parametrize(
    ("convention", "expected"),
    [(LEI_9784_ART_66, date(2023, 2, 28)), (CC_ART_132, date(2023, 3, 1))],
)
def test_one_month_from_29_january_of_a_common_year_ends_by_the_convention(
    acre: Calendar, convention: str, expected: date
) -> None:
    result = acre.due_date(date(2023, 1, 29), 1, "months", convention)

    assert (result.raw, result.due) == (expected, expected)


@pytest.mark.parametrize(
    ("convention", "expected"),
    [(LEI_9784_ART_66, date(2029, 2, 28)), (CC_ART_132, date(2029, 3, 1))],
)
def test_twelve_months_from_29_february_end_by_the_convention_in_a_common_year(
    acre: Calendar, convention: str, expected: date
) -> None:
    result = acre.due_date(date(2028, 2, 29), 12, "months", convention)

    assert (result.raw, result.due) == (expected, expected)


def test_one_month_from_31_march_under_cc_art_132_lands_on_labour_day_and_falls_due_the_next_day(
    acre: Calendar,
) -> None:
    result = acre.due_date(date(2025, 3, 31), 1, "months", CC_ART_132)

    assert result.raw == date(2025, 5, 1)
    assert result.due == date(2025, 5, 2)
    assert result.moved_over == ("2025-05-01 Dia do Trabalhador",)


def test_one_month_from_31_march_under_lei_9784_art_66_ends_on_30_april(acre: Calendar) -> None:
    result = acre.due_date(date(2025, 3, 31), 1, "months", LEI_9784_ART_66)

    assert (result.raw, result.due) == (date(2025, 4, 30), date(2025, 4, 30))


def test_a_month_deadline_whose_day_exists_is_the_same_under_both_conventions(acre: Calendar) -> None:
    results = {acre.due_date(date(2025, 4, 10), 6, "months", c).due for c in CONVENTIONS}

    assert results == {date(2025, 10, 10)}


# --- Corrections win over the library ----------------------------------------------------------


def write_corrections(tmp_path: Path, body: str, version: str = "test.1") -> Path:
    path = tmp_path / "corrections.toml"
    path.write_text(f'version = "{version}"\nsource = "test corrections"\n{body}', encoding="utf-8")
    return path


def test_a_correction_adding_a_day_off_makes_it_a_non_business_day(tmp_path: Path) -> None:
    path = write_corrections(
        tmp_path,
        '[[add]]\ndate = 2025-10-10\nname = "Ponto facultativo"\nsource = "Decreto de teste"\n',
    )
    corrected = Calendar(path)

    assert corrected.holiday_name(date(2025, 10, 10)) == "Ponto facultativo"
    assert not corrected.is_business_day(date(2025, 10, 10))
    assert corrected.due_date(date(2025, 10, 5), 5, "days", LEI_9784_ART_66).due == date(2025, 10, 13)


def test_a_correction_removing_a_library_holiday_makes_it_a_business_day(tmp_path: Path) -> None:
    path = write_corrections(
        tmp_path,
        '[[remove]]\ndate = 2025-09-05\nname = "Dia da Amazônia"\nsource = "Decreto de teste"\n',
    )
    corrected = Calendar(path)

    assert Calendar().holiday_name(date(2025, 9, 5)) == "Dia da Amazônia"
    assert corrected.holiday_name(date(2025, 9, 5)) is None
    assert corrected.is_business_day(date(2025, 9, 5))


def test_a_recurring_correction_applies_only_between_its_from_and_until_years(tmp_path: Path) -> None:
    path = write_corrections(
        tmp_path,
        '[[add]]\nmonth = 8\nday = 6\nfrom_year = 2020\nuntil_year = 2021\n'
        'name = "Revolução Acreana"\nsource = "Lei de teste"\n',
    )
    corrected = Calendar(path)

    assert corrected.holiday_name(date(2019, 8, 6)) is None
    assert corrected.holiday_name(date(2020, 8, 6)) == "Revolução Acreana"
    assert corrected.holiday_name(date(2021, 8, 6)) == "Revolução Acreana"
    assert corrected.holiday_name(date(2022, 8, 6)) is None


def test_a_correction_removing_a_holiday_the_calendar_does_not_have_is_refused(tmp_path: Path) -> None:
    path = write_corrections(
        tmp_path,
        '[[remove]]\ndate = 2025-09-08\nname = "Dia da Amazônia"\nsource = "Decreto de teste"\n',
    )

    with pytest.raises(ValueError, match="Dia da Amazônia"):
        Calendar(path).is_business_day(date(2025, 9, 8))


@pytest.mark.parametrize(
    "body",
    [
        '[[add]]\ndate = 2025-10-10\nname = "Sem fonte"\n',
        '[[add]]\ndate = 2025-10-10\nsource = "Sem nome"\n',
        '[[add]]\nmonth = 2\nday = 30\nfrom_year = 2020\nname = "x"\nsource = "y"\n',
        '[[add]]\nmonth = 1\nday = 20\nname = "Sem ano"\nsource = "y"\n',
        '[[remove]]\ndate = "2025-10-10"\nname = "Data em texto"\nsource = "y"\n',
    ],
)
def test_a_corrections_file_with_an_incomplete_entry_is_refused(tmp_path: Path, body: str) -> None:
    with pytest.raises(ValueError):
        Calendar(write_corrections(tmp_path, body))


# --- Parameters, versions and data --------------------------------------------------------------


def test_an_unknown_counting_convention_is_refused_by_name(acre: Calendar) -> None:
    with pytest.raises(ValueError, match="cpc-art-219"):
        acre.due_date(date(2025, 10, 17), 30, "days", "cpc-art-219")


def test_an_unknown_deadline_unit_is_refused_by_name(acre: Calendar) -> None:
    with pytest.raises(ValueError, match="weeks"):
        acre.due_date(date(2025, 10, 17), 3, "weeks", LEI_9784_ART_66)


def test_a_negative_deadline_length_is_refused(acre: Calendar) -> None:
    with pytest.raises(ValueError):
        acre.due_date(date(2025, 10, 17), -1, "days", LEI_9784_ART_66)


def test_the_calendar_version_names_the_holidays_library_and_the_corrections_versions(tmp_path: Path) -> None:
    shipped = Calendar()
    custom = Calendar(write_corrections(tmp_path, "", version="9.9"))

    assert shipped.version == f"holidays-{holidays.__version__}+corrections-{shipped_corrections()['version']}"
    assert custom.version == f"holidays-{holidays.__version__}+corrections-9.9"


def test_every_due_date_records_the_calendar_version_it_used(acre: Calendar) -> None:
    assert acre.due_date(date(2025, 10, 17), 30, "days", LEI_9784_ART_66).calendar_version == acre.version


def test_the_shipped_corrections_file_names_and_sources_every_entry_with_a_valid_date() -> None:
    data = shipped_corrections()

    assert isinstance(data["version"], str) and data["version"]
    assert isinstance(data["source"], str) and data["source"]
    entries = data.get("add", []) + data.get("remove", [])
    assert entries
    for entry in entries:
        assert isinstance(entry["name"], str) and entry["name"].strip()
        assert isinstance(entry["source"], str) and entry["source"].strip()
        if "date" in entry:
            assert type(entry["date"]) is date
            assert not {"month", "day", "from_year", "until_year"} & set(entry)
        else:
            date(entry["from_year"], entry["month"], entry["day"])
            assert entry.get("until_year", entry["from_year"]) >= entry["from_year"]
    Calendar()  # the calendar's own validation accepts it


def test_the_shipped_corrections_apply_cleanly_to_every_year_they_name(acre: Calendar) -> None:
    data = shipped_corrections()
    years = {e["date"].year for e in data.get("add", []) + data.get("remove", []) if "date" in e}

    for year in sorted(years | {2017, 2025, 2026}):
        acre.is_business_day(date(year, 1, 1))  # raises if a removal names a holiday that is not there
