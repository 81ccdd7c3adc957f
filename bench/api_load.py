"""Benchmark: how fast the HTTP API records acts under concurrent clients (gunicorn on SQLite), compared with the
application service called in-process in the same run.

Usage: python bench/api_load.py [--seconds S] [--clients C] [--workers W]

Why: the API adds a lot around each act (a bearer token looked up, the competence checked, the body parsed
and validated, the case read back at its new version and rendered as JSON, HTTP itself, and several worker
processes sharing SQLite's single writer). This measures what is left of the service's rate once all of
that is in front of it.

What is measured
----------------
0. Set-up (untimed). In a temporary folder: a fresh SQLite database created by `tramita migrate`, Acre's
   registry seeded (`Tramita.seed_registry`), and an `assembly-mesa` token issued with `Tramita.issue_token`.
   Then `tramita serve --bind 127.0.0.1:<free port> --workers W` (gunicorn, tramita's threaded workers
   unless GUNICORN_CMD_ARGS says otherwise, each with its own application) is started with `TRAMITA_DATABASE_URL` pointing at that file, and `/health` is polled until it
   answers.

1. HTTP. C client threads (stdlib `http.client`, one connection each, kept open when the server allows it:
   the threaded workers keep it alive for 5 s between requests; sync workers close it after every response) each open a case of
   their own with `POST /cases` (untimed): a voters' creation petition from one municipality of the registry,
   one municipality per client (opening freezes it, Art. 38, so two creations cannot share one), with 32
   signatures of valid Acre voter titles (`domain.voter_title.make_voter_title`), like the demo's Feijó
   petition. Then, all starting together, for S seconds each client records, on its own case, the demo's
   Art. 10 act mix in turn: `requisition-issued` (to the next of the six competent bodies) and
   `requisition-received` with the requisition id the issue returned in its `result`; every act carries the
   ETag of the previous response as `If-Match`. Each client has its own case, so no act waits for another's
   version of a case: what the clients share is the server's workers and SQLite's one writer at a time.
   Every request's latency is measured (`time.perf_counter`, from sending to the whole response read).
   Only 2xx answers count as acts; any other answer is counted by status and printed (there should be none;
   a 412 would mean the client mishandled the ETag), and the client re-reads its case's ETag and goes on.

2. In-process (the baseline, "the service rate"). A `Tramita` application built as the CLI builds it (same
   SQLite settings) on a second fresh database file, with the registry seeded and C cases opened the same
   way (untimed), records the same act mix by calling `issue_requisition` and `receive_requisition`
   directly, single thread, round-robin over the C cases (so cases grow as the HTTP clients' do), for S
   seconds. It runs before the server starts, so the two measurements do not share the machine.

The CPU time used during the timed HTTP part is shown for the server (gunicorn's master and workers, from
/proc, on Linux) and for the client process, to tell whether the machine's cores or the database's writer
limit the rate. The last line printed is `ratio: <HTTP acts/s ÷ in-process acts/s>` (goal >= 0.4).
"""

from __future__ import annotations

import argparse
import http.client
import json
import math
import os
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
from api.serve import tramita_command
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
    """`count` municipalities of the seeded registry, one per client (a creation freezes its origin, Art. 38)."""
    if count > len(seeded):
        raise SystemExit(f"--clients must be at most {len(seeded)}: each client opens a creation case on a "
                         "municipality of its own, and opening one freezes it (Art. 38)")
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
    """The next act of one case: issue a requisition to the next body, then receive it, and again."""

    def __init__(self) -> None:
        self.issued = 0
        self.pending: str | None = None  # the requisition issued and not yet received

    def next(self) -> tuple[str, dict[str, Any]]:
        if self.pending is None:
            return "requisition-issued", {"body": BODIES[self.issued % len(BODIES)], "items": ["art-4"]}
        return "requisition-received", {"requisition": self.pending}

    def done(self, act: str, result: Any) -> None:
        if act == "requisition-issued":
            self.issued, self.pending = self.issued + 1, result
        else:
            self.pending = None


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


def in_process(url: str, clients: int, seconds: float) -> Run:
    """The service rate: the same act mix on `clients` cases, called directly, one thread."""
    app = build_application(url, create_table=True)
    try:
        seeded = app.seed_registry(SEED_ACTOR, SEED_DAY)
        day = legal_today()
        cases = []
        for client, code in enumerate(client_municipalities(seeded, clients)):
            body = petition(code, client, day)
            del body["occurred_on"]
            cases.append((app.open_case(MESA, day, **body).number, ActMix()))
        methods = {"requisition-issued": app.issue_requisition, "requisition-received": app.receive_requisition}
        run = Run()
        start = time.perf_counter()
        deadline = start + seconds
        while (now := time.perf_counter()) < deadline:
            for case, mix in cases:
                act, fields_ = mix.next()
                began = time.perf_counter()
                acted = methods[act](case, MESA, day, **fields_)
                run.latencies.append(time.perf_counter() - began)
                mix.done(act, acted.result)
        run.seconds = now - start
        return run
    finally:
        app.close()


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
        self.case, self.etag = json.loads(data)["case"]["id"], response.getheader("ETag")

    def resync(self) -> None:
        """After an error: the case's current ETag, read back."""
        try:
            status, response, _ = self.request("GET", f"/cases/{self.case}")
            if status == 200:
                self.etag = response.getheader("ETag")
        except (OSError, http.client.HTTPException):
            pass

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
                self.resync()
                continue
            latency = time.perf_counter() - began
            if 200 <= status < 300:
                self.run.latencies.append(latency)
                self.etag = response.getheader("ETag")
                mix.done(act, json.loads(data)["result"])
            else:
                self.run.errors[str(status)] += 1
                if self.run.errors[str(status)] == 1:
                    print(f"  {act} answered {status}: {data.decode(errors='replace')[:500]}", file=sys.stderr)
                self.resync()
                mix = ActMix()  # an unreceived requisition may stay open; start the pair again

    def close(self) -> None:
        self.connection.close()


def over_http(port: int, token: str, codes: list[str], seconds: float) -> Run:
    """C clients, each on its own case, recording acts for `seconds` from the same start."""
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
    parser.add_argument("--seconds", type=float, default=20.0,
                        help="seconds each part records acts for (default 20)")
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
    # A SIGTERM to the bench unwinds like Ctrl-C, so that gunicorn is stopped and the temporary folder removed.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    with tempfile.TemporaryDirectory(prefix="tramita-bench-api-") as folder:
        service = in_process(f"sqlite:///{folder}/service.sqlite", args.clients, args.seconds)

        url = f"sqlite:///{folder}/api.sqlite"
        env = {**os.environ, "TRAMITA_DATABASE_URL": url}
        tramita(env, "migrate")
        token, codes = prepare(url, args.clients)
        port = free_port()
        with server(env, port, args.workers, Path(folder) / "gunicorn.log") as gunicorn:
            server_cpu, client_cpu = process_tree_cpu(gunicorn.pid), time.process_time()
            api = over_http(port, token, codes, args.seconds)
            server_cpu_after, client_cpu = process_tree_cpu(gunicorn.pid), time.process_time() - client_cpu

    cores = os.cpu_count() or 1
    print(f"store: sqlite (temporary files), gunicorn workers: {args.workers} ({os.environ.get('GUNICORN_CMD_ARGS') or 'tramita serve defaults'}), clients: {args.clients}, "
          f"seconds: {args.seconds:g}, cores: {cores}")
    print(f"in-process: {service.acts} acts in {service.seconds:.2f} s, one thread over {args.clients} cases "
          f"(per act {milliseconds(service)})")
    print(f"in-process acts/s: {service.rate:.1f}")
    errors = ", ".join(f"{status}: {count}" for status, count in sorted(api.errors.items())) or "none"
    print(f"HTTP: {api.acts} acts (2xx) in {api.seconds:.2f} s by {args.clients} clients; errors: {errors}")
    print(f"HTTP acts/s: {api.rate:.1f}")
    print(f"HTTP latency: {milliseconds(api)}")
    if server_cpu is not None and server_cpu_after is not None:
        used = server_cpu_after - server_cpu
        print(f"CPU during the HTTP part: server {used:.1f} s ({used / api.seconds:.2f} of {cores} cores), "
              f"clients {client_cpu:.1f} s ({client_cpu / api.seconds:.2f} cores)")
    print("ratio goal: >= 0.4")
    print(f"ratio: {api.rate / service.rate:.4f}")


if __name__ == "__main__":
    main()
