"""Benchmark: how fast the HTTP API records acts under concurrent clients (gunicorn on SQLite), compared with the
application service doing the same acts in-process in the same run.

Usage: python bench/api_load.py [--seconds S] [--clients C] [--workers W]

Why: the API adds a lot around each act (a bearer token looked up, the competence checked, the body parsed and
validated, the answer rendered as JSON, HTTP itself). This measures what is left of the service's rate once all
of that is in front of it.

What is measured
----------------
0. Set-up (untimed). In a temporary folder: a fresh SQLite database created by `tramita migrate`, Acre's
   registry seeded (`Tramita.seed_registry`), an `assembly-mesa` token issued (`Tramita.issue_token`); then
   `tramita serve --bind 127.0.0.1:<free port> --workers W` (gunicorn's threaded workers unless
   GUNICORN_CMD_ARGS says otherwise, each with its own application) on that file, polled on `/health`.

1. HTTP. C client threads (stdlib `http.client`, one connection each, kept alive when the server allows it)
   each open a case of their own with `POST /cases` (untimed; the case from the answer's `Location`): a
   voters' creation petition with 32 valid Acre voter titles, like the demo's Feijó petition, one registry
   municipality per client (opening saves that municipality's Art. 38 freeze, so the clients share no
   aggregate). Then, all starting together, for S seconds each client records on its case the Art. 10 mix in
   turn: `requisition-issued` (to the next of the six competent bodies) and `requisition-received` of it (the
   case numbers requisitions R1, R2, ... in order); every act carries the previous answer's ETag as `If-Match`.
   Only an act answer's status and ETag are read. Every request's latency is measured (`time.perf_counter`,
   sending to the whole response read); only 2xx answers count; any other is counted by status and printed
   (there should be none), and the client reads its case back (`GET /cases/{id}`: ETag and requisitions).

2. In-process (the baseline, "the service rate"), after the server has stopped, so that the two do not share
   the machine. On a second fresh database the registry is seeded and C cases opened the same way (untimed).
   Then exactly the HTTP run's work: case i gets as many acts of the same mix as HTTP client i recorded, by
   direct calls to `issue_requisition` and `receive_requisition`, with the same concurrency as the server: W
   processes (`multiprocessing`, spawned), each with its own application built as the CLI builds it (its cases
   read once, untimed, as the HTTP workers had served their openings), and one writer thread per case, C in
   all, started together. W processes rather than C threads in one: a gunicorn worker's threads share one
   interpreter lock, and W workers use W cores; one process would give the baseline one core against the
   server's W and flatter the ratio. Timed from the workers' common start (a barrier) to the last one's end.

The CPU time used during the timed HTTP part is shown for the server (gunicorn's master and workers, from
/proc, on Linux) and for the client process, to tell whether the machine's cores or the database's writer limit
the rate. Printed: both rates, the p50 and p99 latency of each side's acts, and last
`ratio: <HTTP acts/s ÷ in-process acts/s>` (goal >= 0.5).
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
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import date, datetime, timezone
from pathlib import Path
from typing import Any

from tramita.bootstrap import build_application
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
    """One timed part: the acts recorded, each one's latency, the errors by status, the time taken."""

    seconds: float = 0.0
    latencies: list[float] = field(default_factory=list)
    errors: Counter[str] = field(default_factory=Counter)

    @property
    def acts(self) -> int:
        return len(self.latencies)

    @property
    def rate(self) -> float:
        return self.acts / self.seconds if self.seconds else math.inf

    def percentile(self, p: float) -> float:
        """The p-th percentile latency in milliseconds (nearest rank)."""
        if not self.latencies:
            return math.nan
        ordered = sorted(self.latencies)
        return ordered[min(len(ordered) - 1, max(0, math.ceil(p / 100 * len(ordered)) - 1))] * 1000


def open_service_cases(url: str, clients: int) -> list[str]:
    """Untimed: a fresh database, the registry seeded and one case per client opened as the HTTP clients open
    theirs; the case numbers."""
    app = build_application(url, create_table=True)
    try:
        seeded = app.seed_registry(SEED_ACTOR, SEED_DAY)
        day = legal_today()
        numbers = []
        for client, code in enumerate(client_municipalities(seeded, clients)):
            body = petition(code, client, day)
            del body["occurred_on"]
            numbers.append(app.open_case(MESA, day, **body).number)
        return numbers
    finally:
        app.close()


def service_worker(url: str, share: list[tuple[str, int]], barrier: Any, results: Any) -> None:
    """One in-process worker: its own application (as a gunicorn worker has) and one writer thread per case of
    its share, each recording its count of acts of the mix once every worker is ready."""
    app = build_application(url)
    try:
        for number, _ in share:
            app.get_case(number)  # the HTTP workers have served the openings before their timed part
        methods = {"requisition-issued": app.issue_requisition, "requisition-received": app.receive_requisition}
        day, latencies, failures = legal_today(), [], []

        def write(number: str, acts: int) -> None:
            mix = ActMix()
            try:
                for _ in range(acts):
                    act, fields_ = mix.next()
                    began = time.perf_counter()
                    acted = methods[act](number, MESA, day, **fields_)
                    latencies.append(time.perf_counter() - began)
                    if mix.done(act) != acted.result:
                        raise AssertionError(f"{number}: {act} returned {acted.result!r}, the mix expected another")
            except BaseException as error:  # noqa: BLE001 - reported to the parent
                failures.append(repr(error))

        threads = [threading.Thread(target=write, args=item, daemon=True) for item in share]
        barrier.wait(timeout=START_TIMEOUT)
        start = time.monotonic()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        results.put((latencies, failures, start, time.monotonic()))
    finally:
        app.close()


def in_process(url: str, work: list[int], workers: int) -> Run:
    """The service rate: `work[i]` acts of the mix on case i, by `workers` processes, one thread per case."""
    numbers = open_service_cases(url, len(work))
    shares = [share for w in range(workers) if (share := [(numbers[i], work[i]) for i in range(w, len(work), workers)])]
    context = multiprocessing.get_context("spawn")
    barrier, results = context.Barrier(len(shares)), context.Queue()
    processes = [context.Process(target=service_worker, args=(url, share, barrier, results), daemon=True)
                 for share in shares]
    answers: list[tuple[Any, ...]] = []
    try:
        for process in processes:
            process.start()
        while len(answers) < len(processes):
            try:
                answers.append(results.get(timeout=5))
            except queue.Empty:
                if any(process.exitcode not in (None, 0) for process in processes):
                    raise SystemExit("an in-process worker failed (its traceback is above)") from None
    finally:
        for process in processes:
            if process.is_alive():
                process.terminate()
            process.join()
    run = Run(seconds=max(a[3] for a in answers) - min(a[2] for a in answers))
    for latencies, failures, _, _ in answers:
        if failures:
            raise SystemExit(f"the in-process run failed: {failures[0]}")
        run.latencies += latencies
    return run


class Client:
    """One HTTP client: its connection, its case, its ETag, and what it measured."""

    def __init__(self, port: int, token: str) -> None:
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        self.headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
        self.case: str | None = None
        self.etag: str | None = None
        self.run = Run()

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

    def resync(self) -> ActMix:
        """After an error: the case's current ETag and where its mix stands, read back (the case document)."""
        try:
            status, response, data = self.request("GET", f"/cases/{self.case}")
            if status == 200:
                self.etag = response.getheader("ETag")
                return ActMix.from_document(json.loads(data)["requisitions"])
        except (OSError, http.client.HTTPException):
            pass
        return ActMix()

    def record(self, until: float, day: date) -> None:
        mix = ActMix()
        while time.perf_counter() < until:
            act, body = mix.next()
            began = time.perf_counter()
            try:
                status, response, data = self.request("POST", f"/cases/{self.case}/acts/{act}",
                                                      {"occurred_on": day.isoformat(), **body},
                                                      {"If-Match": self.etag or "*"})
            except (OSError, http.client.HTTPException) as error:
                self.run.errors[type(error).__name__] += 1
                mix = self.resync()
                continue
            latency = time.perf_counter() - began
            if 200 <= status < 300:
                self.run.latencies.append(latency)
                self.etag = response.getheader("ETag")
                mix.done(act)
            else:
                self.run.errors[str(status)] += 1
                if self.run.errors[str(status)] == 1:
                    print(f"  {act} answered {status}: {data.decode(errors='replace')[:500]}", file=sys.stderr)
                mix = self.resync()

    def close(self) -> None:
        self.connection.close()


def over_http(port: int, token: str, codes: list[str], seconds: float) -> tuple[Run, list[int]]:
    """C clients, each on its own case, recording acts for `seconds` from the same start; with the acts each
    client recorded."""
    day = legal_today()
    clients = [Client(port, token) for _ in codes]
    for n, (client, code) in enumerate(zip(clients, codes)):
        client.open_case(petition(code, n, day))
    start = time.perf_counter() + 0.2  # every thread waiting on the same start
    until = start + seconds
    failures: list[BaseException] = []

    def work(client: Client) -> None:
        try:
            time.sleep(max(0.0, start - time.perf_counter()))
            client.record(until, day)
        except BaseException as error:  # noqa: BLE001 - reported after the join
            failures.append(error)

    threads = [threading.Thread(target=work, args=(client,), daemon=True) for client in clients]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    ended = time.perf_counter()
    for client in clients:
        client.close()
    if failures:
        raise failures[0]
    run = Run(seconds=ended - start)
    for client in clients:
        run.latencies += client.run.latencies
        run.errors += client.run.errors
    return run, [client.run.acts for client in clients]


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
    parser.add_argument("--seconds", type=float, default=20.0,
                        help="seconds the HTTP clients record acts for (default 20)")
    parser.add_argument("--clients", type=int, default=16, help="concurrent HTTP clients (default 16)")
    parser.add_argument("--workers", type=int, default=2,
                        help="gunicorn worker processes (default 2, one per core of a 2-core machine)")
    args = parser.parse_args(argv)
    if args.seconds <= 0:
        parser.error("--seconds must be positive")
    if args.clients < 1:
        parser.error("--clients must be at least 1")
    if args.workers < 1:
        parser.error("--workers must be at least 1")
    return args


def milliseconds(run: Run) -> str:
    return f"p50 {run.percentile(50):.1f} ms, p99 {run.percentile(99):.1f} ms"


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    # A SIGTERM to the bench unwinds like Ctrl-C, so that gunicorn and the in-process workers are stopped and the
    # temporary folder removed.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    with tempfile.TemporaryDirectory(prefix="tramita-bench-api-") as folder:
        url = f"sqlite:///{folder}/api.sqlite"
        env = {**os.environ, "TRAMITA_DATABASE_URL": url}
        tramita(env, "migrate")
        token, codes = prepare(url, args.clients)
        port = free_port()
        with server(env, port, args.workers, Path(folder) / "gunicorn.log") as gunicorn:
            server_cpu, client_cpu = process_tree_cpu(gunicorn.pid), time.process_time()
            api, work = over_http(port, token, codes, args.seconds)
            server_cpu_after, client_cpu = process_tree_cpu(gunicorn.pid), time.process_time() - client_cpu
        service = in_process(f"sqlite:///{folder}/service.sqlite", work, args.workers)

    cores = os.cpu_count() or 1
    print(f"store: sqlite (temporary files), gunicorn workers: {args.workers} "
          f"({os.environ.get('GUNICORN_CMD_ARGS') or 'tramita serve defaults'}), clients: {args.clients}, "
          f"seconds: {args.seconds:g}, cores: {cores}")
    errors = ", ".join(f"{status}: {count}" for status, count in sorted(api.errors.items())) or "none"
    print(f"HTTP: {api.acts} acts (2xx) in {api.seconds:.2f} s by {args.clients} clients "
          f"({min(work)}-{max(work)} per case); errors: {errors}")
    print(f"HTTP acts/s: {api.rate:.1f}")
    print(f"HTTP latency: {milliseconds(api)}")
    if server_cpu is not None and server_cpu_after is not None:
        used = server_cpu_after - server_cpu
        print(f"CPU during the HTTP part: server {used:.1f} s ({used / api.seconds:.2f} of {cores} cores), "
              f"clients {client_cpu:.1f} s ({client_cpu / api.seconds:.2f} cores)")
    print(f"in-process: the same {service.acts} acts on {args.clients} cases in {service.seconds:.2f} s, "
          f"{args.workers} processes, one writer thread per case (per act {milliseconds(service)})")
    print(f"in-process acts/s: {service.rate:.1f}")
    print("ratio goal: >= 0.5")
    print(f"ratio: {api.rate / service.rate:.4f}")


if __name__ == "__main__":
    main()
