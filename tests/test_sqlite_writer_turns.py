"""SQLite saves take turns: one writer at a time on a database file, within a process by a lock and across
processes by an exclusive `flock` on `<database>.writer`, so that a waiting writer wakes when the previous one
commits instead of sleeping through SQLite's back-off (infrastructure/sqlite.py)."""

from __future__ import annotations

import fcntl
import multiprocessing
import os
import stat
import threading
import time
from datetime import date

import pytest

from domain.acts import Actor
from domain.demo import GOVERNOR
from tests.stores import make_app
from tramita.bootstrap import build_application

OPENED = date(2026, 3, 2)
#: Generous: the suite may run on a loaded machine; only a wait that never ends fails.
PATIENCE = 120.0


def creation_on(app, code: str) -> str:
    return app.open_case(GOVERNOR, OPENED, kind="creation", municipalities=[code],
                         areas=[{"municipality": code, "area_km2": "10"}],
                         documents={f"art-4-{i}": "doc" for i in ("I", "II", "III", "IV", "V", "VI")}).number


def test_the_turn_file_sits_beside_the_database_readable_by_its_owner_only(tmp_path):
    app = make_app(f"sqlite:///{tmp_path / 'tramita.sqlite'}")
    turn_file = tmp_path / "tramita.sqlite.writer"
    assert turn_file.exists() and turn_file.stat().st_size == 0  # the registry's seeding wrote, so took a turn
    assert stat.S_IMODE(turn_file.stat().st_mode) & 0o077 == 0
    creation_on(app, "1200708")
    assert turn_file.stat().st_size == 0  # it holds nothing


def test_a_save_waits_while_another_process_holds_the_turn_and_is_recorded_once_it_is_let_go(tmp_path):
    app = make_app(f"sqlite:///{tmp_path / 'tramita.sqlite'}")
    before = app.recorder.max_notification_id()
    holder = os.open(tmp_path / "tramita.sqlite.writer", os.O_RDONLY)  # its own open file: as another process
    fcntl.flock(holder, fcntl.LOCK_EX)
    opened: list[str] = []
    writer = threading.Thread(target=lambda: opened.append(creation_on(app, "1200708")))
    try:
        writer.start()
        writer.join(0.5)
        assert writer.is_alive() and app.recorder.max_notification_id() == before  # waiting for its turn
    finally:
        fcntl.flock(holder, fcntl.LOCK_UN)
        os.close(holder)
    writer.join(PATIENCE)
    assert not writer.is_alive() and len(opened) == 1
    assert app.recorder.max_notification_id() > before


def test_a_process_that_cannot_open_the_turn_file_still_saves_kept_out_by_sqlite_s_own_lock(tmp_path):
    (tmp_path / "tramita.sqlite.writer").mkdir()  # stands where the file would be: it cannot be opened
    app = make_app(f"sqlite:///{tmp_path / 'tramita.sqlite'}")
    assert app.get_case(creation_on(app, "1200708")).version == 1


def test_an_in_memory_database_takes_no_turns(memory_app, tmp_path):
    assert memory_app.get_case(creation_on(memory_app, "1200708")).version == 1
    assert not list(tmp_path.iterdir())


def _open_cases(url: str, codes: list[str], ready, go, numbers) -> None:  # noqa: ANN001 - multiprocessing values
    app = build_application(url)
    ready.release()
    go.wait(PATIENCE)
    for code in codes:
        numbers.put(creation_on(app, code))
    app.close()


@pytest.mark.slow
def test_two_processes_saving_at_once_on_one_file_record_every_act_once(tmp_path):
    """Each process opens cases on municipalities of its own; every opening is recorded, each number once."""
    url = f"sqlite:///{tmp_path / 'tramita.sqlite'}"
    app = make_app(url, seed=False)
    seeded = app.seed_registry(Actor("ibge-seed", "ibge"), date(1991, 12, 18))[:8]
    context = multiprocessing.get_context("spawn")
    ready, go, numbers = context.Semaphore(0), context.Event(), context.Queue()
    shares = [seeded[0::2], seeded[1::2]]
    workers = [context.Process(target=_open_cases, args=(url, share, ready, go, numbers)) for share in shares]
    for worker in workers:
        worker.start()
    for _ in workers:
        assert ready.acquire(timeout=PATIENCE)
    go.set()
    opened = [numbers.get(timeout=PATIENCE) for _ in seeded]
    deadline = time.monotonic() + PATIENCE
    for worker in workers:
        worker.join(max(0.0, deadline - time.monotonic()))
        assert worker.exitcode == 0
    assert len(set(opened)) == len(seeded)
    for number in opened:
        assert app.get_case(number).version == 1
