"""C2SP signed notes and checkpoints (`audit.notes`) against published vectors: what Go's note package signs is
reproduced byte for byte, published notes and checkpoints open, and every mangling the Go tests try is refused.

Sources, copied into the tests below:
- golang.org/x/mod, `sumdb/note/note_test.go` (and the package's documented example): the PeterNeumann and EnochRoot
  keys, the signed note, the mangled keys and malformed notes;
- transparency-dev/formats, `log/note_test.go`: four Go-generated key pairs and a checkpoint signed by
  sum.golang.org; `log/checkpoint_test.go`: checkpoint texts, well formed and not;
- C2SP, `tlog-checkpoint.md`: the example checkpoint text.
"""

from __future__ import annotations

import base64

import pytest

from audit.notes import (
    EVENT_SIGNATURE_CONTEXT,
    Checkpoint,
    NoteError,
    SignedNote,
    Signer,
    Verifier,
    event_signature_in_form,
    key_hash,
    open_checkpoint,
    open_note,
    verify_event_signature,
)

# golang.org/x/mod, sumdb/note/note_test.go: TestSign, TestOpen, TestNewVerifier.
PETER_SIGNER_KEY = "PRIVATE+KEY+PeterNeumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz"
PETER_VERIFIER_KEY = "PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW"
ENOCH_VERIFIER_KEY = "EnochRoot+af0cfe78+ATtqJ7zOtqQtYqOo0CpvDXNlMhV3HeJDpjrASKGLWdop"
PETER_TEXT = "If you think cryptography is the answer to your problem,\nthen you don't know what your problem is.\n"
PETER_SIGNATURE = ("— PeterNeumann x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6"
                   "RyyBwJnAM=\n")
ENOCH_SIGNATURE = ("— EnochRoot rwz+eBzmZa0SO3NbfRGzPCpDckykFXSdeX+MNtCOXm2/5n2tiOHp+vAF1aGrQ5ovTG01oOTGwnWLox33WWd1"
                   "RvMc+QQ=\n")
PETER_NOTE = PETER_TEXT + "\n" + PETER_SIGNATURE

# transparency-dev/formats, log/note_test.go: Go-generated (signer key, verifier key) pairs.
FORMATS_KEY_PAIRS = [
    ("PRIVATE+KEY+Log+2271c621+AdEIq9FLRQni54Wg68T96VJO+iayOaulswav2DUMKgvQ",
     "Log+2271c621+AemuH5ooBpEPcr+W8onrjA1NfuzBVHdezakU81Ekarvs"),
    ("PRIVATE+KEY+Known+451c786d+AQPRoE2+Z+Ed1HaHBA9F/FfracvcZ2rDU39kCecMEoci",
     "Known+451c786d+AXAQ0T7lbwuY4ABJ9/MYY9bWV3hmSyOGVt2x42NkmdUH"),
    ("PRIVATE+KEY+KnownAgain+4893b26c+ARhZda/l25zjGZswYLDZsLNRzNpmv5wYTN9IoTr1OJ2+",
     "KnownAgain+4893b26c+AQ+LR7BFF/F/dkpIBjBpSvT0crkteizuUkavAoGeaYMj"),
    ("PRIVATE+KEY+Unknown+fdbb2e08+Aav2knTC6orbhXX8pMWuNiWgO+Wwk2DB+h1eU2Q1W1nU",
     "Unknown+fdbb2e08+AWgRIYZ+8x1Vl+1Q+sR8zciNHiYI1SdlBjNw+RV0rots"),
]

# transparency-dev/formats, log/note_test.go: TestSumDBNoteParsing.
SUMDB_VERIFIER_KEY = "sum.golang.org+033de0ae+Ac4zctda0e5eza+HJyk9SxEdh+s3Ux18htTTAD8OuAn8"
SUMDB_CHECKPOINT = ("go.sum database tree\n6476701\nmb8QLQIs0Z0yP5Cstq6guj87oXWeC9gEM8oVikmm9Wk=\n\n"
                    "— sum.golang.org Az3grsLX85Gz+s1SiTbgkuqxgItqFq7gsMUEyVnrsa9LM7Us9S+1xbFIGu95949rj4nPRYfvimWEP"
                    "WL+o3GeoWwOoAw=\n")

# C2SP, tlog-checkpoint.md: the example's note text.
C2SP_CHECKPOINT_TEXT = "example.com/behind-the-sofa\n20852163\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n"

ROOT = bytes(range(32))
ROOT_B64 = base64.b64encode(ROOT).decode()


# ----------------------------------------------------------------------------------------------------- keys

def test_the_go_note_packages_signer_key_gives_its_published_verifier_key():
    signer = Signer.parse(PETER_SIGNER_KEY)
    assert str(signer.verifier) == PETER_VERIFIER_KEY
    assert str(signer) == PETER_SIGNER_KEY
    verifier = Verifier.parse(PETER_VERIFIER_KEY)
    assert verifier == signer.verifier
    assert verifier.hash == key_hash("PeterNeumann", verifier.public_key) == 0xc74f20a3


@pytest.mark.parametrize(("signer_key", "verifier_key"), FORMATS_KEY_PAIRS, ids=lambda key: key.split("+")[0])
def test_each_published_go_key_pair_derives_its_verifier_key(signer_key, verifier_key):
    signer = Signer.parse(signer_key)
    assert str(signer.verifier) == verifier_key
    assert str(signer) == signer_key
    assert Verifier.parse(verifier_key) == signer.verifier


def manglings(key: str) -> list[str]:
    """Go's TestNewVerifier and TestNewSigner manglings: every shorter substring, and each byte plus one."""
    substrings = {key[i:j] for i in range(len(key) + 1) for j in range(i + 1, len(key) + 1)} - {key}
    bumped = {key[:i] + chr(ord(key[i]) + 1) + key[i + 1:] for i in range(len(key))}
    return sorted(substrings | bumped)


def _accepted(parse, texts: list[str]) -> list[str]:
    accepted = []
    for text in texts:
        try:
            parse(text)
        except NoteError:
            continue
        accepted.append(text)
    return accepted


def test_every_mangling_of_the_published_verifier_key_is_refused():
    published_bad_keys = [
        # golang.org/x/mod, sumdb/note/note_test.go: a key of the wrong length, and an unknown algorithm, each with
        # its key hash adjusted.
        "PeterNeumann+cc469956+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TWBADKEY==",
        "PeterNeumann+173116ae+ZRpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW",
    ]
    assert _accepted(Verifier.parse, manglings(PETER_VERIFIER_KEY) + published_bad_keys) == []


def test_every_mangling_of_the_published_signer_key_is_refused():
    assert _accepted(Signer.parse, manglings(PETER_SIGNER_KEY)) == []


# ---------------------------------------------------------------------------------------------------- notes

def test_the_go_note_packages_example_note_is_signed_byte_for_byte():
    assert Signer.parse(PETER_SIGNER_KEY).sign_note(PETER_TEXT) == PETER_NOTE


def test_the_go_note_packages_example_note_opens_with_its_verifier_key():
    assert open_note(PETER_NOTE, Verifier.parse(PETER_VERIFIER_KEY)) == PETER_TEXT
    [(name, raw)] = SignedNote.parse(PETER_NOTE).signatures
    assert name == "PeterNeumann" and raw[:4] == bytes.fromhex("c74f20a3") and len(raw) == 68


def test_a_note_signed_by_two_published_keys_opens_with_either_key():
    note = PETER_TEXT + "\n" + PETER_SIGNATURE + ENOCH_SIGNATURE
    assert open_note(note, Verifier.parse(PETER_VERIFIER_KEY)) == PETER_TEXT
    assert open_note(note, Verifier.parse(ENOCH_VERIFIER_KEY)) == PETER_TEXT


@pytest.mark.parametrize("verifier_key", [ENOCH_VERIFIER_KEY, FORMATS_KEY_PAIRS[0][1], SUMDB_VERIFIER_KEY],
                         ids=["EnochRoot", "Log", "sum.golang.org"])
def test_a_note_is_refused_by_another_key(verifier_key):
    with pytest.raises(NoteError):
        open_note(PETER_NOTE, Verifier.parse(verifier_key))


def test_a_note_whose_signer_shares_the_keys_name_but_not_its_key_is_refused():
    impostor = Signer("PeterNeumann", b"\x07" * 32)
    with pytest.raises(NoteError):
        open_note(impostor.sign_note(PETER_TEXT), Verifier.parse(PETER_VERIFIER_KEY))


def test_a_note_with_any_text_character_changed_is_refused():
    verifier = Verifier.parse(PETER_VERIFIER_KEY)
    changed = [PETER_TEXT[:i] + chr(ord(PETER_TEXT[i]) + 1) + PETER_TEXT[i + 1:] + "\n" + PETER_SIGNATURE
               for i in range(len(PETER_TEXT))]
    assert _accepted(lambda note: open_note(note, verifier), changed) == []


def test_a_note_with_any_signature_bit_changed_is_refused():
    verifier = Verifier.parse(PETER_VERIFIER_KEY)
    [(_, raw)] = SignedNote.parse(PETER_NOTE).signatures
    changed = []
    for bit in range(len(raw) * 8):
        flipped = bytearray(raw)
        flipped[bit // 8] ^= 1 << bit % 8
        changed.append(PETER_TEXT + "\n— PeterNeumann " + base64.b64encode(bytes(flipped)).decode() + "\n")
    assert _accepted(lambda note: open_note(note, verifier), changed) == []


@pytest.mark.parametrize("note", [
    # golang.org/x/mod, sumdb/note/note_test.go: TestOpen's invalid signature, misnamed and wrong-hash signatures.
    PETER_TEXT + "\n" + PETER_SIGNATURE[:60] + "ABCD" + PETER_SIGNATURE[60:],
    PETER_TEXT + "\n" + PETER_SIGNATURE.replace("PeterNeumann", "CarmenSandiego"),
    PETER_TEXT + "\n" + PETER_SIGNATURE.replace("x08g", "xxxx"),
    # TestOpen's badMsgs that are text (an invalid UTF-8 byte never reaches open_note: its caller decodes).
    PETER_TEXT,
    PETER_TEXT + "\n",
    PETER_TEXT + "\n" + PETER_SIGNATURE[:-1],
    "\x01" + PETER_TEXT + "\n" + PETER_SIGNATURE,
    PETER_TEXT + "\n— Bad Name x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyB"
                 "wJnAM=",
    PETER_TEXT + "\n" + PETER_SIGNATURE + "Unexpected line.\n",
], ids=["invalid signature", "misnamed signature", "wrong key hash", "no signature block", "empty signature block",
        "no final newline", "control character", "name with a space", "unexpected line"])
def test_a_malformed_or_tampered_note_is_refused(note):
    with pytest.raises(NoteError):
        open_note(note, Verifier.parse(PETER_VERIFIER_KEY))


# ----------------------------------------------------------------------------------------------- checkpoints

def test_a_published_sum_golang_org_checkpoint_verifies_and_parses():
    text = open_note(SUMDB_CHECKPOINT, Verifier.parse(SUMDB_VERIFIER_KEY))
    checkpoint = Checkpoint.parse(text)
    assert checkpoint.origin == "go.sum database tree"
    assert checkpoint.size == 6476701
    assert checkpoint.root == base64.b64decode("mb8QLQIs0Z0yP5Cstq6guj87oXWeC9gEM8oVikmm9Wk=")
    assert checkpoint.text() == text


def test_a_published_checkpoint_whose_origin_is_not_the_key_name_is_refused():
    # sum.golang.org signs the origin "go.sum database tree": a valid note, but not a checkpoint of a log whose
    # origin is its key's name, as tramita's are.
    with pytest.raises(NoteError, match="origin"):
        open_checkpoint(SUMDB_CHECKPOINT, Verifier.parse(SUMDB_VERIFIER_KEY))


def test_a_checkpoint_signed_by_the_log_key_opens_to_its_origin_size_and_root():
    signer = Signer("tramita.example/acre", b"\x01" * 32)
    note = signer.sign_note(Checkpoint(signer.name, 52, ROOT).text())
    assert note.startswith(f"tramita.example/acre\n52\n{ROOT_B64}\n\n— tramita.example/acre ")
    assert open_checkpoint(note, signer.verifier) == Checkpoint("tramita.example/acre", 52, ROOT)


def test_a_checkpoint_signed_by_the_log_key_for_another_origin_is_refused():
    signer = Signer("tramita.example/acre", b"\x01" * 32)
    note = signer.sign_note(Checkpoint("tramita.example/rondonia", 52, ROOT).text())
    with pytest.raises(NoteError, match="origin"):
        open_checkpoint(note, signer.verifier)


def test_a_checkpoint_signed_by_another_key_is_refused():
    other = Signer.parse(FORMATS_KEY_PAIRS[0][0])
    note = other.sign_note(Checkpoint("Log", 52, ROOT).text())
    with pytest.raises(NoteError):
        open_checkpoint(note, Verifier.parse(PETER_VERIFIER_KEY))


def test_checkpoint_texts_are_written_as_published():
    # transparency-dev/formats, log/checkpoint_test.go: TestMarshal.
    assert Checkpoint("Log", 123, b"bananas").text() == "Log\n123\nYmFuYW5hcw==\n"
    assert (Checkpoint("Banana", 9944, b"the view from the tree tops is great!").text()
            == "Banana\n9944\ndGhlIHZpZXcgZnJvbSB0aGUgdHJlZSB0b3BzIGlzIGdyZWF0IQ==\n")


def test_the_c2sp_example_checkpoint_text_parses():
    checkpoint = Checkpoint.parse(C2SP_CHECKPOINT_TEXT)
    assert (checkpoint.origin, checkpoint.size) == ("example.com/behind-the-sofa", 20852163)
    assert checkpoint.root == base64.b64decode("CsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=")
    assert checkpoint.text() == C2SP_CHECKPOINT_TEXT


def test_a_checkpoint_with_extension_lines_parses_to_its_first_three():
    assert Checkpoint.parse(f"Log\n9944\n{ROOT_B64}\nlots\nof\nlines\n") == Checkpoint("Log", 9944, ROOT)


@pytest.mark.parametrize("text", [
    # transparency-dev/formats, log/checkpoint_test.go: TestUnmarshalLogState's invalid ones.
    "Head\n9944\n",
    f"\n9944\n{ROOT_B64}\n",
    f"Log\n123\n{ROOT_B64}",
    f"Log\nbananas\n{ROOT_B64}\n",
    f"Log\n-34\n{ROOT_B64}\n",
    f"Log\n3438945738945739845734895735\n{ROOT_B64}\n",
    "Log\n123\nThisIsn'tBase64\n",
    # Its valid ones, whose roots are not 32 bytes: a SHA-256 tree's root always is.
    "Log\n123\nYmFuYW5hcw==\n",
    "Banana\n9944\ndGhlIHZpZXcgZnJvbSB0aGUgdHJlZSB0b3BzIGlzIGdyZWF0IQ==\n",
    # C2SP tlog-checkpoint: "with no leading zeroes (unless the tree is empty)".
    f"Log\n007\n{ROOT_B64}\n",
    f"Log\n00\n{ROOT_B64}\n",
    f"Log\n+7\n{ROOT_B64}\n",
    f"Log\n 7\n{ROOT_B64}\n",
    f"Log\n7\n{base64.b64encode(ROOT[:31]).decode()}\n",
    f"Log\n7\n{base64.b64encode(ROOT + b'!').decode()}\n",
], ids=["insufficient lines", "empty origin", "no newline after the root", "size not a number", "negative size",
        "size too large", "root not base64", "7-byte root", "37-byte root", "leading zeros", "zero with a leading zero",
        "size with a sign", "size with a space", "31-byte root", "33-byte root"])
def test_a_malformed_checkpoint_text_is_refused(text):
    with pytest.raises(NoteError):
        Checkpoint.parse(text)


def test_a_checkpoint_size_beyond_64_bits_is_refused():
    assert Checkpoint.parse(f"Log\n18446744073709551615\n{ROOT_B64}\n").size == 2**64 - 1
    with pytest.raises(NoteError):
        Checkpoint.parse(f"Log\n18446744073709551616\n{ROOT_B64}\n")


# ------------------------------------------------------------------------------------------ event signatures

ENTRY = bytes.fromhex("5777026c28cb51c0922bacc89b7d0b06") + (3).to_bytes(8, "big") + bytes(range(32, 64))


def test_an_event_signature_verifies_for_its_entry_under_its_key():
    signer = Signer.parse(PETER_SIGNER_KEY)
    signature = signer.sign_event(ENTRY)
    raw = base64.b64decode(signature)
    assert len(raw) == 68 and raw[:4] == bytes.fromhex("c74f20a3")
    assert signer.verifier.verify(EVENT_SIGNATURE_CONTEXT + ENTRY, raw[4:])
    assert verify_event_signature(Verifier.parse(PETER_VERIFIER_KEY), ENTRY, signature)


def test_an_event_signature_is_refused_for_another_entry_or_key():
    signature = Signer.parse(PETER_SIGNER_KEY).sign_event(ENTRY)
    peter = Verifier.parse(PETER_VERIFIER_KEY)
    other_entry = ENTRY[:23] + bytes([ENTRY[23] + 1]) + ENTRY[24:]  # the next version
    assert not verify_event_signature(peter, other_entry, signature)
    assert not verify_event_signature(Verifier.parse(ENOCH_VERIFIER_KEY), ENTRY, signature)


def test_an_event_signature_with_any_bit_changed_is_refused():
    peter = Verifier.parse(PETER_VERIFIER_KEY)
    raw = base64.b64decode(Signer.parse(PETER_SIGNER_KEY).sign_event(ENTRY))
    for bit in range(len(raw) * 8):
        flipped = bytearray(raw)
        flipped[bit // 8] ^= 1 << bit % 8
        assert not verify_event_signature(peter, ENTRY, base64.b64encode(bytes(flipped)).decode()), bit


@pytest.mark.parametrize("signature", ["", "not base64!", base64.b64encode(b"\xc7\x4f\x20\xa3" + bytes(63)).decode(),
                                       None], ids=["empty", "not base64", "63-byte signature", "none"])
def test_a_malformed_event_signature_is_refused(signature):
    assert not verify_event_signature(Verifier.parse(PETER_VERIFIER_KEY), ENTRY, signature)


def test_a_signature_over_the_bare_entry_is_no_event_signature():
    """The context string keeps the two apart: a key's signature of 56 bytes that happen to be an entry (as a note's
    text could never be, but another protocol's message could) does not pass as its signature of that event."""
    signer = Signer.parse(PETER_SIGNER_KEY)
    bare = base64.b64encode(signer.verifier.hash_bytes + signer.sign(ENTRY)).decode()
    assert not verify_event_signature(signer.verifier, ENTRY, bare)


def test_a_signature_is_taken_only_in_the_one_text_base64_writes_for_its_bytes():
    """The character before the padding carries two bits no byte uses: of the texts that decode to the same bytes
    but for those bits, only the one base64 writes is a signature, for the full check and the form check alike
    (any other character there, or none, is not base64 at all)."""
    peter = Verifier.parse(PETER_VERIFIER_KEY)
    signature = Signer.parse(PETER_SIGNER_KEY).sign_event(ENTRY)
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    unwritten = 0
    for character in alphabet + "=-_.\n é":
        text = signature[:90] + character + signature[91:]
        if character not in alphabet or base64.b64encode(base64.b64decode(text)).decode() != text:
            unwritten += 1
            assert not verify_event_signature(peter, ENTRY, text) and not event_signature_in_form(peter, text)
    assert unwritten == 48 + 7  # 16 of the 64 characters leave the two bits zero; 7 are not base64
    assert verify_event_signature(peter, ENTRY, signature) and event_signature_in_form(peter, signature)
