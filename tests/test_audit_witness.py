"""Witnesses receive every checkpoint outside the database: a folder gets one file per checkpoint, never
overwritten; a URL gets each note POSTed, no redirect followed; what could not be delivered is handed over at the
next signing."""

from __future__ import annotations

import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from audit import witness
from audit.log import AuditLog
from audit.notes import Signer
from audit.service import Audit
from audit.witness import DirectoryWitness, UrlWitness, WitnessError, witnesses_from
from domain.acts import Actor
from domain.demo import creation_1992
from projections.projector import Projector
from infrastructure.store import open_store
from tests.conftest import make_app

ADMIN = Actor("admin", "token-administrator")


class Receiver:
    """A local HTTP server answering each POST with the next status of `statuses` (then 200), keeping bodies."""

    def __init__(self, statuses: list[int]) -> None:
        self.statuses, self.bodies, self.paths = list(statuses), [], []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                receiver.paths.append(self.path)
                receiver.bodies.append(self.rfile.read(int(self.headers["Content-Length"])).decode())
                status = receiver.statuses.pop(0) if receiver.statuses else 200
                self.send_response(status)
                if 300 <= status < 400:
                    self.send_header("Location", f"http://127.0.0.1:{self.server.server_port}/internal")
                self.send_header("Content-Length", "0")
                self.end_headers()

            def do_GET(self) -> None:  # noqa: N802
                receiver.paths.append(f"GET {self.path}")
                self.send_response(200)
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_port}/checkpoints"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def audit(tmp_path):  # noqa: ANN201
    url = f"sqlite:///{tmp_path / 'tramita.sqlite'}"
    signer = Signer.generate("tramita.test/acre")
    app = make_app(url, signer=signer)
    creation_1992(app, lambda line: None)
    store = open_store(url)
    Projector(app, store).migrate()
    yield Audit(app, AuditLog(app, store), signer, signer.verifier, [])
    store.close()


def test_a_witness_folder_gets_one_file_per_checkpoint_and_none_is_overwritten(audit, tmp_path):
    folder = DirectoryWitness(tmp_path / "witness")
    audit.witnesses.append(folder)
    first = audit.sign_checkpoint().checkpoint
    audit.app.issue_token(ADMIN, name="clerk", role="tre")
    second = audit.sign_checkpoint().checkpoint
    files = {f.name: f.read_text(encoding="utf-8") for f in folder.path.iterdir()}
    assert files == {f"{first.size}.checkpoint": first.note, f"{second.size}.checkpoint": second.note}
    with pytest.raises(WitnessError, match="already holds another checkpoint"):
        folder.deliver(first.size, second.note)
    assert (folder.path / f"{first.size}.checkpoint").read_text(encoding="utf-8") == first.note


def test_a_witness_url_receives_each_checkpoint_and_a_redirect_is_a_failed_delivery_tried_again_later(audit):
    receiver = Receiver([302])
    try:
        audit.witnesses.append(UrlWitness(receiver.url))
        lines: list[tuple[str, dict]] = []
        first = audit.sign_checkpoint(lambda event, **fields: lines.append((event, fields))).checkpoint
        assert [event for event, _ in lines] == ["witness-failed"] and "HTTP 302" in lines[0][1]["error"]
        assert not any(path.startswith("GET") for path in receiver.paths)  # the redirect was not followed
        assert audit.log.unwitnessed(f"url:{receiver.url}") == [first]
        audit.app.issue_token(ADMIN, name="clerk", role="tre")
        second = audit.sign_checkpoint().checkpoint
        assert receiver.bodies[1:] == [first.note, second.note]  # the missed one first, then the new one
        assert audit.log.unwitnessed(f"url:{receiver.url}") == []
    finally:
        receiver.close()


def test_a_witness_url_that_dribbles_its_answer_is_a_failed_delivery_at_the_timeout(monkeypatch):
    """urllib's timeout is for each read of the socket: a witness sending its answer a byte at a time held the
    delivery (and the scheduler's start, which hands checkpoints over before its first scan) as long as it liked."""
    monkeypatch.setattr(witness, "TIMEOUT", 1.0)
    listener = socket.create_server(("127.0.0.1", 0))
    done = threading.Event()

    def dribble() -> None:  # a valid 200 answer, one byte at a time, each long enough after the other
        connection, _ = listener.accept()
        with connection:
            connection.recv(65536)
            for byte in b"HTTP/1.1 200 OK\r\nX-Slow: " + b"a" * 40 + b"\r\nContent-Length: 0\r\n\r\n":
                if done.wait(0.5):
                    return
                try:
                    connection.send(bytes([byte]))
                except OSError:
                    return

    threading.Thread(target=dribble, daemon=True).start()
    try:
        with pytest.raises(WitnessError, match="no answer within 1 s"):
            UrlWitness(f"http://127.0.0.1:{listener.getsockname()[1]}/checkpoints").deliver(1, "note\n")
    finally:
        done.set()
        listener.close()


def test_witnesses_are_configured_by_folder_and_url_and_a_bad_url_is_refused_by_name(tmp_path):
    found = witnesses_from({"TRAMITA_WITNESS_DIR": f"{tmp_path / 'a'}, {tmp_path / 'b'}",
                            "TRAMITA_WITNESS_URL": "https://witness.example/add"})
    assert [w.name for w in found] == [f"dir:{tmp_path / 'a'}", f"dir:{tmp_path / 'b'}",
                                       "url:https://witness.example/add"]
    with pytest.raises(ValueError, match="TRAMITA_WITNESS_URL"):
        witnesses_from({"TRAMITA_WITNESS_URL": "ftp://witness.example"})


def test_a_temporary_file_left_by_a_writer_killed_mid_write_is_swept_at_the_next_signing_and_no_other(tmp_path):
    import os
    import subprocess
    import sys

    from audit.witness import _host

    folder = DirectoryWitness(tmp_path / "witness")
    folder.path.mkdir()
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True,
                          check=True)
    dead = folder.path / f".7.{_host()}.{int(gone.stdout)}.abc123.tmp"  # its writer has exited
    alive = folder.path / f".8.{_host()}.{os.getpid()}.def456.tmp"  # this very process: still writing
    elsewhere = folder.path / f".9.other-host.{int(gone.stdout)}.ghi789.tmp"  # another host's pid: not ours to judge
    for file in (dead, alive, elsewhere):
        file.write_text("half a note", encoding="utf-8")
    (folder.path / "6.checkpoint").write_text("a note\n", encoding="utf-8")

    assert folder.held() == [(f"in the witness folder {folder.path} (6.checkpoint)", "a note\n")]
    assert not dead.exists() and alive.exists() and elsewhere.exists()
