"""C2SP tlog-cosignature and tlog-witness (`audit.cosign`) against published vectors (tests/fixtures/cosignature/,
sources in its README): the C2SP texts' example signed message and add-checkpoint request are reproduced byte for
byte, and a cosignature a public witness published verifies with our message and key ID (so our bytes are its)."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from audit.cosign import (
    AddCheckpoint,
    CosignError,
    Cosigner,
    CosignVerifier,
    cosignature_message,
    cosignatures,
    quorum_problem,
    with_cosignatures,
)
from audit.notes import Checkpoint, SignedNote

FIXTURES = Path(__file__).parent / "fixtures" / "cosignature"


def fixture(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


def test_the_signed_message_is_the_c2sp_example_byte_for_byte():
    note = SignedNote.parse(fixture("tlog-cosignature-example.txt"))
    name, raw = note.signatures[1]
    timestamp = int.from_bytes(raw[4:12], "big")
    assert (name, timestamp, len(raw)) == ("witness.example.com/w1", 1679315147, 76)
    assert cosignature_message(note.text, timestamp) == fixture("tlog-cosignature-message.txt").encode("utf-8")


def test_a_public_witness_cosignature_verifies_with_our_message_and_key_id():
    vkey = fixture("remora.vkey").strip()
    verifier = CosignVerifier.parse(vkey)
    assert str(verifier) == vkey  # the key ID computed with type 0x04 is the published one
    assert cosignatures(fixture("remora-cosigned-checkpoint.txt"), [verifier]) == {vkey: 1779573024}


def test_a_public_witness_cosignature_fails_on_a_changed_checkpoint():
    verifier = CosignVerifier.parse(fixture("remora.vkey"))
    changed = fixture("remora-cosigned-checkpoint.txt").replace("\n1432088532\n", "\n1432088533\n")
    assert cosignatures(changed, [verifier]) == {}
    assert "0 valid cosignatures of the 1 required" in quorum_problem(changed, [verifier], 1)


def test_the_c2sp_add_checkpoint_example_parses_and_encodes_back_byte_for_byte():
    body = fixture("tlog-witness-request.txt").encode("utf-8")
    request = AddCheckpoint.parse(body)
    assert request.old_size == 20852014
    assert len(request.proof) == 4 and all(len(h) == 32 for h in request.proof)
    assert Checkpoint.parse(SignedNote.parse(request.note).text) == Checkpoint(
        "example.com/behind-the-sofa", 20852163, base64.b64decode("CsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I="))
    assert request.encode() == body


@pytest.mark.parametrize("body", [
    b"old 01\n\nx\n1\nAA==\n\n",  # a leading zero
    b"old 1\nnot base64!\n\ncheckpoint",
    b"old 1\nAAAA\n\ncheckpoint",  # a hash of 3 bytes
    b"old 1\n" + b"".join([base64.b64encode(bytes(32)) + b"\n"] * 64) + b"\ncheckpoint",
    b"new 1\n\ncheckpoint",
    b"old 1\ncheckpoint",
])
def test_a_malformed_add_checkpoint_request_is_refused(body):
    with pytest.raises(CosignError):
        AddCheckpoint.parse(body)


def test_our_cosignature_verifies_and_its_key_round_trips_through_its_file_format():
    cosigner = Cosigner("tce.ac.gov.br/testemunha", b"\x07" * 32)
    again = Cosigner.parse(str(cosigner))
    assert str(again.verifier) == str(cosigner.verifier) and str(cosigner.verifier).split("+")[2].startswith("B")
    body = "localhost/tramita\n3\n" + base64.b64encode(bytes(32)).decode() + "\n"
    line = cosigner.cosign(body, 1700000000)
    assert line == again.cosign(body, 1700000000)  # Ed25519 is deterministic: same key, time, body, same bytes
    note = with_cosignatures(body + "\n— localhost/tramita AAAAAAAAAAAA\n", [line, line])
    assert note.count(line) == 1
    assert cosignatures(note, [CosignVerifier.parse(str(cosigner.verifier))]) == {str(cosigner.verifier): 1700000000}


def test_a_forged_cosignature_of_a_known_witness_does_not_count():
    cosigner = Cosigner.generate("mpac.mp.br/testemunha")
    body = "localhost/tramita\n3\n" + base64.b64encode(bytes(32)).decode() + "\n"
    line = cosigner.cosign(body, 1700000000)
    raw = bytearray(base64.b64decode(line.split(" ")[2]))
    raw[-1] ^= 1
    forged = f"— {cosigner.name} {base64.b64encode(bytes(raw)).decode()}\n"
    assert cosignatures(body + "\n" + forged, [cosigner.verifier]) == {}
    assert quorum_problem(body + "\n" + forged, [cosigner.verifier], 1) is not None
