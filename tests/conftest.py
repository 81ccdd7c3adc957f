"""Shared fixtures: the application on the in-memory store and on a SQLite file, with a pinned clock."""

from __future__ import annotations

from datetime import date, datetime, timezone

import pytest

from domain.acts import Actor
from domain.application import Tramita, persistence_env

NOW = datetime(2026, 11, 30, 15, 0, tzinfo=timezone.utc)
SEEDED_ON = date(1991, 12, 18)


def pinned_clock() -> datetime:
    return NOW


def make_app(url: str) -> Tramita:
    app = Tramita(persistence_env(url), clock=pinned_clock)
    app.seed_registry(Actor("ibge-seed", "ibge"), SEEDED_ON)
    return app


@pytest.fixture(params=["memory", "sqlite"])
def app(request: pytest.FixtureRequest, tmp_path) -> Tramita:
    """The application on each store the domain must work on."""
    url = "memory://" if request.param == "memory" else f"sqlite:///{tmp_path / 'tramita.sqlite'}"
    return make_app(url)


@pytest.fixture
def memory_app() -> Tramita:
    return make_app("memory://")
