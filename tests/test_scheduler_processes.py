"""Real `tramita scheduler` processes on one database (SQLite and PostgreSQL): one leads, the other says it waits
and takes over when the leader is killed with SIGKILL, and no alert is ever recorded twice.

The cases' requisitions were received in October 2025 and never answered, so their Art. 10 deadlines are missed
on the real date and the start-up scan raises them. The cron is set to once a year, so that only start-up scans
run while the test watches.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from datetime import date
from pathlib import Path

import pytest

from tramita.cli import main
from domain.demo import MESA
from projections import queries
from projections.projector import Projector
from infrastructure.store import open_store
from tests.stores import make_app
from tests.test_article_rules import FEIJO, TARAUACA, open_by_voters, signatures
from tests.test_projector_crash import wait_for

REPO = Path(__file__).resolve().parent.parent
ALERT_TOPIC = "domain.alerts:Alert.Raised"


def unanswered_requisitions(app, code: str, bodies: tuple[str, ...]) -> str:
    """A voters' case whose requisitions to `bodies` were received on 2025-10-17 and never answered."""
    case = open_by_voters(app, date(2025, 10, 14), signatures(30, code), origins=(code,)).number
    requisitions = [app.issue_requisition(case, MESA, date(2025, 10, 15), body=body, items=["art-4"]).result
                    for body in bodies]
    for requisition in requisitions:
        app.receive_requisition(case, MESA, date(2025, 10, 17), requisition=requisition)
    return case


class Scheduler:
    """A `tramita scheduler` process and the JSON lines it has written so far."""

    def __init__(self, url: str, *args: str) -> None:
        env = {**os.environ, "TRAMITA_DATABASE_URL": url, "PYTHONPATH": str(REPO)}
        env.pop("TRAMITA_ALERT_WEBHOOK_URL", None)
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tramita", "scheduler", "--poll-leadership", "0.1", "--cron", "0 0 1 1 *", *args],
            cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.lines: list[dict] = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        for line in self.process.stdout:
            self.lines.append(json.loads(line))

    def said(self, event: str) -> list[dict]:
        return [line for line in self.lines if line["event"] == event]

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(timeout=30)


@pytest.mark.slow
def test_two_schedulers_have_one_leader_the_other_takes_over_when_it_is_killed_and_no_alert_is_raised_twice(
        database_url):
    app = make_app(database_url)
    unanswered_requisitions(app, FEIJO, ("ibge", "tre", "sefaz"))
    store = open_store(database_url)
    projector = Projector(app, store)
    projector.migrate()
    schedulers = [Scheduler(database_url), Scheduler(database_url)]
    try:
        assert wait_for(lambda: any(s.said("scan") for s in schedulers)
                        and any(s.said("waiting") for s in schedulers)), [s.lines for s in schedulers]
        leader = next(s for s in schedulers if s.said("scan"))
        follower = next(s for s in schedulers if s is not leader)
        assert leader.said("scan")[0]["raised"] == 3
        [waiting] = follower.said("waiting")
        assert waiting["holder"] == leader.process.pid and "lock" in waiting["lock"]
        assert follower.said("leader") == [] and follower.said("alert") == []

        unanswered_requisitions(app, TARAUACA, ("ibge",))  # missed too: the next leader's start-up scan finds it
        leader.process.send_signal(signal.SIGKILL)
        assert wait_for(lambda: follower.said("scan")), follower.lines
        assert leader.process.wait(timeout=30) == -signal.SIGKILL
        assert follower.said("scan")[0]["raised"] == 1
        assert len(follower.said("waiting")) == 1  # said once, however long it waited

        follower.process.send_signal(signal.SIGTERM)
        assert follower.process.wait(timeout=60) == 0, follower.process.stderr.read()
        follower.reader.join(timeout=10)
        assert follower.said("stopped")[-1]["reason"] == "asked to stop"
    finally:
        for scheduler in schedulers:
            scheduler.stop()

    logged = [line["alert_id"] for s in schedulers for line in s.said("alert")]
    assert len(logged) == len(set(logged)) == 4
    recorded = [n.originator_id for n in app.recorder.select_notifications(1, 10_000) if n.topic == ALERT_TOPIC]
    assert len(recorded) == len(set(recorded)) == 4
    projector.catch_up()
    rows = queries.alerts(store)
    assert sorted(row["alert_id"] for row in rows) == sorted(logged) == sorted(str(i) for i in recorded)
    store.close()


def test_scheduler_once_scans_and_writes_one_json_line_per_alert(tmp_path, monkeypatch, capsys):
    url = f"sqlite:///{tmp_path / 'tramita.sqlite'}"
    app = make_app(url)
    case = unanswered_requisitions(app, FEIJO, ("ibge",))
    Projector(app, open_store(url)).migrate()
    monkeypatch.setenv("TRAMITA_DATABASE_URL", url)
    monkeypatch.delenv("TRAMITA_ALERT_WEBHOOK_URL", raising=False)
    assert main(["scheduler", "--once", "--thresholds", "5,1"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    # no TRAMITA_SIGNING_KEY here: the scheduler says once that it signs no checkpoint
    assert [line["event"] for line in lines] == ["leader", "checkpoints-off", "alert", "scan"]
    alert = lines[2]
    assert (alert["case_number"], alert["kind"], alert["article"], alert["who"], alert["due_on"]) == (
        case, "missed", "art-10", "ibge", "2025-11-18")
    assert alert["days_overdue"] == (date.fromisoformat(alert["raised_on"]) - date(2025, 11, 18)).days
    assert main(["scheduler", "--once"]) == 0
    assert [json.loads(line)["raised"] for line in capsys.readouterr().out.splitlines()
            if '"scan"' in line] == [0]


@pytest.mark.parametrize(("variable", "value"), [
    ("TRAMITA_ALERT_THRESHOLDS", "5,one"), ("TRAMITA_ALERT_THRESHOLDS", "5,5"), ("TRAMITA_SCHEDULER_CRON", "every"),
    ("TRAMITA_ALERT_WEBHOOK_URL", "ftp://example.org/x"), ("TRAMITA_ALERT_WEBHOOK_TRIES", "0"),
    ("TRAMITA_ALERT_WEBHOOK_TRIES", "1000000"), ("TRAMITA_ALERT_WEBHOOK_BACKOFF_CAP", "nan"),
    ("TRAMITA_ALERT_WEBHOOK_BACKOFF_CAP", "86400"), ("TRAMITA_ALERT_WEBHOOK_SECRET", "hunter2"),
    ("TRAMITA_ALERT_WEBHOOK_SECRET", "whsec_c2hvcnQ="),
])
def test_a_malformed_scheduler_setting_is_refused_naming_its_variable(variable, value, monkeypatch, capsys, tmp_path):
    monkeypatch.setenv("TRAMITA_DATABASE_URL", f"sqlite:///{tmp_path / 'tramita.sqlite'}")
    monkeypatch.setenv(variable, value)
    assert main(["scheduler", "--once"]) == 2
    assert capsys.readouterr().err.startswith(f"tramita: {variable}: ")


def test_a_webhook_url_without_a_secret_is_refused_at_start_naming_the_secret(monkeypatch, capsys, tmp_path):
    monkeypatch.setenv("TRAMITA_DATABASE_URL", f"sqlite:///{tmp_path / 'tramita.sqlite'}")
    monkeypatch.setenv("TRAMITA_ALERT_WEBHOOK_URL", "http://127.0.0.1:9/alerts")
    monkeypatch.delenv("TRAMITA_ALERT_WEBHOOK_SECRET", raising=False)
    assert main(["scheduler", "--once"]) == 2
    assert capsys.readouterr().err.startswith("tramita: TRAMITA_ALERT_WEBHOOK_SECRET: required with "
                                              "TRAMITA_ALERT_WEBHOOK_URL")
