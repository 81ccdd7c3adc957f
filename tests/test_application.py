"""The application service: one save per act, retries on concurrent saves, optimistic versions, legal dates."""

from __future__ import annotations

import copy
from datetime import date, datetime, timezone

import pytest
from eventsourcing.application import Application
from eventsourcing.domain import Aggregate, event
from eventsourcing.persistence import IntegrityError

from domain.application import ConcurrentActError, Tramita
from domain.application.base import MAX_ATTEMPTS, RETRY_BASE, RETRY_CAP
from infrastructure.persistence import persistence_env
from domain.demo import GOVERNOR, IBGE, MESA, PRESIDENT, TRE, creation_1992, municipal
from domain.errors import CaseNotFoundError, IncompetentBodyError, InvalidActError, StaleVersionError
from tests.stores import make_app, pinned_clock

XAPURI, BUJARI = "1200708", "1200138"


def open_incorporation(app, on: date = date(2026, 3, 2)) -> str:
    return app.open_case(GOVERNOR, on, kind="incorporation", municipalities=[BUJARI], receiving=XAPURI).number


def test_case_numbers_are_assigned_in_order_per_year_of_the_petition(memory_app):
    first = open_incorporation(memory_app)
    second = memory_app.open_case(MESA, date(2026, 3, 3), kind="extinction", municipalities=["1200328"]).number
    older = memory_app.open_case(MESA, date(2025, 1, 6), kind="extinction", municipalities=["1200393"]).number
    assert (first, second, older) == ("LC35-2026-0001", "LC35-2026-0002", "LC35-2025-0001")


def test_an_act_dated_in_the_future_is_refused_and_nothing_is_recorded(memory_app):
    case = open_incorporation(memory_app)
    with pytest.raises(InvalidActError) as refusal:
        memory_app.record_council_decree(case, municipal("council", BUJARI), date(2026, 12, 1),
                                         municipality=BUJARI, decree="DL", seats=9, yes_votes=5)
    assert refusal.value.field == "occurred_on" and "future" in refusal.value.message
    assert memory_app.get_case(case).version == 1


def test_the_legal_today_is_rio_branco_s_date_not_utc(memory_app):
    late_evening = Tramita(persistence_env("memory://"),
                           clock=lambda: datetime(2026, 12, 1, 3, 0, tzinfo=timezone.utc))  # 22:00 on 30 Nov in AC
    assert late_evening.context(GOVERNOR, date(2026, 11, 30)).today == date(2026, 11, 30)


def test_an_act_dated_before_the_case_s_previous_act_is_refused(memory_app):
    case = open_incorporation(memory_app)
    with pytest.raises(InvalidActError) as refusal:
        memory_app.record_council_decree(case, municipal("council", BUJARI), date(2026, 3, 1),
                                         municipality=BUJARI, decree="DL", seats=9, yes_votes=5)
    assert "before the case's previous act (2026-03-02)" in refusal.value.message


def test_an_act_recorded_by_another_municipality_s_council_is_refused(memory_app):
    case = open_incorporation(memory_app)
    with pytest.raises(IncompetentBodyError) as refusal:
        memory_app.record_council_decree(case, municipal("council", "1200401"), date(2026, 3, 5),
                                         municipality=BUJARI, decree="DL", seats=9, yes_votes=5)
    assert refusal.value.article == "art-29"


def test_a_caller_expecting_an_older_version_is_refused_and_nothing_is_recorded(memory_app):
    case = open_incorporation(memory_app)
    memory_app.record_council_decree(case, municipal("council", BUJARI), date(2026, 3, 5), municipality=BUJARI,
                                     decree="DL", seats=9, yes_votes=5, expected_version=1)
    with pytest.raises(StaleVersionError):
        memory_app.record_council_decree(case, municipal("council", XAPURI), date(2026, 3, 5), municipality=XAPURI,
                                         decree="DL", seats=9, yes_votes=5, expected_version=1)
    assert memory_app.get_case(case).version == 2


def test_a_concurrent_save_is_retried_on_fresh_state_and_never_overwrites(memory_app, monkeypatch):
    case = open_incorporation(memory_app)
    real_save, conflicts = memory_app.save, []

    def save_after_a_rival(*aggregates):
        if not conflicts:  # a rival records the other council's decree first
            conflicts.append(True)
            rival = memory_app.get_case(case)
            rival.record_council_decree(memory_app.context(municipal("council", XAPURI), date(2026, 3, 5)),
                                        municipality=XAPURI, decree="DL rival", seats=9, yes_votes=5)
            real_save(rival)
        return real_save(*aggregates)

    monkeypatch.setattr(memory_app, "save", save_after_a_rival)
    memory_app.record_council_decree(case, municipal("council", BUJARI), date(2026, 3, 5), municipality=BUJARI,
                                     decree="DL", seats=9, yes_votes=5)
    councils = memory_app.get_case(case).councils
    assert set(councils) == {BUJARI, XAPURI} and councils[XAPURI]["decree"] == "DL rival"


def test_an_act_that_keeps_meeting_concurrent_saves_gives_up_without_recording(memory_app, monkeypatch):
    case = open_incorporation(memory_app)

    def always_conflicting(*aggregates):
        raise IntegrityError("simulated")

    waits: list[float] = []
    monkeypatch.setattr(memory_app, "save", always_conflicting)
    monkeypatch.setattr(memory_app, "retry_pause", waits.append)
    with pytest.raises(ConcurrentActError):
        memory_app.record_council_decree(case, municipal("council", BUJARI), date(2026, 3, 5),
                                         municipality=BUJARI, decree="DL", seats=9, yes_votes=5)
    monkeypatch.undo()
    assert memory_app.get_case(case).version == 1
    assert len(waits) == MAX_ATTEMPTS - 1  # a random wait before each retry, within a bound that doubles
    assert all(0 <= wait <= min(RETRY_CAP, RETRY_BASE * 2 ** n) for n, wait in enumerate(waits, start=1))


class Note(Aggregate):
    """A bare aggregate of the library's, for saves that need no act."""

    @event("Written")
    def __init__(self) -> None:
        self.notes = 0

    @event("Noted")
    def note(self) -> None:
        self.notes += 1


@pytest.mark.parametrize("store", ["memory", "sqlite"])
def test_a_save_of_several_aggregates_one_of_them_stale_raises_the_librarys_error_and_stores_none(store, tmp_path):
    app = make_app("memory://" if store == "memory" else f"sqlite:///{tmp_path / 't.sqlite'}", seed=False)
    note = Note()
    app.save(note)
    stale = copy.deepcopy(note)
    note.note()
    app.save(note)
    before, fresh = app.recorder.max_notification_id(), Note()
    stale.note()
    with pytest.raises(IntegrityError):  # what `_retrying` retries the act on
        app.save(fresh, stale)
    assert app.recorder.max_notification_id() == before and app.recorder.select_events(fresh.id) == []
    assert [r.notification.originator_version for r in app.save(Note(), None)] == [1]  # None is passed over


@pytest.mark.parametrize("cache", [None, "10"])
def test_with_the_librarys_aggregate_cache_on_a_save_is_the_librarys_own(cache, monkeypatch):
    env = persistence_env("memory://") | ({"AGGREGATE_CACHE_MAXSIZE": cache} if cache else {})
    app = Tramita(env, clock=pinned_clock)
    library_saves, library_save = [], Application.save
    monkeypatch.setattr(Application, "save",
                        lambda self, *objs: library_saves.append(objs) or library_save(self, *objs))
    note = Note()
    app.save(note)
    assert library_saves == ([(note,)] if cache else [])
    assert [r.originator_version for r in app.recorder.select_events(note.id)] == [1]
    app.close()


def test_a_refused_opening_changes_nothing_neither_the_numbering_nor_the_freeze(memory_app):
    with pytest.raises(InvalidActError):
        memory_app.open_case(GOVERNOR, date(2026, 3, 2), kind="incorporation", municipalities=[BUJARI],
                             receiving="9999999")
    assert memory_app.municipality(BUJARI).freezes == []
    assert open_incorporation(memory_app) == "LC35-2026-0001"


def test_the_state_as_of_a_legal_date_differs_from_the_state_at_a_version(memory_app):
    number = creation_1992(memory_app, lambda line: None)
    as_of = memory_app.case_as_of(number, date(1992, 1, 8))
    assert as_of.stage == "result-communicated" and as_of.version == 17
    assert memory_app.get_case(number, version=12).stage == "result-homologated"
    assert memory_app.case_as_of(number, date(1991, 12, 18)) is None
    assert len(memory_app.timeline(number, as_of=date(1992, 1, 8))) == 17


def test_an_unknown_case_number_is_reported_as_not_found(memory_app):
    with pytest.raises(CaseNotFoundError):
        memory_app.get_case("LC35-2026-0999")
    with pytest.raises(CaseNotFoundError):
        memory_app.timeline("LC35-2026-0999")


def test_a_registry_figure_is_recorded_by_its_competent_body_with_date_and_source(memory_app):
    with pytest.raises(IncompetentBodyError) as refusal:
        memory_app.record_figure(XAPURI, TRE, date(2026, 3, 2), figure="population", value=1,
                                 as_of=date(2026, 1, 1), source="x")
    assert refusal.value.article == "art-4-par-unico"
    memory_app.record_figure(XAPURI, IBGE, date(2026, 3, 2), figure="buildings", value=3100, as_of=date(2026, 1, 1),
                             source="IBGE survey")
    xapuri = memory_app.municipality(XAPURI)
    assert xapuri.figure_on("buildings", date(2025, 12, 31)) is None
    assert xapuri.figure_on("buildings", date(2026, 1, 1)).value == 3100
    assert xapuri.figure_on("population", date(2026, 1, 1)).value == 18243
    assert xapuri.figure_on("voters", date(2026, 1, 1)) is None  # blank in the seed: unknown, never invented


def test_a_name_added_by_a_recorded_act_is_then_refused_for_a_new_municipality(memory_app):
    memory_app.add_toponym(IBGE, date(2025, 1, 2), name="Boa Esperança do Norte", uf="MT", ibge_code="5101837",
                           source="IBGE, installed 2025-01-01")
    assert memory_app.toponyms().same_name("boa esperanca do norte")[0].uf == "MT"


def test_the_list_of_names_grown_act_by_act_is_the_list_built_from_every_recorded_name(memory_app):
    from domain.names import ToponymList
    from domain.registry import ToponymRegister

    names = [("Boa Esperança do Norte", "MT", "5101837"), ("Vila Nova do Sul", "AC", None),
             ("Boa Esperança do Norte", "MT", "5101837"), ("Vila  Nova-do Sul", "AC", None)]
    for name, uf, code in names:
        memory_app.add_toponym(IBGE, date(2025, 1, 2), name=name, uf=uf, ibge_code=code, source="IBGE")
        grown = memory_app.toponyms()
        register = memory_app.repository.get(ToponymRegister.ID)
        built = ToponymList.shipped().with_names(register.toponyms())
        assert list(grown) == list(built) and grown.version == built.version
        assert grown.same_name("vila nova do sul") == built.same_name("vila nova do sul")
        assert memory_app.toponyms() is grown  # the same version of the register: the same list
    assert len(memory_app.toponyms().same_name("boa esperanca do norte")) == 1  # an exact repeat counts once


def test_timeline_rows_carry_legal_and_recorded_dates_actor_article_rule_versions_and_hashes(memory_app):
    case = open_incorporation(memory_app)
    memory_app.record_council_decree(case, municipal("council", BUJARI), date(2026, 3, 5), municipality=BUJARI,
                                     decree="DL 4", seats=9, yes_votes=4)
    row = memory_app.timeline(case)[-1]
    assert row["type"] == "Case.CouncilDecreeRecorded" and row["occurred_on"] == "2026-03-05"
    assert row["recorded_at"] == "2026-11-30T15:00:00+00:00"
    assert row["actor"] == {"principal": f"council-{BUJARI}-demo", "role": "council", "municipality": BUJARI}
    assert row["article"] == "art-29"
    assert row["rule_versions"] == {"art-29.council-majority-of-seats": "art-29.council-majority-of-seats@1991-12-18"}
    assert row["payload"]["approved"] is False
    assert row["prev_hash"] == memory_app.timeline(case)[0]["hash"]


def test_the_database_url_selects_the_store():
    assert persistence_env("memory://") == {"PERSISTENCE_MODULE": "tramita.memory:MemoryFactory"}
    assert persistence_env("sqlite:///var/t.sqlite")["SQLITE_DBNAME"] == "var/t.sqlite"
    assert persistence_env("sqlite:////tmp/t.sqlite")["SQLITE_DBNAME"] == "/tmp/t.sqlite"
    assert persistence_env("postgresql://u:p@localhost/db")["PERSISTENCE_MODULE"] == "eventsourcing.postgres"
    with pytest.raises(ValueError, match="unknown scheme"):
        persistence_env("mysql://x")
    assert PRESIDENT.role == "assembly-president"


@pytest.mark.parametrize("occurred_on", ["2026-03-05", datetime(2026, 3, 5, 10, tzinfo=timezone.utc), None])
def test_a_legal_date_that_is_not_a_calendar_day_is_refused_naming_the_field(memory_app, occurred_on):
    case = open_incorporation(memory_app)
    with pytest.raises(InvalidActError) as refusal:
        memory_app.record_council_decree(case, municipal("council", BUJARI), occurred_on, municipality=BUJARI,
                                         decree="DL", seats=9, yes_votes=5)
    assert refusal.value.field == "occurred_on"


@pytest.mark.parametrize("decree", ["", "   ", None])
def test_an_act_without_its_decree_is_refused_naming_the_field_and_nothing_is_recorded(memory_app, decree):
    case = open_incorporation(memory_app)
    with pytest.raises(InvalidActError) as refusal:
        memory_app.record_council_decree(case, municipal("council", BUJARI), date(2026, 3, 5), municipality=BUJARI,
                                         decree=decree, seats=9, yes_votes=5)
    assert refusal.value.field == "decree"
    assert memory_app.get_case(case).version == 1


def test_a_plebiscite_date_given_as_text_is_refused_naming_the_field(memory_app):
    case = open_incorporation(memory_app)
    for code in (BUJARI, XAPURI):
        memory_app.record_council_decree(case, municipal("council", code), date(2026, 3, 5), municipality=code,
                                         decree="DL", seats=9, yes_votes=5)
    memory_app.decree_plebiscite(case, PRESIDENT, date(2026, 3, 10), decree="DL 2")
    with pytest.raises(InvalidActError) as refusal:
        memory_app.schedule_plebiscite(case, TRE, date(2026, 3, 12), resolution="Res", plebiscite_date="2026-05-01")
    assert refusal.value.field == "plebiscite_date"


def test_a_creation_finding_that_does_not_complete_art_4_reads_no_registry_figure(memory_app, monkeypatch):
    """Art. 4 par. ún., Art. 5: the origins' registry figures are read when the finding completes Art. 4 and the
    requirements are judged, not for every finding."""
    from domain.demo import FEIJO, voters_creation

    number = voters_creation(memory_app, date(2026, 3, 2), FEIJO, "Vila Tarumã", area_km2="1900", voters=40,
                             first_title=1000, zone="5")
    reads = []
    figures_on = memory_app._figures_on
    monkeypatch.setattr(memory_app, "_figures_on", lambda *args, **kwargs: reads.append(args) or figures_on(
        *args, **kwargs))
    memory_app.record_finding(number, IBGE, date(2026, 3, 5), item="art-4-I", value=2100, document="Ofício 9")
    assert reads == [] and memory_app.get_case(number).findings["art-4-I"]["ibge"]["value"] == 2100
