"""TRAMITA_DATABASE_URL onto the library's settings: PostgreSQL URLs, their parameters, CREATE_TABLE."""

from __future__ import annotations

import pytest
from eventsourcing.persistence import ProgrammingError

from infrastructure.persistence import persistence_env
from tests.conftest import make_app

DEFAULTS = {
    "POSTGRES_POOL_SIZE": "5",
    "POSTGRES_MAX_OVERFLOW": "10",
    "POSTGRES_MAX_WAITING": "0",
    "POSTGRES_CONNECT_TIMEOUT": "10",
    "POSTGRES_LOCK_TIMEOUT": "5",
    "POSTGRES_IDLE_IN_TRANSACTION_SESSION_TIMEOUT": "5",
    "POSTGRES_CONN_MAX_AGE": "3600",
    "POSTGRES_PRE_PING": "n",
    "POSTGRES_SCHEMA": "public",
}
#: Every save is one call of tramita's insert function (tramita/postgres.py).
RECORDER = {"POSTGRES_ENABLE_DB_FUNCTIONS": "y", "APPLICATION_RECORDER_TOPIC": "tramita.postgres:OrderedInsertRecorder"}


def test_a_postgresql_url_gives_every_library_setting_with_the_documented_defaults():
    assert persistence_env("postgresql://tramita:s3cret@db.example:6543/cases") == {
        "PERSISTENCE_MODULE": "eventsourcing.postgres",
        "POSTGRES_DBNAME": "cases",
        "POSTGRES_HOST": "db.example",
        "POSTGRES_PORT": "6543",
        "POSTGRES_USER": "tramita",
        "POSTGRES_PASSWORD": "s3cret",
        "CREATE_TABLE": "y",
    } | DEFAULTS | RECORDER


def test_the_postgres_scheme_is_the_same_and_the_port_defaults_to_5432():
    env = persistence_env("postgres://tramita@localhost/cases")
    assert (env["PERSISTENCE_MODULE"], env["POSTGRES_PORT"], env["POSTGRES_PASSWORD"]) == (
        "eventsourcing.postgres", "5432", "")


def test_user_password_database_and_a_socket_directory_are_percent_decoded():
    env = persistence_env("postgresql://ana%20maria:p%40ss%3Aw%2Fd%25@%2Fvar%2Frun%2Fpostgresql/tr%C3%A2mita")
    assert env["POSTGRES_USER"] == "ana maria"
    assert env["POSTGRES_PASSWORD"] == "p@ss:w/d%"
    assert env["POSTGRES_HOST"] == "/var/run/postgresql"
    assert env["POSTGRES_DBNAME"] == "trâmita"


def test_an_ipv6_host_and_a_host_given_as_a_parameter():
    assert persistence_env("postgresql://u@[::1]:5433/db")["POSTGRES_HOST"] == "::1"
    assert persistence_env("postgresql://u@[::1]:5433/db")["POSTGRES_PORT"] == "5433"
    assert persistence_env("postgresql://u@/db?host=/run/pg")["POSTGRES_HOST"] == "/run/pg"


def test_query_parameters_set_the_pool_and_the_timeouts():
    env = persistence_env("postgresql://u:p@h/db?pool_size=2&max_overflow=0&connect_timeout=3&lock_timeout=1"
                          "&idle_in_transaction_session_timeout=7&max_waiting=20&conn_max_age=60.5&pre_ping=yes"
                          "&schema=tramita")
    assert {k: env[k] for k in DEFAULTS} == {
        "POSTGRES_POOL_SIZE": "2", "POSTGRES_MAX_OVERFLOW": "0", "POSTGRES_MAX_WAITING": "20",
        "POSTGRES_CONNECT_TIMEOUT": "3", "POSTGRES_LOCK_TIMEOUT": "1",
        "POSTGRES_IDLE_IN_TRANSACTION_SESSION_TIMEOUT": "7", "POSTGRES_CONN_MAX_AGE": "60.5",
        "POSTGRES_PRE_PING": "yes", "POSTGRES_SCHEMA": "tramita"}


def test_the_url_wins_over_postgres_variables_of_the_process_environment(monkeypatch, memory_app):
    monkeypatch.setenv("POSTGRES_HOST", "elsewhere")
    monkeypatch.setenv("POSTGRES_PASSWORD", "from-the-environment")
    monkeypatch.setenv("POSTGRES_LOCK_TIMEOUT", "0")
    env = persistence_env("postgresql://u@h/db")
    settings = memory_app.construct_env("tramita", env)
    assert (settings.get("POSTGRES_HOST"), settings.get("POSTGRES_PASSWORD"), settings.get("POSTGRES_LOCK_TIMEOUT")) \
        == ("h", "", "5")


@pytest.mark.parametrize("url", ["sqlite:///var/t.sqlite", "postgresql://u@h/db"])
def test_create_table_is_on_by_default_and_off_for_workers_once_the_tables_exist(url):
    assert persistence_env(url)["CREATE_TABLE"] == "y"
    assert persistence_env(url, create_table=False)["CREATE_TABLE"] == "n"
    assert "CREATE_TABLE" not in persistence_env("memory://", create_table=False)


@pytest.mark.parametrize(("url", "problem"), [
    ("postgresql://u@h/", "the database name is missing"),
    ("postgresql://u@h", "the database name is missing"),
    ("postgresql://u@h/a/b", "is not a database name"),
    ("postgresql://u@h:54x2/db", "is not a port number"),
    ("postgresql://u@h:70000/db", "is not a port number"),
    ("postgresql://u@h/db?pool_size=many", "pool_size='many' is not a non-negative integer"),
    ("postgresql://u@h/db?lock_timeout=-1", "lock_timeout='-1' is not a non-negative integer"),
    ("postgresql://u@h/db?connect_timeout=", "connect_timeout='' is not a non-negative integer"),
    ("postgresql://u@h/db?conn_max_age=soon", "conn_max_age='soon' is not a non-negative number"),
    ("postgresql://u@h/db?pre_ping=maybe", "pre_ping='maybe' is not yes or no"),
    ("postgresql://u@h/db?schema=", "schema is empty"),
    ("postgresql://u@h/db?sslmode=require", "unknown parameter 'sslmode' (accepted: host, pool_size"),
    ("postgresql://u@h/db?pool_size=1&pool_size=2", "'pool_size' is given 2 times"),
    ("postgresql://u@h/db?host=/run/pg", "the host is given twice"),
    ("postgresql://u@h/db?pool_size=0&max_overflow=0", "must allow at least one connection"),
])
def test_a_malformed_postgresql_url_is_refused_naming_the_variable_and_the_problem(url, problem):
    with pytest.raises(ValueError, match="TRAMITA_DATABASE_URL") as refused:
        persistence_env(url)
    assert problem in str(refused.value)


def test_an_unknown_scheme_lists_the_accepted_ones_without_showing_the_password():
    with pytest.raises(ValueError) as refused:
        persistence_env("mysql://tramita:hunter2@db/cases")
    message = str(refused.value)
    assert message.startswith("TRAMITA_DATABASE_URL: unknown scheme")
    assert "memory://, sqlite:///path, postgresql://user:password@host:port/dbname" in message
    assert "hunter2" not in message and "mysql://tramita:***@db/cases" in message
    with pytest.raises(ValueError) as refused:
        persistence_env("postgresql://tramita:hunter2@db/cases?pool_size=x")
    assert "hunter2" not in str(refused.value)


@pytest.mark.postgres
def test_with_create_table_off_a_worker_creates_nothing_and_uses_the_tables_created_once(new_database_url):
    url = new_database_url("postgres")
    with pytest.raises(ProgrammingError, match='relation "public.tramita_events" does not exist'):
        make_app(url, create_table=False)
    make_app(url)  # creates the tables and seeds the registry, as `tramita migrate` will
    worker = make_app(url, seed=False, create_table=False)
    assert worker.municipality("1200708").name == "Xapuri"


@pytest.mark.postgres
def test_a_postgresql_save_is_one_call_of_tramitas_insert_function_which_locks_the_events_table_first(
        new_database_url):
    app = make_app(new_database_url("postgres"))
    assert type(app.recorder).__name__ == "OrderedInsertRecorder"
    assert app.recorder.datastore.enable_db_functions
    with app.recorder.datastore.get_connection() as conn, conn.cursor() as cursor:
        cursor.execute("SELECT prosrc FROM pg_proc WHERE proname = %s", (app.recorder.pg_function_name_insert_events,))
        (source,) = cursor.fetchone().values()
    lock, insert = source.index("LOCK TABLE"), source.index("INSERT INTO")
    assert "IN EXCLUSIVE MODE" in source[lock:insert] and lock < insert
    notifications = app.recorder.select_notifications(start=None, limit=1000)
    assert [n.id for n in notifications] == sorted(n.id for n in notifications) and notifications  # the seed saved


def test_an_sqlite_store_reads_an_aggregate_s_events_as_the_library_does_in_one_statement(tmp_path):
    from uuid import uuid4

    from eventsourcing.persistence import OperationalError, StoredEvent
    from eventsourcing.sqlite import SQLiteApplicationRecorder

    from domain.application import Tramita
    from infrastructure.sqlite import OneStatementReadsRecorder

    app = Tramita(persistence_env(f"sqlite:///{tmp_path / 't.sqlite'}"), clock=lambda: None)
    recorder = app.recorder
    assert type(recorder) is OneStatementReadsRecorder
    library = SQLiteApplicationRecorder(recorder.datastore)
    ids = [uuid4(), uuid4()]
    recorder.insert_events([StoredEvent(i, v, "t", f"{i}-{v}".encode()) for v in range(1, 8) for i in ids])
    for aggregate in [*ids, str(ids[0]), uuid4()]:
        for select in [{}, {"gt": 3}, {"lte": 5}, {"gt": 2, "lte": 6}, {"desc": True}, {"desc": True, "limit": 2},
                       {"gt": 1, "desc": True, "limit": 3}, {"limit": 0}, {"gt": 7}, {"desc": None}]:
            assert recorder.select_events(aggregate, **select) == library.select_events(aggregate, **select)
    with recorder.datastore.transaction(commit=True) as c:
        c.execute("DROP TABLE stored_events")
    with pytest.raises(OperationalError):  # the library's error, as its own read raises
        recorder.select_events(ids[0])
    with pytest.raises(OperationalError):
        library.select_events(ids[0])
