"""Each case kind's lifecycle as dated, cited data: every entry validated, its references consistent with the rest of
the statute and with the API, its dated versions pinned, its diagrams current, and the stored topics unchanged."""

from __future__ import annotations

import re
import sqlite3
import tomllib
from datetime import date
from pathlib import Path

import pytest
from eventsourcing.utils import get_topic

from api.acts import ACTS
from domain.access import COMPETENCE_ENTRIES
from domain.case import CONDITIONS, KINDS, Case
from domain.lifecycle import lifecycle_of, lifecycle_problems, lifecycle_versions
from domain.lifecycle_diagrams import main as diagrams_main, render
from domain.parameters import ARTICLE_ID, Statute, shipped_statute

STATUTE = shipped_statute()
REPO = Path(__file__).resolve().parents[1]
RAW = tomllib.loads((REPO / "domain" / "statute" / "lifecycles.toml").read_text(encoding="utf-8"))
DOC = REPO / "docs" / "law" / "lifecycles.md"
FIXTURE_STORE = REPO / "tests" / "fixtures" / "v1" / "store.sqlite"
LC_132_2004 = date(2004, 1, 29)


def entries(parameter_id: str) -> list[dict]:
    return [p for p in RAW["parameter"] if p["id"] == parameter_id]


def in_force(parameter_id: str, on: date) -> dict:
    return [p for p in entries(parameter_id) if p["effective_from"] <= on][-1]


def kinds() -> list[dict]:
    """Every version of every kind's lifecycle, as the file writes it."""
    return [p for p in RAW["parameter"] if p["id"] not in ("lifecycle.acts", "lifecycle.steps")]


def steps(parameter: dict) -> list[dict]:
    """A kind's version's steps, each that `uses` a shared step read as the shared step in force on its day."""
    shared = {s["name"]: s for s in in_force("lifecycle.steps", parameter["effective_from"])["value"]["step"]}
    return [{k: v for k, v in shared[s["uses"]].items() if k != "name"} if "uses" in s else s
            for s in parameter["value"]["step"]]


def case_events() -> set[str]:
    return {name for name in vars(Case) if isinstance(getattr(Case, name), type) and name[0].isupper()
            and issubclass(getattr(Case, name), Case.Event) and name != "Event"}


def api_acts() -> set[str]:
    """The acts the API records: POST /cases (petition-filed) and each POST /cases/{case}/acts/{act}."""
    return {"petition-filed", *(act.name for act in ACTS)}


def competence_names(api_act: str) -> set[str]:
    """The competence.act entries an API act stands for (a district case's law is `district-law-enacted`)."""
    return {entry for table, entry in COMPETENCE_ENTRIES.get(api_act, (("competence.act", api_act),))
            if table == "competence.act"} | ({api_act} if api_act == "finding-recorded" else set())


# ---------------------------------------------------------------------- the data is sound


def test_every_lifecycle_entry_is_sound_data_whose_references_the_domain_can_evaluate():
    assert lifecycle_problems(STATUTE, kinds=KINDS, conditions=set(CONDITIONS), events=case_events()) == []
    assert STATUTE.validate() == []


@pytest.mark.parametrize("kind", KINDS)
def test_every_case_kind_has_a_lifecycle_in_force_from_the_publication_of_lc_35_1991(kind):
    assert entries(f"lifecycle.{kind}")[0]["effective_from"] == date(1991, 12, 18)
    assert lifecycle_of(STATUTE, kind, date(1991, 12, 18)).kind == kind


def test_every_act_a_lifecycle_names_is_an_act_the_api_records_and_every_api_act_is_in_some_lifecycle():
    recorded_by_api = {name for act in api_acts() for name in competence_names(act)}
    in_lifecycles = {step["act"] for p in kinds() for step in steps(p)}
    assert in_lifecycles <= recorded_by_api
    assert {act for act in api_acts() if not competence_names(act) & in_lifecycles} == set()
    assert set(in_force("lifecycle.acts", date(2026, 1, 1))["value"]) == in_lifecycles


def test_every_act_of_a_lifecycle_has_a_competence_entry_in_force_with_it():
    competence = STATUTE.in_force("competence.act", date(1991, 12, 18)).value
    for act, entry in in_force("lifecycle.acts", date(1991, 12, 18))["value"].items():
        table = entry.get("competence", "competence.act")
        assert act in competence if table == "competence.act" else table == "competence.finding", act


def test_every_article_the_lifecycles_cite_is_of_the_form_the_statute_uses():
    cited = []
    for parameter in RAW["parameter"]:
        cited.append(parameter["article"])
        value = parameter["value"]
        if parameter["id"] == "lifecycle.acts":
            cited += [entry["article"] for entry in value.values()]
            continue
        written = [s for s in value["step"] if "uses" not in s]  # a shared step is cited where it is written
        cited += [s["article"] for s in written] + [s["ordered_by"] for s in written if "ordered_by" in s]
        cited += [s["closed_citing"] for s in written if "closed_citing" in s]
        cited += [s["unmet_citing"] for s in written if "unmet_citing" in s]
        cited += [c["article"] for c in value.get("conditions", {}).values()]
        cited += [e["article"] for e in value.get("excluded", [])]
    assert [article for article in cited if not ARTICLE_ID.match(article)] == []


def test_every_deadline_a_lifecycle_opens_or_closes_is_a_deadline_of_the_statute():
    deadlines = {pid.removeprefix("deadline.") for pid in STATUTE.ids() if pid.startswith("deadline.")}
    named = {d for p in kinds() for s in steps(p) for d in s.get("opens", []) + s.get("closes", [])}
    assert named and named <= deadlines


@pytest.mark.parametrize("kind", KINDS)
def test_each_act_of_a_kind_s_lifecycle_is_reachable_from_its_opening_following_the_data(kind):
    for version in entries(f"lifecycle.{kind}"):
        acts = steps(version)
        reached, grew = {acts[0]["act"]}, True
        while grew:
            before = len(reached)
            reached |= {s["act"] for s in acts if all(a in reached for a in s.get("after", []))
                        and (not s.get("after_any") or any(a in reached for a in s["after_any"]))}
            grew = len(reached) > before
        assert reached == {s["act"] for s in acts}, version["effective_from"]


def test_each_lifecycle_cites_its_reading_in_docs_law_lifecycles_md_under_a_heading_of_that_anchor():
    headings = {re.sub(r"[^a-z0-9 -]", "", line[3:].strip().lower()).replace(" ", "-")
                for line in DOC.read_text(encoding="utf-8").splitlines() if line.startswith("## ")}
    for parameter in RAW["parameter"]:
        anchor = re.match(r"docs/law/lifecycles\.md#([a-z-]+):", parameter["source"])
        assert anchor and anchor.group(1) in headings, parameter["id"]
    assert {"creation", "incorporation", "fusion", "dismemberment", "district-creation-and-suppression",
            "extinction"} <= headings


def test_the_lifecycles_agree_with_the_statute_on_which_kinds_may_dispense_the_plebiscite():
    for on in (LC_132_2004, date(2026, 1, 1)):
        dispensing = {kind for kind in KINDS if lifecycle_of(STATUTE, kind, on).step("plebiscite-dispensed")}
        assert dispensing == set(STATUTE.value("art-1-I.dispensable-kinds", on))


def test_the_lifecycles_agree_with_the_statute_on_which_kinds_art_6_dispenses_from_art_4():
    on = date(2026, 1, 1)
    without = {kind for kind in KINDS if lifecycle_of(STATUTE, kind, on).excluded.get("finding-recorded")
               and lifecycle_of(STATUTE, kind, on).excluded["finding-recorded"].article == "art-6"}
    assert without == set(STATUTE.value("art-6.kinds-without-art-4", on))


# ---------------------------------------------------------------------- the dated versions


def test_the_day_before_lc_132_2004_a_dismemberment_s_lifecycle_has_no_dispensation_of_the_plebiscite():
    lifecycle = lifecycle_of(STATUTE, "dismemberment", date(2004, 1, 28))
    assert lifecycle.version == "lifecycle.dismemberment@1991-12-18"
    assert lifecycle.step("plebiscite-dispensed") is None
    assert lifecycle.step("creation-bill-drafted").after == ("result-communicated",)


@pytest.mark.parametrize("on", [LC_132_2004, date(2004, 1, 30)])
def test_from_lc_132_2004_a_dismemberment_s_bill_follows_the_communicated_result_or_the_dispensation(on):
    lifecycle = lifecycle_of(STATUTE, "dismemberment", on)
    assert lifecycle.version == "lifecycle.dismemberment@2004-01-29"
    assert lifecycle.step("plebiscite-dispensed").when == ("councils-approved",)
    assert lifecycle.step("creation-bill-drafted").after_any == ("result-communicated", "plebiscite-dispensed")
    assert "plebiscite-dispensed" in lifecycle.step("plebiscite-decreed").until


def test_both_versions_of_the_dismemberment_s_lifecycle_stay_in_the_data():
    assert [p["effective_from"] for p in entries("lifecycle.dismemberment")] == [date(1991, 12, 18), LC_132_2004]


# ---------------------------------------------------------------------- validation finds what is wrong


def broken(tmp_path: Path, **changes: str) -> list[str]:
    text = (REPO / "domain" / "statute" / "lifecycles.toml").read_text(encoding="utf-8")
    for old, new in changes.items():
        assert old in text
        text = text.replace(old, new, 1)
    path = tmp_path / "lifecycles.toml"
    path.write_text(text, encoding="utf-8")
    statute = Statute.load(REPO / "domain" / "statute" / "lc35.toml", path)
    return lifecycle_problems(statute, kinds=KINDS, conditions=set(CONDITIONS), events=case_events())


def test_validation_finds_a_step_following_an_act_its_lifecycle_does_not_have(tmp_path):
    problems = broken(tmp_path, **{'after = ["plebiscite-decreed"]': 'after = ["plebiscite-ordered"]'})
    assert any("'plebiscite-ordered', not an act of this lifecycle" in p for p in problems)


def test_validation_finds_a_deadline_that_is_no_deadline_of_the_statute(tmp_path):
    problems = broken(tmp_path, **{'opens = ["result-communication"]': 'opens = ["result-notice"]'})
    assert any("no deadline.result-notice parameter" in p for p in problems)


def test_validation_finds_a_condition_without_a_predicate_and_an_article_of_another_form(tmp_path):
    problems = broken(tmp_path, **{'voters-initiative = { article = "art-10"': 'voters-wish = { article = "Art. 10"',
                                   'when = ["voters-initiative"]': 'when = ["voters-wish"]'})
    assert any("'voters-wish' has no predicate in the domain" in p for p in problems)
    assert any("'Art. 10' is not an article id" in p for p in problems)


def test_validation_finds_an_act_without_a_competence_entry_and_an_event_the_case_does_not_have(tmp_path):
    problems = broken(tmp_path, **{'requisition-refused = { label = "recusa da requisição (infração)", '
                                   'article = "art-10", event = "RequisitionRefused" }':
                                   'requisition-refused = { label = "recusa", article = "art-10", '
                                   'event = "RequisitionDenied", competence = "competence.nothing" }'})
    assert any("'RequisitionDenied' is not an event of the case" in p for p in problems)
    assert any("no competence table 'competence.nothing'" in p for p in problems)


def test_validation_finds_a_kind_without_a_lifecycle(tmp_path):
    problems = broken(tmp_path, **{'id = "lifecycle.extinction"': 'id = "lifecycle.extinguishment"'})
    assert "no lifecycle for the case kind 'extinction'" in problems
    assert "lifecycle.extinguishment is not a case kind" in problems


# ---------------------------------------------------------------------- the diagrams


def test_the_committed_lifecycle_diagrams_are_those_the_data_generates():
    text = DOC.read_text(encoding="utf-8")
    assert render(text, STATUTE) == text, "stale: run python -m domain.lifecycle_diagrams"
    for kind in KINDS:
        assert f"<!-- lifecycle-diagram:{kind}:begin -->\n`lifecycle.{kind}@1991-12-18`" in text


def test_the_diagram_command_finds_a_stale_copy_and_rewrites_it(tmp_path, capsys):
    stale = tmp_path / "lifecycles.md"
    stale.write_text(DOC.read_text(encoding="utf-8").replace("plebiscite_decreed --> plebiscite_scheduled", "",
                                                               1), encoding="utf-8")
    assert diagrams_main([str(stale), "--check"]) == 1
    assert diagrams_main([str(stale)]) == 0
    assert stale.read_text(encoding="utf-8") == DOC.read_text(encoding="utf-8")
    assert diagrams_main([str(stale), "--check"]) == 0
    assert "stale" in capsys.readouterr().out


# ---------------------------------------------------------------------- stored topics survive the split


def test_every_case_event_is_still_nested_in_case_in_the_module_domain_case():
    assert get_topic(Case) == "domain.case:Case"
    for name in case_events():
        cls = getattr(Case, name)
        assert (get_topic(cls), cls.__qualname__) == (f"domain.case:Case.{name}", f"Case.{name}")


def test_the_topics_new_events_store_are_those_an_earlier_store_holds(tmp_path):
    from domain.demo import creation_1992
    from tests.stores import make_app

    # Read-only and immutable: opening the fixture in place would write its -wal and -shm files beside it.
    earlier = sqlite3.connect(f"file:{FIXTURE_STORE}?mode=ro&immutable=1", uri=True)
    try:
        before = {t for (t,) in earlier.execute("select distinct topic from stored_events")
                  if t.startswith("domain.case:")}
    finally:
        earlier.close()
    app = make_app(f"sqlite:///{tmp_path / 'new.sqlite'}")
    creation_1992(app, lambda line: None)
    with sqlite3.connect(tmp_path / "new.sqlite") as new:
        now = {t for (t,) in new.execute("select distinct topic from stored_events") if t.startswith("domain.case:")}
        originators = {state for (state,) in new.execute("select state from stored_events where topic = ?",
                                                          ("domain.case:Case.PetitionFiled",))}
    assert now and now <= before
    assert all(b'"originator_topic":"domain.case:Case"' in bytes(state) for state in originators)


def test_validation_finds_a_step_key_the_lifecycles_do_not_define(tmp_path):
    problems = broken(tmp_path, **{'once = true\nopens = ["result-communication"]':
                                   'once = true\nonly_once = true\nopens = ["result-communication"]'})
    assert any("unknown keys only_once" in p for p in problems)


def test_validation_finds_a_closed_citing_that_is_no_article_id_or_closes_nothing(tmp_path):
    problems = broken(tmp_path, **{'closed_citing = "art-20"': 'closed_citing = "Art. 20"',
                                   'after = ["administrator-list-sent"]\nuntil = ["municipality-installed"]\n':
                                   'after = ["administrator-list-sent"]\n'})
    assert any("administrator-list-sent: article 'Art. 20' is not an article id" in p for p in problems)
    assert any("administrator-appointed: closed_citing without until" in p for p in problems)


def test_validation_finds_an_unmet_citing_that_is_no_article_id_or_has_no_condition_to_cite_it_for(tmp_path):
    problems = broken(tmp_path, **{'unmet_citing = "art-11"': 'unmet_citing = "Art. 11"',
                                   'act = "requirements-verified"\narticle = "art-11"\nafter = ["petition-filed"]\n'
                                   'when = ["art-4-findings-complete"]\n':
                                   'act = "requirements-verified"\narticle = "art-11"\nafter = ["petition-filed"]\n'
                                   'unmet_citing = "art-11"\n'})
    assert any("plebiscite-decreed: article 'Art. 11' is not an article id" in p for p in problems)
    assert any("requirements-verified: unmet_citing without when" in p for p in problems)


# ---------------------------------------------------------------------- shared steps, written once


def test_the_step_of_art_13_is_written_once_and_used_by_every_kind_that_holds_a_plebiscite():
    text = (REPO / "domain" / "statute" / "lifecycles.toml").read_text(encoding="utf-8")
    assert text.count('act = "plebiscite-result-homologated"') == 1
    holding = {kind for kind in KINDS if lifecycle_of(STATUTE, kind, date(2026, 1, 1)).step("plebiscite-scheduled")}
    assert holding == {"creation", "incorporation", "fusion", "dismemberment"}
    using = {p["id"].removeprefix("lifecycle.") for p in kinds() if {"uses": "plebiscite-art-13"} in p["value"]["step"]}
    assert using == holding


def test_every_shared_step_is_used_by_two_lifecycle_versions_at_least():
    used = [s["uses"] for p in kinds() for s in p["value"]["step"] if "uses" in s]
    names = [s["name"] for s in entries("lifecycle.steps")[0]["value"]["step"]]
    assert len(names) == len(set(names)) and {name: used.count(name) for name in names if used.count(name) < 2} == {}


def test_validation_finds_a_use_of_a_step_that_is_not_shared_and_a_use_that_says_more(tmp_path):
    problems = broken(tmp_path, **{'uses = "plebiscite-art-13"': 'uses = "plebiscite-art-31"',
                                   'uses = "plebiscite-date-art-12"': 'uses = "plebiscite-date-art-12"\nonce = true'})
    assert any("uses 'plebiscite-art-31': not a shared step of lifecycle.steps@1991-12-18" in p for p in problems)
    assert any("uses 'plebiscite-date-art-12': a step that uses a shared step says nothing else (once)" in p
               for p in problems)


def test_a_later_version_of_a_shared_step_is_in_force_from_its_day_for_every_kind_that_uses_it(tmp_path):
    text = (REPO / "domain" / "statute" / "lifecycles.toml").read_text(encoding="utf-8")
    start = text.index('[[parameter]]\nid = "lifecycle.steps"')
    shared = text[start:text.index("# ---", start)]
    later = shared.replace("effective_from = 1991-12-18", "effective_from = 2030-01-01").replace(
        'note = "Art. 13: the verdict', 'note = "Art. 13 (read anew): the verdict')
    path = tmp_path / "lifecycles.toml"
    path.write_text(text + "\n" + later, encoding="utf-8")
    statute = Statute.load(REPO / "domain" / "statute" / "lc35.toml", path)
    assert lifecycle_problems(statute, kinds=KINDS, conditions=set(CONDITIONS), events=case_events()) == []
    for kind in ("creation", "incorporation", "fusion", "dismemberment"):
        before = lifecycle_of(statute, kind, date(2029, 12, 31)).step("plebiscite-result-homologated")
        after = lifecycle_of(statute, kind, date(2030, 1, 1)).step("plebiscite-result-homologated")
        assert before.note.startswith("Art. 13: ") and after.note.startswith("Art. 13 (read anew): "), kind
        versions = lifecycle_versions(statute, kind)
        assert versions[-1].effective_from == date(2030, 1, 1) and versions[-1] is lifecycle_of(statute, kind,
                                                                                                date(2030, 1, 1))
    assert [v.effective_from for v in lifecycle_versions(statute, "extinction")] == [date(1991, 12, 18)]
