"""Shared fixtures: the application on the in-memory store, on a SQLite file and on PostgreSQL, with a pinned clock.

PostgreSQL runs on a throwaway cluster (tests/pgcluster.py) started once per session, the first time a test
asks for it, with a fresh database per test. Without the server binaries those tests are skipped, and the
terminal summary says so; when the environment variable CI is set, they fail instead.

Fixtures:
- `app`: a seeded Tramita on each store (params memory, sqlite, postgres);
- `memory_app`: a seeded Tramita in memory;
- `database_url`: a fresh, empty database URL (params sqlite, postgres) for tests that build their own
  application(s) with `make_app(database_url)`, run the CLI on it, or read the stored events directly:
  `sqlite:///<tmp_path>/tramita.sqlite` or `postgresql://tramita@127.0.0.1:<port>/t_<n>?pool_size=1`;
- `new_database_url`: a factory, `new_database_url("sqlite" | "postgres")`, for a test that needs several
  stores or one backend only;
- `postgres_cluster`: the session's running cluster (skips or fails as above): `.url(dbname)`, `.connect()`.
PostgreSQL params carry the `postgres` marker: `-m "not postgres"` deselects them. `make_app(url)` (from
tests/stores.py, importable from here too) builds a seeded Tramita that is closed after the test, before its
PostgreSQL database is dropped.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Iterator

import pytest

from domain.application import Tramita
from tests.pgcluster import NoServerBinaries, PgCluster, start_cluster
from tests.servers import in_ci
from tests.stores import NOW, SEEDED_ON, close_open_apps, make_app, pinned_clock

__all__ = ["NOW", "SEEDED_ON", "make_app", "pinned_clock"]

# The command line speaks the language LC_ALL, LC_MESSAGES or LANG asks for (Portuguese unless English is asked):
# the tests read its Portuguese whatever the machine's locale, and the commands they start inherit it. A test of
# the English sets its own.
for variable in ("LC_ALL", "LC_MESSAGES"):
    os.environ.pop(variable, None)
os.environ["LANG"] = "C.UTF-8"

BACKENDS = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
# A test's application opens one connection, not five, and more (up to max_overflow) only when its threads
# ask at once: the pool's other settings stay tramita's defaults, and the suite spends less time forking.
POOL = {"pool_size": 1}


@pytest.fixture(autouse=True)
def _close_apps_after_each_test() -> Iterator[None]:
    yield
    close_open_apps()


# ---------------------------------------------------------------------- the throwaway PostgreSQL cluster

_postgres_outcome: dict[str, str] = {}


@pytest.fixture(scope="session")
def postgres_cluster() -> Iterator[PgCluster]:
    """Started on first use, stopped and deleted at the end of the session (also after a failure)."""
    try:
        cluster = start_cluster()
    except NoServerBinaries as missing:
        if in_ci():
            _postgres_outcome["failed"] = f"{missing}, and CI is set, so this is an error, not a skip"
            pytest.fail(f"PostgreSQL tests: {_postgres_outcome['failed']}", pytrace=False)
        _postgres_outcome["skipped"] = str(missing)
        pytest.skip(f"PostgreSQL tests: {missing}")
    except Exception as error:
        _postgres_outcome["failed"] = f"{str(error).splitlines()[0]} (the tests' errors show the server log)"
        raise
    _postgres_outcome["ran"] = f"{cluster.version} at {cluster.host}:{cluster.port}"
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture
def new_database_url(request: pytest.FixtureRequest, tmp_path) -> Iterator[Callable[[str], str]]:
    """`new_database_url(backend)`: a fresh, empty database on "sqlite" or "postgres", dropped after the test."""
    created: list[tuple[PgCluster, str]] = []
    sqlite_files = itertools.count(1)

    def new(backend: str) -> str:
        if backend == "sqlite":
            n = next(sqlite_files)
            return f"sqlite:///{tmp_path / ('tramita.sqlite' if n == 1 else f'tramita-{n}.sqlite')}"
        if backend == "postgres":
            cluster: PgCluster = request.getfixturevalue("postgres_cluster")
            name = cluster.create_database()
            created.append((cluster, name))
            return cluster.url(name, **POOL)
        raise ValueError(f"unknown backend {backend!r} (sqlite, postgres)")

    yield new
    if created:
        close_open_apps()  # release their pools before the database goes
        for cluster, name in created:
            cluster.drop_database(name)


@pytest.fixture(params=BACKENDS)
def database_url(request: pytest.FixtureRequest, new_database_url: Callable[[str], str]) -> str:
    """A fresh, empty store: `sqlite:///<tmp_path>/tramita.sqlite` or a new database on the throwaway cluster."""
    return new_database_url(request.param)


@pytest.fixture(params=["memory", *BACKENDS])
def app(request: pytest.FixtureRequest, new_database_url: Callable[[str], str]) -> Tramita:
    """The application on each store the domain must work on."""
    return make_app("memory://" if request.param == "memory" else new_database_url(request.param))


@pytest.fixture
def memory_app() -> Tramita:
    return make_app("memory://")


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:  # noqa: ANN001 - pytest's hook
    if "ran" in _postgres_outcome:
        line, markup = f"PostgreSQL tests ran against a throwaway cluster: {_postgres_outcome['ran']}", {"green": True}
    elif "failed" in _postgres_outcome:
        line, markup = f"PostgreSQL tests FAILED: {_postgres_outcome['failed']}", {"red": True, "bold": True}
    elif "skipped" in _postgres_outcome:
        line, markup = f"PostgreSQL tests SKIPPED: {_postgres_outcome['skipped']}", {"yellow": True, "bold": True}
    else:
        return
    terminalreporter.write_sep("-", "PostgreSQL")
    terminalreporter.write_line(line, **markup)
