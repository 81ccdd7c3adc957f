"""A throwaway PostgreSQL cluster for the tests: initdb into a temporary directory, start, stop, delete.

The cluster listens on 127.0.0.1 on a free port (its unix socket inside the temporary directory), trusts
loopback connections, and trades durability for speed (fsync, synchronous_commit and full_page_writes off):
nothing in it outlives the test session. initdb and postgres refuse to run as root, so under root they run
as the `postgres` system user (created by Debian's package) or, failing that, `nobody`.
"""

from __future__ import annotations

import contextlib
import glob
import itertools
import os
import pwd
import queue
import re
import shutil
import signal
import socket
import stat
import subprocess
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path

SERVER_PROGRAMS = ("initdb", "pg_ctl", "postgres")
SUPERUSER = "tramita"
SETTINGS = {
    "listen_addresses": "'127.0.0.1'",
    "fsync": "off",
    "synchronous_commit": "off",
    "full_page_writes": "off",
    "max_connections": "200",
    "shared_buffers": "32MB",
    "log_min_messages": "warning",
}


class NoServerBinaries(RuntimeError):
    """No PostgreSQL server programs (initdb, pg_ctl, postgres) on this machine."""


def _has_server(bindir: Path) -> bool:
    return all((bindir / program).is_file() and os.access(bindir / program, os.X_OK) for program in SERVER_PROGRAMS)


def _version_key(path: str) -> tuple[int, ...]:
    return tuple(int(n) for n in re.findall(r"\d+", Path(path).parent.name))


def find_server_bindir() -> Path:
    """`pg_config --bindir`, else the newest /usr/lib/postgresql/*/bin, else initdb and pg_ctl on PATH."""
    candidates: list[Path] = []
    if pg_config := shutil.which("pg_config"):
        try:
            out = subprocess.run([pg_config, "--bindir"], capture_output=True, text=True, timeout=10, check=True)
            candidates.append(Path(out.stdout.strip()))
        except (OSError, subprocess.SubprocessError):
            pass
    candidates += [Path(p) for p in sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=_version_key, reverse=True)]
    if (initdb := shutil.which("initdb")) and shutil.which("pg_ctl"):
        candidates.append(Path(initdb).resolve().parent)
    for bindir in candidates:
        if _has_server(bindir):
            return bindir
    raise NoServerBinaries("no PostgreSQL server binaries found (install postgresql)")


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _unprivileged_user() -> pwd.struct_passwd:
    for name in ("postgres", "nobody"):
        try:
            return pwd.getpwnam(name)
        except KeyError:
            continue
    raise RuntimeError("running as root, and neither a 'postgres' nor a 'nobody' user exists to run PostgreSQL as")


def _run_as_prefix(user: pwd.struct_passwd) -> list[str]:
    if runuser := shutil.which("runuser"):
        return [runuser, "-u", user.pw_name, "--"]
    if setpriv := shutil.which("setpriv"):
        return [setpriv, f"--reuid={user.pw_uid}", f"--regid={user.pw_gid}", "--clear-groups", "--"]
    raise RuntimeError("running as root, and neither runuser nor setpriv is available to drop privileges")


def _traversable_by_others(path: Path) -> bool:
    return all(p.stat().st_mode & stat.S_IXOTH for p in [path, *path.parents])


@dataclass
class PgCluster:
    """A running throwaway cluster; `url(dbname)` gives a URL for tramita's persistence_env."""

    bindir: Path
    root: Path
    port: int = 0
    host: str = "127.0.0.1"
    user: str = SUPERUSER
    version: str = ""
    run_as: str | None = None
    _prefix: list[str] = field(default_factory=list)
    _names: itertools.count = field(default_factory=lambda: itertools.count(1))
    _supply: _DatabaseSupply | None = None

    @property
    def datadir(self) -> Path:
        return self.root / "data"

    @property
    def logfile(self) -> Path:
        return self.root / "server.log"

    def url(self, dbname: str, **params: object) -> str:
        query = "&".join(f"{k}={v}" for k, v in params.items())
        return f"postgresql://{self.user}@{self.host}:{self.port}/{dbname}" + (f"?{query}" if query else "")

    def connect(self, dbname: str = "postgres"):  # noqa: ANN201 - psycopg is imported lazily
        import psycopg

        return psycopg.connect(host=self.host, port=self.port, user=self.user, dbname=dbname, autocommit=True,
                               connect_timeout=10)

    # ------------------------------------------------------------------ lifecycle

    def _run(self, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        result = subprocess.run([*self._prefix, *args], capture_output=True, text=True, timeout=timeout,
                                cwd=self.root)
        if result.returncode != 0:
            raise RuntimeError(f"{Path(args[0]).name} {args[-1]} failed ({result.returncode}): "
                               f"{(result.stderr or result.stdout).strip()}{self._log_tail()}")
        return result

    def _log_tail(self) -> str:
        try:
            lines = self.logfile.read_text(errors="replace").splitlines()[-15:]
        except OSError:
            return ""
        return "\nserver log:\n" + "\n".join(lines) if lines else ""

    def start(self) -> PgCluster:
        if os.geteuid() == 0:
            user = _unprivileged_user()
            self.run_as, self._prefix = user.pw_name, _run_as_prefix(user)
            os.chown(self.root, user.pw_uid, user.pw_gid)
        self._run(str(self.bindir / "initdb"), "-D", str(self.datadir), "-U", self.user, "--auth=trust",
                  "-E", "UTF8", "--locale=C", "--no-sync")
        with (self.datadir / "postgresql.conf").open("a") as conf:
            conf.write("\n# tramita's test cluster\n")
            conf.write(f"unix_socket_directories = '{self.root}'\n")
            for key, value in SETTINGS.items():
                conf.write(f"{key} = {value}\n")
        last_error: Exception | None = None
        for _ in range(3):  # another process may take the free port between choosing and binding it
            self.port = _free_port()
            try:
                self._run(str(self.bindir / "pg_ctl"), "-D", str(self.datadir), "-l", str(self.logfile),
                          "-o", f"-p {self.port}", "-w", "-t", "60", "start", timeout=90)
                break
            except RuntimeError as error:
                last_error = error
        else:
            raise RuntimeError(f"the throwaway PostgreSQL cluster did not start: {last_error}")
        with self.connect() as conn:
            self.version = "PostgreSQL " + conn.execute("SHOW server_version").fetchone()[0]
        return self

    def stop(self) -> None:
        try:
            if self._supply is not None:
                self._supply.close()
            pidfile = self.datadir / "postmaster.pid"
            if pidfile.exists():
                try:
                    self._run(str(self.bindir / "pg_ctl"), "-D", str(self.datadir), "-m", "immediate", "-w", "stop")
                except (RuntimeError, subprocess.SubprocessError):
                    # pg_ctl could not stop it: end this cluster's own postmaster, by the pid it wrote.
                    with contextlib.suppress(OSError, ValueError, IndexError):
                        os.kill(int(pidfile.read_text().splitlines()[0]), signal.SIGKILL)
                    raise
        finally:
            shutil.rmtree(self.root, ignore_errors=True)

    # ------------------------------------------------------------------ databases

    def create_database(self) -> str:
        """A new, empty database's name; created ahead of time by a background thread, so usually at once."""
        if self._supply is None:
            self._supply = _DatabaseSupply(self)
        return self._supply.take()

    def drop_database(self, name: str) -> None:
        """Drop `name` (terminating any connection left to it) in the background."""
        if self._supply is None:
            self._supply = _DatabaseSupply(self)
        self._supply.drop(name)

    def next_name(self) -> str:
        return f"t_{next(self._names)}"


class _DatabaseSupply:
    """One thread, one connection: keeps `spare` empty databases ready and drops the used ones.

    CREATE DATABASE costs about a tenth of a second; made while the previous test runs, a test does not wait for
    it, and neither does it wait for DROP DATABASE after it.
    """

    def __init__(self, cluster: PgCluster, spare: int = 2) -> None:
        self.cluster, self.spare = cluster, spare
        self.ready: queue.Queue[str] = queue.Queue()
        self.to_drop: queue.Queue[str] = queue.Queue()
        self.wake = threading.Event()
        self.stopping = False
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, name="pg-database-supply", daemon=True)
        self.thread.start()

    def take(self) -> str:
        self.wake.set()
        while True:
            try:
                return self.ready.get(timeout=0.5)
            except queue.Empty:
                if self.error is not None:
                    raise RuntimeError(f"the test cluster could not create a database: {self.error}") from self.error
                if not self.thread.is_alive():
                    raise RuntimeError("the test cluster's database supply stopped")

    def drop(self, name: str) -> None:
        self.to_drop.put(name)
        self.wake.set()

    def close(self) -> None:
        self.stopping = True
        self.wake.set()
        self.thread.join(timeout=30)

    def _run(self) -> None:
        try:
            with self.cluster.connect() as conn:
                while not self.stopping:
                    self.wake.clear()
                    while not self.to_drop.empty():
                        conn.execute(f'DROP DATABASE IF EXISTS "{self.to_drop.get()}" WITH (FORCE)')
                    if self.ready.qsize() < self.spare:
                        name = self.cluster.next_name()
                        conn.execute(f'CREATE DATABASE "{name}"')
                        self.ready.put(name)
                        continue
                    self.wake.wait(timeout=1)
        except BaseException as error:  # reported to the test that asks for a database next
            self.error = error


def start_cluster() -> PgCluster:
    """Find the server binaries, initdb into a fresh temporary directory and start; clean up on failure."""
    bindir = find_server_bindir()
    base = Path(tempfile.gettempdir())
    if os.geteuid() == 0 and not _traversable_by_others(base):
        base = Path("/tmp")
    cluster = PgCluster(bindir=bindir, root=Path(tempfile.mkdtemp(prefix="tramita-pg-", dir=base)))
    try:
        return cluster.start()
    except BaseException:
        cluster.stop()
        raise
