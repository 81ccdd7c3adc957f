"""Benchmark: what tramita adds around an act over HTTP, in the server's CPU: an act request against the floor (an
authenticated `GET /whoami` through the same server and app) and against the same act in-process, in one run.

Usage: python bench/api_load.py [--seconds S] [--rounds R] [--clients C] [--workers W]

Why: over HTTP an act is wrapped in a token check, the body's checks and parse, the competence check, the schema,
the answer and its JSON, and gunicorn's and Flask's own work. The floor is what any authenticated request costs
(gunicorn, Flask, the token's read from the store, a small JSON answer); what an act request costs beyond it is
the act plus tramita's own work around it. The goal: that work at most half the act again, i.e.
`(act request - floor) / in-process act <= 1.5`, all three in CPU time, which the machine's other work moves far
less than rates.

What is measured
----------------
0. Set-up (untimed). In a temporary folder: a fresh SQLite database created by `tramita migrate`, Acre's
   registry seeded, an `assembly-mesa` token issued (`Tramita.issue_token`); then `tramita serve --bind
   127.0.0.1:<free port> --workers W` (gunicorn's threaded workers unless GUNICORN_CMD_ARGS says otherwise, each
   with its own application, the access log on as `tramita serve` has it) on that file, polled on `/health`. C
   HTTP clients (stdlib `http.client`, one kept-alive connection each) each open a case of their own with
   `POST /cases`: a voters' creation petition with 32 valid Acre voter titles, one registry municipality per
   client (so that the clients share no aggregate). On a second fresh database, the in-process side seeds the
   registry and opens C cases the same way, then starts W worker processes (spawned), each with its own
   application built as a server worker builds its own (tramita/web.py: with the audit service, so that its acts
   check what they read against the audit log as the server's do) and its share of the cases read once, as a
   server worker has them: one process would give the in-process side one interpreter lock against the server's W.
   Both sides name a case by its id, as the API's `Location` does.

1. R rounds, each running three sides in turn for S seconds each, the order reversed every other round (act
   requests, floor, in-process; then in-process, floor, act requests), so that no side always runs first or last
   on a machine whose other work comes and goes:
   - act requests: the C clients, starting together, each record on its case the Art. 10 mix in turn
     (`requisition-issued` to the next of six competent bodies, then `requisition-received` of it), each with the
     previous answer's ETag as `If-Match`; only 2xx answers count (any other is counted by status and printed);
   - floor: the same clients, on new connections as for the acts, each sending `GET /whoami` with the same token
     (the token's id, principal and role, read from nothing but the token's own check);
   - in-process: the W processes, one writer thread per case (C in all), recording the same mix by direct calls to
     `issue_requisition` and `receive_requisition` on their own cases, started together (a barrier).
   The server's CPU (user + system of gunicorn's master and workers, from /proc, Linux only) is read before and
   after each HTTP side; each in-process worker reads its own (`time.process_time`, all its threads) around its
   side. Every request's and act's latency is taken (`time.perf_counter`, sending to the whole answer read).

Printed, per round and then min-median-max over the rounds: the server's CPU per act request and per floor
request, and the in-process act's CPU; the p50 and p99 latencies of each side; then
`overhead ratio: <(act request - floor) / in-process act>`, the median of the rounds' (goal <= 1.5).
"""

from __future__ import annotations

import argparse
import http.client
import json
import math
import multiprocessing
import os
import queue
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import date, datetime, timezone
from pathlib import Path
from typing import Any

from infrastructure.store import open_store
from tramita.bootstrap import build_application, build_audit
from tramita.side_by_side import tramita_command
from domain.acts import Actor
from domain.application import LEGAL_TIMEZONE
from domain.names import ToponymList, date_in_name
from domain.voter_title import make_voter_title

SEED_ACTOR = Actor("ibge-bench", "ibge")
SEED_DAY = date(1991, 12, 18)
MESA = Actor("mesa-bench", "assembly-mesa")
TOKEN_ISSUER = Actor("bench@cli", "token-administrator")
#: The bodies the Mesa requisitions in turn (Art. 10; the six the demo's Feijó case requisitions).
BODIES = ("ibge", "tre", "sefaz", "setop", "pge", "sectma")
SIGNATURES = 32
START_TIMEOUT = 60.0
STOP_TIMEOUT = 30.0
#: The floor: an authenticated GET of a tiny resource that does no work beyond the token's check.
FLOOR_PATH = "/whoami"


def legal_today() -> date:
    """Today in Rio Branco: every act's legal date (never in the future, never before the previous act)."""
    return datetime.now(timezone.utc).astimezone(LEGAL_TIMEZONE).date()


# ---------------------------------------------------------------------------------------------- the act mix


def client_municipalities(seeded: list[str], count: int) -> list[str]:
    """`count` municipalities of the seeded registry, one per client (no two openings save the same one)."""
    if count > len(seeded):
        raise SystemExit(f"--clients must be at most {len(seeded)}: each client opens a creation case on a "
                         "municipality of its own")
    return seeded[:count]


def petition(code: str, client: int, day: date) -> dict[str, Any]:
    """A voters' creation petition from `code` with 32 valid, distinct Acre voter titles (Art. 8)."""
    name = f"Vila Carga {client + 1}"
    if date_in_name(name) is not None or ToponymList.shipped().same_name(name):
        raise ValueError(f"{name!r} cannot name a new municipality; change petition()")
    signatures = [{"title": make_voter_title(f"{20000000 + client * 1000 + n:08d}", "24"), "zone": "5",
                   "section": str(n % 7 + 1), "area": code} for n in range(SIGNATURES)]
    return {"occurred_on": day.isoformat(), "kind": "creation", "municipalities": [code],
            "areas": [{"municipality": code, "area_km2": "100", "description": f"Área de carga {client + 1}"}],
            "proposed_name": name, "signatures": signatures}


class ActMix:
    """The next act of one case: issue a requisition to the next body, then receive it, and again.

    The case numbers its requisitions in order (R1, R2, ...), so the id of the one just issued is known without
    reading the act's answer; the in-process run checks it against what the act returned.
    """

    def __init__(self, issued: int = 0, pending: str | None = None) -> None:
        self.issued = issued
        self.pending = pending  # the requisition issued and not yet received

    @classmethod
    def from_document(cls, requisitions: dict[str, Any]) -> ActMix:
        """Where a case's mix stands, from its document's requisitions (after an error)."""
        pending = [number for number, entry in requisitions.items() if entry.get("received_on") is None]
        return cls(len(requisitions), pending[0] if pending else None)

    def next(self) -> tuple[str, dict[str, Any]]:
        if self.pending is None:
            return "requisition-issued", {"body": BODIES[self.issued % len(BODIES)], "items": ["art-4"]}
        return "requisition-received", {"requisition": self.pending}

    def done(self, act: str) -> str | None:
        """The act was recorded; the requisition it issued, if it issued one."""
        if act == "requisition-issued":
            self.issued, self.pending = self.issued + 1, f"R{self.issued + 1}"
            return self.pending
        self.pending = None
        return None


# ---------------------------------------------------------------------------------------------- measurements


@dataclass
class Run:
    """One side of one round: what it did (acts or requests, each one's latency), its errors by status, the time
    it took and the CPU seconds it used (the server's for an HTTP side, the workers' own in-process)."""

    seconds: float = 0.0
    latencies: list[float] = field(default_factory=list)
    errors: Counter[str] = field(default_factory=Counter)
    cpu: float = math.nan

    @property
    def count(self) -> int:
        return len(self.latencies)

    @property
    def cpu_each(self) -> float:
        """CPU milliseconds per act or request."""
        return self.cpu / self.count * 1000 if self.count else math.nan

    def percentile(self, p: float) -> float:
        """The p-th percentile latency in milliseconds (nearest rank)."""
        if not self.latencies:
            return math.nan
        ordered = sorted(self.latencies)
        return ordered[min(len(ordered) - 1, max(0, math.ceil(p / 100 * len(ordered)) - 1))] * 1000

    def add(self, other: Run) -> None:
        self.latencies += other.latencies
        self.errors += other.errors


def open_service_cases(url: str, clients: int) -> list[str]:
    """Untimed: a fresh database, the registry seeded and one case per client opened as the HTTP clients open
    theirs; the cases' ids."""
    app = build_application(url, create_table=True)
    try:
        seeded = app.seed_registry(SEED_ACTOR, SEED_DAY)
        day = legal_today()
        numbers = []
        for client, code in enumerate(client_municipalities(seeded, clients)):
            body = petition(code, client, day)
            del body["occurred_on"]
            numbers.append(str(app.open_case(MESA, day, **body).case_id))  # as the API's Location names it
        return numbers
    finally:
        app.close()


def service_worker(url: str, share: list[str], barrier: Any, commands: Any, results: Any) -> None:
    """One in-process worker: its own application built as a gunicorn worker builds its own (tramita/web.py: the
    application, then the audit service, from which every act checks what it reads against the audit log), its cases
    read once, then for each round it is given (seconds) one writer thread per case recording the mix, its CPU read
    around them."""
    app = build_application(url)
    store = open_store(url)
    build_audit(app, store)
    try:
        for number in share:
            app.get_case(number)  # the HTTP workers have served the openings before their timed part
        methods = {"requisition-issued": app.issue_requisition, "requisition-received": app.receive_requisition}
        mixes = {number: ActMix() for number in share}
        results.put("ready")
        while (seconds := commands.get()) is not None:
            day, latencies, failures = legal_today(), [], []

            def write(number: str, until: float) -> None:
                mix = mixes[number]
                try:
                    while time.perf_counter() < until:
                        act, fields_ = mix.next()
                        began = time.perf_counter()
                        acted = methods[act](number, MESA, day, **fields_)
                        latencies.append(time.perf_counter() - began)
                        if mix.done(act) != acted.result:
                            raise AssertionError(f"{number}: {act} returned {acted.result!r}, the mix expected another")
                except BaseException as error:  # noqa: BLE001 - reported to the parent
                    failures.append(repr(error))

            barrier.wait(timeout=START_TIMEOUT)
            cpu, began = time.process_time(), time.perf_counter()
            threads = [threading.Thread(target=write, args=(number, began + seconds), daemon=True) for number in share]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            results.put((latencies, failures, time.process_time() - cpu, time.perf_counter() - began))
    finally:
        store.close()
        app.close()


class InProcess:
    """W spawned worker processes sharing the C cases, kept for every round (their applications stay warm)."""

    def __init__(self, url: str, clients: int, workers: int) -> None:
        numbers = open_service_cases(url, clients)
        shares = [share for w in range(workers) if (share := numbers[w::workers])]
        context = multiprocessing.get_context("spawn")
        self.barrier, self.results = context.Barrier(len(shares)), context.Queue()
        self.commands = [context.Queue() for _ in shares]
        self.processes = [context.Process(target=service_worker, daemon=True,
                                          args=(url, share, self.barrier, commands, self.results))
                          for share, commands in zip(shares, self.commands)]
        for process in self.processes:
            process.start()
        self.answers(len(self.processes))

    def answers(self, count: int) -> list[Any]:
        found: list[Any] = []
        while len(found) < count:
            try:
                found.append(self.results.get(timeout=5))
            except queue.Empty:
                if any(process.exitcode not in (None, 0) for process in self.processes):
                    raise SystemExit("an in-process worker failed (its traceback is above)") from None
        return found

    def run(self, seconds: float) -> Run:
        """One in-process side: every worker's writers for `seconds`; the CPU is the workers' own."""
        for commands in self.commands:
            commands.put(seconds)
        run = Run(cpu=0.0)
        for latencies, failures, cpu, took in self.answers(len(self.processes)):
            if failures:
                raise SystemExit(f"the in-process run failed: {failures[0]}")
            run.latencies += latencies
            run.cpu += cpu
            run.seconds = max(run.seconds, took)
        return run

    def close(self) -> None:
        for commands in self.commands:
            commands.put(None)
        for process in self.processes:
            process.join(timeout=STOP_TIMEOUT)
            if process.is_alive():
                process.terminate()
                process.join()


class Client:
    """One HTTP client: its connection, its case, its ETag, where its mix stands, and what it measured."""

    def __init__(self, port: int, token: str) -> None:
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        self.headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
        self.case: str | None = None
        self.etag: str | None = None
        self.mix = ActMix()
        self.run = Run()
        self.last: http.client.HTTPResponse | None = None  # the last 2xx answer

    def request(self, method: str, path: str, body: dict[str, Any] | None = None,
                headers: dict[str, str] | None = None) -> tuple[int, http.client.HTTPResponse, bytes]:
        data = None if body is None else json.dumps(body).encode()
        try:
            self.connection.request(method, path, body=data, headers={**self.headers, **(headers or {})})
            response = self.connection.getresponse()
            return response.status, response, response.read()
        except (OSError, http.client.HTTPException):
            self.connection.close()  # the next request opens a new connection
            raise

    def open_case(self, petition_body: dict[str, Any]) -> None:
        status, response, data = self.request("POST", "/cases", petition_body)
        if status != 201:
            raise SystemExit(f"POST /cases answered {status}: {data.decode(errors='replace')[:2000]}")
        self.case = response.getheader("Location").rsplit("/", 1)[-1]
        self.etag = response.getheader("ETag")

    def resync(self) -> None:
        """After an error: the case's current ETag and where its mix stands, read back (the case document)."""
        try:
            status, response, data = self.request("GET", f"/cases/{self.case}")
            if status == 200:
                self.etag = response.getheader("ETag")
                self.mix = ActMix.from_document(json.loads(data)["requisitions"])
        except (OSError, http.client.HTTPException):
            pass

    def timed(self, name: str, send: Callable[[], tuple[int, http.client.HTTPResponse, bytes]]) -> int | None:
        """Send one request; its latency kept if it answered 2xx, its status (None: the connection failed)."""
        began = time.perf_counter()
        try:
            status, response, data = send()
        except (OSError, http.client.HTTPException) as error:
            self.run.errors[type(error).__name__] += 1
            return None
        if 200 <= status < 300:
            self.run.latencies.append(time.perf_counter() - began)
            self.last = response
        else:
            self.run.errors[str(status)] += 1
            if self.run.errors[str(status)] == 1:
                print(f"  {name} answered {status}: {data.decode(errors='replace')[:500]}", file=sys.stderr)
        return status

    def record(self, until: float, day: date) -> None:
        """Acts of the mix on the client's case until `until`."""
        while time.perf_counter() < until:
            act, body = self.mix.next()
            status = self.timed(act, lambda: self.request("POST", f"/cases/{self.case}/acts/{act}",
                                                          {"occurred_on": day.isoformat(), **body},
                                                          {"If-Match": self.etag or "*"}))
            if status is not None and 200 <= status < 300:
                self.etag = self.last.getheader("ETag")
                self.mix.done(act)
            else:
                self.resync()

    def floor(self, until: float, day: date) -> None:
        """`GET /whoami` until `until`."""
        while time.perf_counter() < until:
            self.timed(FLOOR_PATH, lambda: self.request("GET", FLOOR_PATH))


def over_http(server_pid: int, clients: list[Client], seconds: float, side: str) -> Run:
    """One HTTP side: every client, on a new connection, sending `side`'s requests ("record" or "floor") for
    `seconds` from the same start; the server's CPU read around them."""
    day = legal_today()
    for client in clients:
        client.connection.close()  # a new connection each side, as the keep-alive of an idle one may have ended
        client.run = Run()
    failures: list[BaseException] = []
    start = time.perf_counter() + 0.2  # every thread waiting on the same start
    until = start + seconds

    def work(client: Client) -> None:
        try:
            time.sleep(max(0.0, start - time.perf_counter()))
            getattr(client, side)(until, day)
        except BaseException as error:  # noqa: BLE001 - reported after the join
            failures.append(error)

    threads = [threading.Thread(target=work, args=(client,), daemon=True) for client in clients]
    before = process_tree_cpu(server_pid)
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    after = process_tree_cpu(server_pid)
    run = Run(seconds=time.perf_counter() - start)
    if failures:
        raise failures[0]
    for client in clients:
        run.add(client.run)
    run.cpu = after - before if before is not None and after is not None else math.nan
    return run


# ---------------------------------------------------------------------------------------------- the server


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def tramita(env: dict[str, str], *args: str) -> str:
    """Run a `tramita` command of this installation; its output, or exit with it on failure."""
    done = subprocess.run(tramita_command(*args), env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True)
    if done.returncode:
        raise SystemExit(f"tramita {' '.join(args)} failed ({done.returncode}):\n{done.stdout}")
    return done.stdout


def prepare(url: str, clients: int) -> tuple[str, list[str]]:
    """Seed the registry and issue the Mesa's token (after `tramita migrate`); the token and the clients'
    municipalities."""
    app = build_application(url)
    try:
        codes = client_municipalities(app.seed_registry(SEED_ACTOR, SEED_DAY), clients)
        token = app.issue_token(TOKEN_ISSUER, name="bench-mesa", role="assembly-mesa").token
    finally:
        app.close()
    return token, codes


def tail(path: Path, lines: int = 40) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


@contextmanager
def server(env: dict[str, str], port: int, workers: int, log_path: Path) -> Iterator[subprocess.Popen[bytes]]:
    """`tramita serve` (gunicorn) until the block ends; stopped with SIGTERM (gracefully) whatever happens."""
    with open(log_path, "wb") as log:
        process = subprocess.Popen(tramita_command("serve", "--bind", f"127.0.0.1:{port}", "--workers", str(workers)),
                                   env=env, stdout=log, stderr=subprocess.STDOUT)
        try:
            wait_healthy(process, port, log_path)
            yield process
        finally:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
                try:
                    process.wait(timeout=STOP_TIMEOUT)
                except subprocess.TimeoutExpired:
                    print(f"gunicorn did not stop in {STOP_TIMEOUT:.0f} s after SIGTERM; killing it", file=sys.stderr)
                    process.kill()
                    process.wait()


def wait_healthy(process: subprocess.Popen[bytes], port: int, log_path: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"tramita serve exited ({process.returncode}):\n{tail(log_path)}")
        try:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            connection.request("GET", "/health")
            if connection.getresponse().status == 200:
                connection.close()
                return
            connection.close()
        except OSError:
            pass
        time.sleep(0.2)
    raise SystemExit(f"/health did not answer within {START_TIMEOUT:.0f} s:\n{tail(log_path)}")


def process_tree_cpu(root: int) -> float | None:
    """CPU seconds (user + system) used so far by `root` and its living children (Linux /proc), else None."""
    ticks = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    total, found = 0, False
    try:
        entries = os.listdir("/proc")
    except OSError:
        return None
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                fields_ = stat.read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        pid, ppid = int(entry), int(fields_[1])
        if pid == root or ppid == root:
            total, found = total + int(fields_[11]) + int(fields_[12]), True
    return total / ticks if found else None


# ---------------------------------------------------------------------------------------------- main


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=6.0, help="seconds each side runs in a round (default 6)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of the three sides (default 3)")
    parser.add_argument("--clients", type=int, default=16, help="concurrent HTTP clients and in-process writers "
                                                                "(default 16)")
    parser.add_argument("--workers", type=int, default=2,
                        help="gunicorn worker processes and in-process workers (default 2, one per core of a "
                             "2-core machine)")
    args = parser.parse_args(argv)
    if args.seconds <= 0:
        parser.error("--seconds must be positive")
    for name in ("rounds", "clients", "workers"):
        if getattr(args, name) < 1:
            parser.error(f"--{name} must be at least 1")
    return args


def spread(values: list[float], digits: int = 3) -> str:
    """min-median-max of the rounds' values."""
    return "-".join(f"{value:.{digits}f}" for value in (min(values), statistics.median(values), max(values)))


def latency(runs: list[Run]) -> str:
    whole = Run()
    for run in runs:
        whole.add(run)
    return f"p50 {whole.percentile(50):.1f} ms, p99 {whole.percentile(99):.1f} ms"


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    # A SIGTERM to the bench unwinds like Ctrl-C, so that gunicorn and the in-process workers are stopped and the
    # temporary folder removed.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    sides: dict[str, list[Run]] = {"record": [], "floor": [], "in-process": []}
    with tempfile.TemporaryDirectory(prefix="tramita-bench-api-") as folder:
        url = f"sqlite:///{folder}/api.sqlite"
        env = {**os.environ, "TRAMITA_DATABASE_URL": url}
        tramita(env, "migrate")
        token, codes = prepare(url, args.clients)
        port = free_port()
        service = InProcess(f"sqlite:///{folder}/service.sqlite", args.clients, args.workers)
        try:
            with server(env, port, args.workers, Path(folder) / "gunicorn.log") as gunicorn:
                if process_tree_cpu(gunicorn.pid) is None:
                    raise SystemExit("the server's CPU cannot be read (/proc): this bench runs on Linux")
                clients = [Client(port, token) for _ in codes]
                day = legal_today()
                for n, (client, code) in enumerate(zip(clients, codes)):
                    client.open_case(petition(code, n, day))
                for round_ in range(args.rounds):
                    order = ["record", "floor", "in-process"]
                    for side in order if round_ % 2 == 0 else order[::-1]:
                        sides[side].append(service.run(args.seconds) if side == "in-process" else
                                           over_http(gunicorn.pid, clients, args.seconds, side))
                for client in clients:
                    client.connection.close()
        finally:
            service.close()
    report(args, sides)


def report(args: argparse.Namespace, sides: dict[str, list[Run]]) -> None:
    acts, floors, service = sides["record"], sides["floor"], sides["in-process"]
    print(f"store: sqlite (temporary files), gunicorn workers: {args.workers} "
          f"({os.environ.get('GUNICORN_CMD_ARGS') or 'tramita serve defaults'}), clients: {args.clients}, "
          f"{args.rounds} rounds of {args.seconds:g} s per side, cores: {os.cpu_count() or 1}")
    ratios = []
    for n, (act, floor, own) in enumerate(zip(acts, floors, service), start=1):
        ratios.append((act.cpu_each - floor.cpu_each) / own.cpu_each)
        print(f"round {n}: {act.count} act requests at {act.cpu_each:.3f} ms of server CPU each, {floor.count} "
              f"floor requests at {floor.cpu_each:.3f} ms, {own.count} in-process acts at {own.cpu_each:.3f} ms; "
              f"overhead ratio {ratios[-1]:.2f}")
    errors = Counter[str]()
    for run in acts + floors:
        errors += run.errors
    print("HTTP errors: " + (", ".join(f"{status}: {count}" for status, count in sorted(errors.items())) or "none"))
    print(f"server CPU per act request (ms): {spread([run.cpu_each for run in acts])}")
    print(f"server CPU per floor request, GET {FLOOR_PATH} (ms): {spread([run.cpu_each for run in floors])}")
    print(f"in-process act CPU (ms): {spread([run.cpu_each for run in service])}")
    print(f"act requests/s: {spread([run.count / run.seconds for run in acts], 0)}; "
          f"in-process acts/s: {spread([run.count / run.seconds for run in service], 0)}")
    print(f"act request latency: {latency(acts)}; floor latency: {latency(floors)}; in-process act latency: "
          f"{latency(service)}")
    print(f"overhead ratio over the rounds: {spread(ratios, 2)}")
    print("overhead ratio goal: <= 1.5")
    print(f"overhead ratio: {statistics.median(ratios):.4f}")


if __name__ == "__main__":
    main()
