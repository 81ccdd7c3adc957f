"""The seeded application the tests build, and a record of those built, so that each test's are closed after it.

Kept out of conftest.py on purpose: test modules import `tests.conftest` while pytest loads the same file as
`conftest`, so a registry kept there would exist twice; this module is imported once, as `tests.stores`.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date, datetime, timezone

from audit.notes import Signer

from domain.acts import Actor
from domain.application import Tramita
from infrastructure.persistence import persistence_env

NOW = datetime(2026, 11, 30, 15, 0, tzinfo=timezone.utc)
SEEDED_ON = date(1991, 12, 18)

_open_apps: list[Tramita] = []


def pinned_clock() -> datetime:
    return NOW


def make_app(url: str, *, seed: bool = True, create_table: bool = True, signer: Signer | None = None,
             clock: Callable[[], datetime] = pinned_clock) -> Tramita:
    """A Tramita on `url`, closed after the test, with the registry seeded (a second seeding records nothing);
    with `signer`, every event it stores is signed."""
    app = Tramita(persistence_env(url, create_table=create_table), clock=clock, signer=signer)
    _open_apps.append(app)
    if seed:
        app.seed_registry(Actor("ibge-seed", "ibge"), SEEDED_ON)
    return app


def close_open_apps() -> None:
    """Close the applications made so far (their PostgreSQL pools, their SQLite connections)."""
    while _open_apps:
        _open_apps.pop().close()
