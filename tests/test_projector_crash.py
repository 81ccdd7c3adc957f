"""A projector killed with SIGKILL in the middle of a batch (a real `tramita project` process, killed while its
write transaction is open) loses nothing and doubles nothing: restarted, its tables equal a rebuild."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from eventsourcing.persistence import StoredEvent

from domain.case import Case
from domain.demo import seed_demo
from projections.projector import Projector
from infrastructure.store import open_store
from tests.stores import make_app
from tests.test_projections import snapshot

REPO = Path(__file__).resolve().parent.parent
COPIES = 150  # of the demo cases' events: about 20,000 notifications, so the projector is mid-log when killed


def demo_case_count(app) -> int:  # noqa: ANN001
    """How many cases the demo seeds (counted in the store, so that a demo case added later needs no edit here)."""
    return sum(1 for aggregate_id in app.aggregate_ids() if app.case_exists(aggregate_id))


def copy_cases(app, copies: int) -> int:
    """Append `copies` copies of every case's events under new ids (their payloads, case numbers included, kept)."""
    case_events = []
    for aggregate_id in list(app.aggregate_ids()):
        stored = list(app.recorder.select_events(aggregate_id))
        if stored[0].topic.startswith(f"{Case.__module__}:{Case.__qualname__}."):
            case_events.append(stored)
    for _ in range(copies):
        batch = []
        for stored in case_events:
            new_id = uuid.uuid4()
            batch += [StoredEvent(new_id, s.originator_version, s.topic, s.state) for s in stored]
        app.recorder.insert_events(batch)
    return app.recorder.max_notification_id()


def projector_process(url: str, *args: str) -> subprocess.Popen:
    env = {**os.environ, "TRAMITA_DATABASE_URL": url, "PYTHONPATH": str(REPO)}
    return subprocess.Popen([sys.executable, "-m", "tramita", "project", *args], cwd=REPO, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def in_write_transaction(url: str, store) -> bool:
    """Is the projector's write transaction open right now?"""
    if url.startswith("sqlite:///"):
        probe = sqlite3.connect(url[len("sqlite:///"):], timeout=0, isolation_level=None)
        try:
            probe.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as error:  # "database is locked": the projector holds the write lock
            return "locked" in str(error)
        else:
            probe.execute("ROLLBACK")
            return False
        finally:
            probe.close()
    return bool(store.query("SELECT 1 FROM pg_stat_activity WHERE application_name = 'tramita-projections' "
                            "AND pid <> pg_backend_pid() AND xact_start IS NOT NULL "
                            "AND backend_xid IS NOT NULL"))


@pytest.mark.slow
def test_a_projector_killed_mid_batch_resumes_and_its_tables_equal_a_rebuild(database_url):
    app = make_app(database_url)
    seed_demo(app, lambda _: None)
    demo_cases = demo_case_count(app)
    last = copy_cases(app, COPIES)
    store = open_store(database_url)
    projector = Projector(app, store)
    projector.migrate()

    process = projector_process(database_url, "--batch-size", "100", "--poll", "0.05")
    killed_at = None
    deadline = time.monotonic() + 120
    try:
        while time.monotonic() < deadline and process.poll() is None:
            position = min(projector.positions().values())
            if position >= last:
                break
            if position > 0 and in_write_transaction(database_url, store):
                process.send_signal(signal.SIGKILL)
                killed_at = position
                break
    finally:
        if process.poll() is None and killed_at is None:
            process.kill()
        process.wait(timeout=30)
    assert killed_at is not None, f"the projector was not caught inside a batch: {process.stdout.read()}"
    assert process.returncode == -signal.SIGKILL
    assert 0 < min(projector.positions().values()) < last

    restarted = projector_process(database_url, "--once")
    output, _ = restarted.communicate(timeout=300)
    assert restarted.returncode == 0, output
    assert set(projector.positions().values()) == {last}
    followed = snapshot(store)
    assert len(followed["cases"]) == demo_cases * (COPIES + 1)
    projector.rebuild()
    assert snapshot(store) == followed
    store.close()


def wait_for(condition, seconds: float = 60) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return False


@pytest.mark.slow
def test_a_running_projector_follows_new_acts_and_stops_cleanly_on_sigterm(database_url):
    app = make_app(database_url)
    store = open_store(database_url)
    projector = Projector(app, store)
    projector.migrate()
    process = projector_process(database_url, "--poll", "0.2")
    try:
        assert wait_for(lambda: min(projector.positions().values()) == app.recorder.max_notification_id())
        seed_demo(app, lambda _: None)
        assert wait_for(lambda: min(projector.positions().values()) == app.recorder.max_notification_id())
        assert len(store.query("SELECT case_id FROM cases")) == demo_case_count(app)
        process.send_signal(signal.SIGTERM)
        output, _ = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 0, output
    assert "projetor parado em" in output
    store.close()
