"""The witness (`audit.witness_service`): it cosigns a checkpoint only when it extends the one it last cosigned
for the log, answers tlog-witness's statuses otherwise, keeps the log-signed evidence of what it refused, and
keeps refusing after a restart on the same file."""

from __future__ import annotations

import base64
import hashlib
import io
import threading

import pytest

from audit import merkle
from audit.cosign import AddCheckpoint, Cosigner, cosignatures
from audit.notes import Checkpoint, Signer
from audit.witness_service import Witness, WitnessStore, sqlite_path, wsgi_app

LOG = Signer("localhost/tramita", b"\x01" * 32)
OTHER_LOG = Signer("outro.example/registro", b"\x02" * 32)
COSIGNER = Cosigner("tce.ac.gov.br/testemunha", b"\x03" * 32)


def leaves(count: int, fork_at: int | None = None) -> list[bytes]:
    """Leaf hashes of a log of `count` entries; from `fork_at` on, another history."""
    return [merkle.leaf_hash(bytes([i, int(fork_at is not None and i >= fork_at)])) for i in range(count)]


def note_of(hashes: list[bytes], signer: Signer = LOG) -> str:
    return signer.sign_note(Checkpoint(signer.name, len(hashes), merkle.root_of(hashes)).text())


def request(old: int, hashes: list[bytes], signer: Signer = LOG) -> bytes:
    proof = merkle.consistency_proof(old, len(hashes), merkle.subtree_of(hashes)) if 0 < old < len(hashes) else []
    return AddCheckpoint(old, tuple(proof), note_of(hashes, signer)).encode()


@pytest.fixture
def witness(tmp_path):
    return Witness(WitnessStore(tmp_path / "witness.sqlite"), COSIGNER, [LOG.verifier], clock=lambda: 1_800_000_000)


def test_a_first_checkpoint_and_each_consistent_growth_are_cosigned_and_stored(witness):
    first = witness.add_checkpoint(request(0, leaves(5)))
    assert first.status == 200
    assert cosignatures(note_of(leaves(5)) + first.body, [COSIGNER.verifier]) == {str(COSIGNER.verifier): 1_800_000_000}
    grown = witness.add_checkpoint(request(5, leaves(13)))
    assert grown.status == 200 and witness.store.latest(LOG.name)[:2] == (13, merkle.root_of(leaves(13)))
    again = witness.add_checkpoint(request(13, leaves(13)))  # the same checkpoint: cosigned again
    assert again.status == 200


def test_a_stale_old_size_is_answered_409_with_the_latest_size(witness):
    witness.add_checkpoint(request(0, leaves(8)))
    answer = witness.add_checkpoint(request(3, leaves(9)))
    assert (answer.status, answer.body, answer.content_type) == (409, "8\n", "text/x.tlog.size")


def test_a_rolled_back_log_is_refused_with_409_and_its_signed_checkpoint_is_kept(witness):
    witness.add_checkpoint(request(0, leaves(10)))
    rolled_back = request(0, leaves(7, fork_at=6))  # a copy of size 6, then one act more: smaller than cosigned
    answer = witness.add_checkpoint(rolled_back)
    assert (answer.status, answer.body) == (409, "10\n")
    [refusal] = witness.store.refused()
    assert (refusal.status, refusal.request) == (409, rolled_back.decode())
    assert "voltou atrás" in refusal.reason


def test_a_fork_of_the_same_size_or_larger_is_refused_with_422_and_kept(witness):
    witness.add_checkpoint(request(0, leaves(10)))
    same_size = witness.add_checkpoint(request(10, leaves(10, fork_at=4)))
    forked_proof = AddCheckpoint(10, tuple(merkle.consistency_proof(10, 14, merkle.subtree_of(leaves(14, 4)))),
                                 note_of(leaves(14, fork_at=4))).encode()
    larger = witness.add_checkpoint(forked_proof)
    assert (same_size.status, larger.status) == (422, 422)
    assert [r.status for r in witness.store.refused()] == [422, 422]
    assert witness.store.latest(LOG.name)[:2] == (10, merkle.root_of(leaves(10)))


def test_a_restarted_witness_on_the_same_file_still_refuses_the_fork(tmp_path, witness):
    witness.add_checkpoint(request(0, leaves(10)))
    restarted = Witness(WitnessStore(tmp_path / "witness.sqlite"), COSIGNER, [LOG.verifier])
    assert restarted.add_checkpoint(request(0, leaves(9, fork_at=5))).status == 409
    assert restarted.add_checkpoint(request(10, leaves(10, fork_at=5))).status == 422


@pytest.mark.parametrize(("body", "status"), [
    (b"old 0\n\nnot a note", 400),
    (request(0, leaves(3), OTHER_LOG), 404),
    (request(0, leaves(3)).replace(b"\n3\n", b"\n4\n"), 403),  # the log's signature no longer verifies
    (request(5, leaves(3)), 400),  # an old size above the checkpoint's
    (AddCheckpoint(0, (bytes(32),), note_of(leaves(3))).encode(), 422),  # a proof from the empty tree
    (AddCheckpoint(0, (), LOG.sign_note(Checkpoint(LOG.name, 0, bytes(32)).text())).encode(), 422),
])
def test_requests_that_break_the_protocol_get_its_status_and_nothing_is_cosigned(witness, body, status):
    assert witness.add_checkpoint(body).status == status
    assert witness.store.latest(LOG.name) is None


def test_the_http_face_answers_add_checkpoint_and_the_monitors_checkpoint(witness):
    app = wsgi_app(witness)
    body = request(0, leaves(4))
    seen = {}

    def start(status, headers):
        seen["status"], seen["headers"] = status, dict(headers)

    answer = b"".join(app({"REQUEST_METHOD": "POST", "PATH_INFO": "/add-checkpoint", "CONTENT_LENGTH": str(len(body)),
                           "wsgi.input": io.BytesIO(body)}, start))
    assert seen["status"] == "200 OK" and answer.decode().startswith("— tce.ac.gov.br/testemunha ")
    origin_hash = hashlib.sha256(LOG.name.encode()).hexdigest()
    served = b"".join(app({"REQUEST_METHOD": "GET", "PATH_INFO": f"/{origin_hash}/checkpoint"}, start)).decode()
    assert served == note_of(leaves(4)) + answer.decode()


def test_the_witness_keeps_its_state_only_in_a_sqlite_file(tmp_path):
    assert sqlite_path(f"sqlite:///{tmp_path}/w.sqlite") == tmp_path / "w.sqlite"
    with pytest.raises(ValueError, match="sqlite:///"):
        sqlite_path("postgresql://localhost/witness")


def test_a_cosignature_line_is_the_witness_key_id_the_time_and_a_signature(witness):
    line = witness.add_checkpoint(request(0, leaves(2))).body
    raw = base64.b64decode(line.split(" ")[2])
    assert raw[:4] == COSIGNER.verifier.key_id and int.from_bytes(raw[4:12], "big") == 1_800_000_000


def test_requests_racing_from_the_same_old_size_are_serialised_and_only_one_is_cosigned(tmp_path, witness):
    witness.add_checkpoint(request(0, leaves(5)))
    bodies = [request(5, leaves(size)) for size in range(6, 14)]
    start = threading.Barrier(len(bodies))
    answers: dict[int, int] = {}

    def send(size: int, body: bytes) -> None:
        own = Witness(WitnessStore(tmp_path / "witness.sqlite"), COSIGNER, [LOG.verifier])  # as another worker
        start.wait()
        answers[size] = own.add_checkpoint(body).status

    threads = [threading.Thread(target=send, args=(6 + n, body)) for n, body in enumerate(bodies)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    [won] = [size for size, status in answers.items() if status == 200]
    assert sorted(status for status in answers.values() if status != 200) == [409] * (len(bodies) - 1)
    assert witness.store.latest(LOG.name)[:2] == (won, merkle.root_of(leaves(won)))
