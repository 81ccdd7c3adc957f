"""Property: whatever valid acts are recorded, in whatever order, and wherever the projector's batches fall, the
tables it keeps equal the tables a rebuild from the first event gives, on SQLite and on PostgreSQL."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from domain.acts import Actor
from domain.demo import GOVERNOR, IBGE, MESA, creation_1992, municipal
from domain.errors import CaseNotFoundError, InvalidActError, LegalRuleError
from projections.projector import Projector
from infrastructure.store import open_store
from tests.stores import make_app
from tests.test_article_rules import FEIJO, open_by_voters, signatures
from tests.test_case_walks import FAVOURABLE, plebiscite
from tests.test_projections import snapshot

CAPIXABA, ACRELANDIA, GUIOMARD, TARAUACA, BUJARI = "1200179", "1200013", "1200450", "1200609", "1200138"
SCHEDULER = Actor("tramita-scheduler", "scheduler")


def incorporation(app, on: date, origin: str, receiving: str) -> list[Callable[[], object]]:
    """Art. 1 §2: an incorporation from petition to law, one act per step."""
    number = f"{origin}->{receiving}"
    steps: list[Callable[[], object]] = [
        lambda: numbers.__setitem__(number, app.open_case(GOVERNOR, on, kind="incorporation",
                                                          municipalities=[origin], receiving=receiving).number)]
    for code in (origin, receiving):
        steps.append(lambda code=code: app.record_council_decree(
            numbers[number], municipal("council", code), date.fromordinal(on.toordinal() + 9), municipality=code,
            decree=f"DL {code}", seats=9, yes_votes=5))
    steps.append(lambda: plebiscite(app, numbers[number], date.fromordinal(on.toordinal() + 30), {"area": FAVOURABLE}))
    steps.append(lambda: app.enact_law(numbers[number], GOVERNOR, date.fromordinal(on.toordinal() + 90),
                                       law=f"Lei {origin}/{on.year}"))
    return steps


def requisition_left_unanswered(app) -> list[Callable[[], object]]:
    """Art. 10: a voters' case whose requisition is received and never answered, then alerted as missed."""
    steps: list[Callable[[], object]] = [
        lambda: numbers.__setitem__("voters", open_by_voters(app, date(2025, 10, 14), signatures(30, FEIJO)).number),
        lambda: numbers.__setitem__("requisition", app.issue_requisition(
            numbers["voters"], MESA, date(2025, 10, 15), body="ibge", items=["art-4-I"]).result),
        lambda: app.receive_requisition(numbers["voters"], MESA, date(2025, 10, 17),
                                        requisition=numbers["requisition"]),
        lambda: app.raise_alerts(numbers["voters"], SCHEDULER, thresholds=(5, 1)),
    ]
    return steps


def figures(app) -> list[Callable[[], object]]:
    return [lambda code=code, n=n: app.record_figure(code, IBGE, date(2026, 1, 10 + n), figure="population",
                                                     value=10_000 + n, as_of=date(2025, 7, 1), source="IBGE est.")
            for n, code in enumerate((TARAUACA, BUJARI, FEIJO))]


numbers: dict[str, str] = {}

STEP = st.one_of(st.tuples(st.just("act"), st.integers(0, 4)), st.tuples(st.just("project"), st.integers(1, 60)))


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                 HealthCheck.too_slow])
@given(plan=st.lists(STEP, min_size=1, max_size=30))
def test_tables_followed_batch_by_batch_equal_a_rebuild_whatever_the_acts_and_batches(backend, plan,
                                                                                     new_database_url):
    url = new_database_url(backend)
    app = make_app(url)
    store = open_store(url)
    try:
        projector = Projector(app, store)
        projector.migrate()
        numbers.clear()
        scripts = [incorporation(app, date(1993, 3, 1), CAPIXABA, GUIOMARD),
                   incorporation(app, date(1994, 5, 2), TARAUACA, BUJARI),
                   requisition_left_unanswered(app), figures(app),
                   [lambda: creation_1992(app, lambda _: None)]]
        for action, n in plan:
            if action == "project":
                projector.batch_size = n
                projector.run_once()
            elif scripts[n]:
                try:
                    scripts[n].pop(0)()
                except (LegalRuleError, InvalidActError, CaseNotFoundError, KeyError):
                    pass  # refused (nothing recorded) or its case was never opened: the sequence stays valid
        projector.catch_up()
        followed = snapshot(store)
        for case_id, version in store.query("SELECT case_id, version FROM cases"):
            assert app.get_case(case_id).version == version
        for code, version in store.query("SELECT code, version FROM municipalities"):
            assert app.municipality(code).version == version
        projector.rebuild()
        assert snapshot(store) == followed
    finally:
        store.close()
