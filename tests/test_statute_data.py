"""The statute as dated data: every entry validated; the value in force on a date; LC 132/2004's boundary."""

from __future__ import annotations

import re
from datetime import date
from pathlib import Path

import pytest

from domain.errors import RuleNotInForceError
from domain.parameters import Statute, shipped_statute

STATUTE = shipped_statute()
REPO = Path(__file__).resolve().parents[1]


def test_every_statute_entry_cites_an_article_a_source_and_a_sound_date_range():
    assert STATUTE.validate() == []
    for parameter_id in STATUTE.ids():
        for version in STATUTE.versions(parameter_id):
            assert version.article and version.source and isinstance(version.effective_from, date)


def test_no_entry_enters_into_force_before_the_constitution_of_1988():
    for parameter_id in STATUTE.ids():
        assert STATUTE.versions(parameter_id)[0].effective_from >= date(1988, 10, 5)


def test_lc_35_entries_enter_into_force_on_its_publication_date():
    for parameter_id in STATUTE.ids():
        first = STATUTE.versions(parameter_id)[0]
        if "lc-35-1991" in first.source:
            assert first.effective_from == date(1991, 12, 18), parameter_id


def test_the_dispensation_of_art_1_I_is_not_in_force_the_day_before_lc_132_2004():
    with pytest.raises(RuleNotInForceError) as refusal:
        STATUTE.in_force("art-1-I.dispensation-brackets", date(2004, 1, 28))
    assert refusal.value.article == "art-1-I"
    assert "2004-01-29" in refusal.value.message


@pytest.mark.parametrize("day", [date(2004, 1, 29), date(2004, 1, 30)])
def test_the_dispensation_of_art_1_I_is_in_force_from_lc_132_2004(day):
    parameter = STATUTE.in_force("art-1-I.dispensation-brackets", day)
    assert parameter.version == "art-1-I.dispensation-brackets@2004-01-29"
    assert [b["max_net_share"] for b in parameter.value] == ["0.15", "0.10", "0.05"]


@pytest.mark.parametrize("day, gate", [(date(1996, 9, 12), "not-required"), (date(1996, 9, 13), "closed"),
                                       (date(1996, 9, 14), "closed")])
def test_the_federal_gate_closes_on_the_day_ec_15_1996_entered_into_force(day, gate):
    assert STATUTE.value("cf-art-18-par-4.federal-period", day) == gate


def test_a_later_version_supersedes_an_earlier_one_from_its_own_date_and_both_stay(tmp_path):
    path = tmp_path / "lc.toml"
    path.write_text('''version = "t"
[[parameter]]
id = "art-4-I.population"
article = "art-4-I"
effective_from = 1991-12-18
value = 1500
comparison = ">="
source = "original"
[[parameter]]
id = "art-4-I.population"
article = "art-4-I"
effective_from = 2030-01-01
value = 3000
comparison = ">="
source = "a hypothetical amendment"
''', encoding="utf-8")
    statute = Statute.load(path)
    assert statute.validate() == []
    assert statute.value("art-4-I.population", date(2029, 12, 31)) == 1500
    assert statute.value("art-4-I.population", date(2030, 1, 1)) == 3000
    assert len(statute.versions("art-4-I.population")) == 2


@pytest.mark.parametrize("until, problem", [("1999-12-30", "gap"), ("2000-01-01", "overlaps")])
def test_validation_finds_gaps_and_overlaps_between_versions(tmp_path, until, problem):
    path = tmp_path / "lc.toml"
    entry = '''[[parameter]]
id = "art-4-IV.buildings"
article = "art-4-IV"
effective_from = {start}
{until}value = 50
comparison = ">="
source = "s"
'''
    path.write_text('version = "t"\n' + entry.format(start="1991-12-18", until=f"effective_until = {until}\n")
                    + entry.format(start="2000-01-01", until=""), encoding="utf-8")
    assert any(problem in p for p in Statute.load(path).validate())


def test_validation_rejects_an_entry_without_an_article_id_or_source(tmp_path):
    path = tmp_path / "lc.toml"
    path.write_text('version = "t"\n[[parameter]]\nid = "x"\narticle = "article four"\neffective_from = 1991-12-18\n'
                    'value = 1\nsource = " "\n', encoding="utf-8")
    problems = Statute.load(path).validate()
    assert any("not an article id" in p for p in problems) and any("no source" in p for p in problems)


def test_every_deadline_of_rules_md_is_in_the_statute_with_its_article_and_length():
    expected = {"requisition-answer": ("art-10", 30, "days"), "result-communication": ("art-14", 15, "days"),
                "plenary-registration": ("art-15", 5, "days"), "creation-bill": ("art-16", 30, "days"),
                "ledger-transfer": ("art-22-par-unico", 60, "days"), "budget-proposal": ("art-23-I", 30, "days"),
                "administrative-organization-bill": ("art-23-II", 60, "days"),
                "civil-service-regime-bill": ("art-23-III", 90, "days"),
                "staff-framework-bill": ("art-23-IV", 120, "days"), "organic-law": ("art-24", 6, "months"),
                "personnel-documents": ("art-26-par-unico", 0, "on-installation")}
    for rule, (article, length, unit) in expected.items():
        parameter = STATUTE.in_force(f"deadline.{rule}", date(2026, 1, 1))
        assert (parameter.article, parameter.value["length"], parameter.value["unit"]) == (article, length, unit)


def test_the_municipal_election_dates_include_the_2020_election_moved_by_ec_107_2020():
    elections = STATUTE.in_force("art-31-IV.municipal-election-dates", date(2026, 1, 1))
    assert {date(2016, 10, 2), date(2020, 11, 15), date(2024, 10, 6), date(2028, 10, 1)} <= set(elections.value)
    assert elections.extra["known_through"] >= date(2028, 12, 31)


def test_no_legal_number_is_written_in_the_domain_code():
    legal_numbers = re.compile(r"(?<![\w.\-])(?<!Art\. )(?<!art\. )"
                               r"(1[._]?500|0\.002|0\.1\b|2/3|300|50|30|15|60|90|120)(?![\w.])")
    offenders = []
    for path in sorted((REPO / "domain").rglob("*.py")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            code = line.split("#", 1)[0]
            if legal_numbers.search(code) and '"""' not in code and not code.strip().startswith(("f\"", "\"")):
                offenders.append(f"{path.relative_to(REPO / 'domain')}:{number}: {line.strip()}")
    demo_free = [o for o in offenders if not o.startswith("demo.py")]
    assert demo_free == []

