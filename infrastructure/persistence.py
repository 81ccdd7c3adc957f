"""Where the events are stored: `TRAMITA_DATABASE_URL` mapped onto the eventsourcing library's settings.

Infrastructure, not law: the domain never sees a URL; the bootstrap (tramita/bootstrap.py) hands the
application the settings this module makes.
"""

from __future__ import annotations

import getpass
from urllib.parse import parse_qs, unquote, urlsplit

ACCEPTED_URLS = "memory://, sqlite:///path, postgresql://user:password@host:port/dbname"

# Query parameters of a postgresql:// URL: the library setting each one sets, and tramita's default.
POSTGRES_PARAMETERS: dict[str, tuple[str, str]] = {
    "pool_size": ("POSTGRES_POOL_SIZE", "5"),
    "max_overflow": ("POSTGRES_MAX_OVERFLOW", "10"),
    "max_waiting": ("POSTGRES_MAX_WAITING", "0"),
    "connect_timeout": ("POSTGRES_CONNECT_TIMEOUT", "10"),
    "lock_timeout": ("POSTGRES_LOCK_TIMEOUT", "5"),
    "idle_in_transaction_session_timeout": ("POSTGRES_IDLE_IN_TRANSACTION_SESSION_TIMEOUT", "5"),
    "conn_max_age": ("POSTGRES_CONN_MAX_AGE", "3600"),
    "pre_ping": ("POSTGRES_PRE_PING", "n"),
    "schema": ("POSTGRES_SCHEMA", "public"),
}
_FLOAT_PARAMETERS = {"conn_max_age"}
_TEXT_PARAMETERS = {"schema"}
_BOOLEAN_PARAMETERS = {"pre_ping"}


#: The in-process store: the library's, reading an aggregate's later events by version (tramita/memory.py).
MEMORY_FACTORY = "tramita.memory:MemoryFactory"
#: The SQLite store: the library's, reading on a connection of each thread's own (infrastructure/sqlite.py).
SQLITE_FACTORY = "infrastructure.sqlite:ThreadReadsFactory"
#: The SQLite events recorder: the library's, reading an aggregate's events in one statement (infrastructure/sqlite.py).
SQLITE_RECORDER = "infrastructure.sqlite:OneStatementReadsRecorder"


def persistence_env(database_url: str, *, create_table: bool = True) -> dict[str, str]:
    """Map `TRAMITA_DATABASE_URL` onto the library's settings.

    Accepted: `memory://` (in-process), `sqlite:///relative/path` or `sqlite:////absolute/path`, and
    `postgresql://user:password@host:port/dbname` (or `postgres://`; user and password percent-decoded; port
    5432 if absent; no host means libpq's default unix socket, and a socket directory can be given
    percent-encoded as the host or as `?host=/path`). PostgreSQL query parameters, all optional, with
    tramita's defaults:

    - `pool_size=5`: connections the pool opens and keeps; `max_overflow=10`: extra connections under load;
      `max_waiting=0`: callers allowed to queue for a connection (0: no limit);
    - `connect_timeout=10`: seconds a read or a save waits for a connection from the pool (the library
      retries a read or a save that times out a few times before raising);
    - `lock_timeout=5`: seconds a save waits for the events table's lock (every save takes it, to number
      the notifications in order); the library's own default, 0, waits forever, so a stuck writer would
      stall every other save; past the timeout the library retries the save a few times, then raises;
    - `idle_in_transaction_session_timeout=5`: seconds before the server ends a session left idle inside
      a transaction;
    - `conn_max_age=3600`: seconds before a pooled connection is replaced; `pre_ping=n`: check a
      connection before lending it;
    - `schema=public`: where the tables are (the schema must exist).

    Every one of these is written out, so POSTGRES_* variables that the process environment may carry
    (the library reads them too) do not change the store the URL names. `create_table=False` sets the library's
    CREATE_TABLE=n for SQLite and PostgreSQL: the tables are then created once (by `tramita migrate`), not by
    every worker.
    """
    if database_url in ("memory://", "memory:"):
        return {"PERSISTENCE_MODULE": MEMORY_FACTORY}
    create = "y" if create_table else "n"
    if database_url.startswith("sqlite:///"):
        path = database_url[len("sqlite:///"):]
        if not path:
            raise ValueError("TRAMITA_DATABASE_URL: sqlite:/// needs a file path")
        return {"PERSISTENCE_MODULE": SQLITE_FACTORY, "SQLITE_DBNAME": path,
                "SQLITE_LOCK_TIMEOUT": "10", "CREATE_TABLE": create, "APPLICATION_RECORDER_TOPIC": SQLITE_RECORDER}
    if database_url.startswith(("postgresql://", "postgres://")):
        return _postgres_env(database_url) | {"CREATE_TABLE": create}
    raise ValueError(f"TRAMITA_DATABASE_URL: unknown scheme in {_redacted(database_url)!r} "
                     f"(accepted: {ACCEPTED_URLS})")


def _redacted(database_url: str) -> str:
    """The URL with any password masked, fit for an error message."""
    scheme, sep, rest = database_url.partition("://")
    netloc, slash, tail = rest.partition("/")
    userinfo, at, hostport = netloc.rpartition("@")
    if not (sep and at and ":" in userinfo):
        return database_url
    return f"{scheme}://{userinfo.partition(':')[0]}:***@{hostport}{slash}{tail}"


def _postgres_env(database_url: str) -> dict[str, str]:
    def refuse(problem: str) -> ValueError:
        return ValueError(f"TRAMITA_DATABASE_URL: {problem} in {_redacted(database_url)!r} "
                          f"(expected postgresql://user:password@host:port/dbname?pool_size=5&...)")

    parts = urlsplit(database_url)
    if parts.fragment:
        raise refuse("a fragment (#...) has no meaning")
    userinfo, _, hostport = parts.netloc.rpartition("@")
    user, has_password, password = userinfo.partition(":")
    if hostport.startswith("["):  # [IPv6]:port
        host, _, after = hostport[1:].partition("]")
        port = after.removeprefix(":")
    else:
        host, _, port = hostport.partition(":")
    host, port = unquote(host), port or "5432"
    if not port.isdigit() or not 0 < int(port) < 65536:
        raise refuse(f"the port {port!r} is not a port number")
    dbname = unquote(parts.path.removeprefix("/"))
    if not dbname or "/" in dbname:
        raise refuse("the database name is missing" if not dbname else f"{dbname!r} is not a database name")

    env = {"PERSISTENCE_MODULE": "eventsourcing.postgres", "POSTGRES_DBNAME": dbname, "POSTGRES_HOST": host,
           "POSTGRES_PORT": port, "POSTGRES_USER": unquote(user) if user else getpass.getuser(),
           "POSTGRES_PASSWORD": unquote(password) if has_password else ""}
    env |= {setting: default for setting, default in POSTGRES_PARAMETERS.values()}
    # One round trip per save, with the events table locked inside it (tramita/postgres.py).
    env |= {"POSTGRES_ENABLE_DB_FUNCTIONS": "y", "APPLICATION_RECORDER_TOPIC": "tramita.postgres:OrderedInsertRecorder"}
    for name, values in parse_qs(parts.query, keep_blank_values=True, strict_parsing=False).items():
        if len(values) != 1:
            raise refuse(f"the parameter {name!r} is given {len(values)} times")
        value = values[0]
        if name == "host":
            if host:
                raise refuse("the host is given twice (in the URL and as ?host=)")
            env["POSTGRES_HOST"] = value
            continue
        if name not in POSTGRES_PARAMETERS:
            raise refuse(f"unknown parameter {name!r} (accepted: host, {', '.join(POSTGRES_PARAMETERS)})")
        if name in _TEXT_PARAMETERS:
            if not value.strip():
                raise refuse(f"{name} is empty")
        elif name in _BOOLEAN_PARAMETERS:
            if value.lower() not in ("y", "yes", "t", "true", "on", "1", "n", "no", "f", "false", "off", "0"):
                raise refuse(f"{name}={value!r} is not yes or no")
        else:
            kind = "number" if name in _FLOAT_PARAMETERS else "integer"
            try:
                number = float(value) if kind == "number" else int(value)
            except ValueError:
                number = -1
            if number < 0:
                raise refuse(f"{name}={value!r} is not a non-negative {kind}")
        env[POSTGRES_PARAMETERS[name][0]] = value
    if int(env["POSTGRES_POOL_SIZE"]) + int(env["POSTGRES_MAX_OVERFLOW"]) < 1:
        raise refuse("pool_size + max_overflow must allow at least one connection")
    return env
