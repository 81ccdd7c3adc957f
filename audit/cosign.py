"""C2SP tlog-cosignature (Ed25519, signature type 0x04) and tlog-witness's add-checkpoint request, as pure functions.

- cosigner key ID: the first 4 bytes of SHA-256(name ‖ "\\n" ‖ 0x04 ‖ the 32-byte public key), big-endian;
- cosigner verifier key (vkey): `<name>+<8 hex digits of the key ID>+<base64(0x04 ‖ public key)>`;
- cosigner key file: `PRIVATE+KEY+<name>+<8 hex digits>+<base64(0x04 ‖ 32-byte seed)>`;
- signed message: `cosignature/v1\\n`, `time <POSIX seconds>\\n`, then the checkpoint's whole note body;
- signature line: `— <name> <base64(key ID ‖ 8-byte big-endian timestamp ‖ 64-byte Ed25519 signature)>`;
- add-checkpoint body: `old <size>\\n`, one base64 consistency-proof hash a line (at most 63), a blank line, then
  the signed checkpoint note.

A cosignature says: at that time, the witness had checked that this checkpoint extends every one it cosigned
before for the log. `tests/test_witness_vectors.py` checks this module against the C2SP texts' examples and a
cosignature published by a running witness (tests/fixtures/cosignature/).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from audit.notes import SIGNATURE_PREFIX, NoteError, SignedNote

COSIGNATURE_ED25519 = 0x04
#: The most consistency-proof lines a request may carry (tlog-witness: a client MUST NOT send more).
MAX_PROOF_LINES = 63
#: A cosignature's timestamp is below 2^63 (tlog-cosignature).
MAX_TIMESTAMP = 2 ** 63 - 1


class CosignError(ValueError):
    """A cosigner key, cosignature or add-checkpoint request that is malformed."""


def _name_ok(name: str) -> bool:
    return bool(name) and "+" not in name and not any(c.isspace() for c in name) and name.isprintable()


def _b64(text: str, what: str) -> bytes:
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise CosignError(f"{what} is not standard base64") from None


def cosigner_key_id(name: str, public_key: bytes) -> int:
    digest = hashlib.sha256(name.encode("utf-8") + b"\n" + bytes([COSIGNATURE_ED25519]) + public_key).digest()
    return int.from_bytes(digest[:4], "big")


def cosignature_message(body: str, timestamp: int) -> bytes:
    """What a v1 Ed25519 cosignature signs: the header line, the time line, the checkpoint's note body."""
    return f"cosignature/v1\ntime {timestamp}\n".encode("ascii") + body.encode("utf-8")


@dataclass(frozen=True)
class CosignVerifier:
    """A witness's public key with its name: checks its cosignatures."""

    name: str
    public_key: bytes

    @cached_property
    def key_id(self) -> bytes:
        return cosigner_key_id(self.name, self.public_key).to_bytes(4, "big")

    def __str__(self) -> str:
        material = base64.b64encode(bytes([COSIGNATURE_ED25519]) + self.public_key).decode("ascii")
        return f"{self.name}+{self.key_id.hex()}+{material}"

    @classmethod
    def parse(cls, text: str) -> CosignVerifier:
        parts = text.strip().split("+", 2)
        if len(parts) != 3 or not _name_ok(parts[0]) or not re.fullmatch(r"[0-9a-f]{8}", parts[1]):
            raise CosignError("not a witness's verifier key (<name>+<8 hex digits>+<base64 key>)")
        material = _b64(parts[2], "the witness key's material")
        if len(material) != 33 or material[0] != COSIGNATURE_ED25519:
            raise CosignError("not a witness's cosignature key (0x04 followed by a 32-byte Ed25519 key)")
        verifier = cls(parts[0], material[1:])
        if verifier.key_id.hex() != parts[1]:
            raise CosignError(f"the witness key's ID {parts[1]} does not match its name and key")
        return verifier

    def timestamp_of(self, body: str, raw: bytes) -> int | None:
        """The time of a cosignature (key ID ‖ timestamp ‖ signature) by this key over `body`; None when it is
        another key's, malformed, or does not verify."""
        if len(raw) != 76 or raw[:4] != self.key_id:
            return None
        timestamp = int.from_bytes(raw[4:12], "big")
        if timestamp > MAX_TIMESTAMP:
            return None
        try:
            Ed25519PublicKey.from_public_bytes(self.public_key).verify(raw[12:], cosignature_message(body, timestamp))
        except (InvalidSignature, ValueError):
            return None
        return timestamp


class Cosigner:
    """A witness's Ed25519 private key with its name."""

    def __init__(self, name: str, seed: bytes) -> None:
        if not _name_ok(name):
            raise CosignError(f"{name!r} is not a key name (no spaces, no '+')")
        if len(seed) != 32:
            raise CosignError("an Ed25519 seed is 32 bytes")
        self.name = name
        self._key = Ed25519PrivateKey.from_private_bytes(seed)
        self.verifier = CosignVerifier(name, self._key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw))

    @classmethod
    def generate(cls, name: str) -> Cosigner:
        return cls(name, Ed25519PrivateKey.generate().private_bytes_raw())

    @classmethod
    def parse(cls, text: str) -> Cosigner:
        parts = text.strip().split("+", 4)
        if len(parts) != 5 or parts[:2] != ["PRIVATE", "KEY"] or not re.fullmatch(r"[0-9a-f]{8}", parts[3]):
            raise CosignError("not a witness key (PRIVATE+KEY+<name>+<8 hex digits>+<base64 key>)")
        material = _b64(parts[4], "the witness key's material")
        if len(material) != 33 or material[0] != COSIGNATURE_ED25519:
            raise CosignError("not a witness key (0x04 followed by a 32-byte seed)")
        cosigner = cls(parts[2], material[1:])
        if cosigner.verifier.key_id.hex() != parts[3]:
            raise CosignError(f"the witness key's ID {parts[3]} does not match its name and key")
        return cosigner

    def __str__(self) -> str:
        material = base64.b64encode(bytes([COSIGNATURE_ED25519]) + self._key.private_bytes_raw()).decode("ascii")
        return f"PRIVATE+KEY+{self.name}+{self.verifier.key_id.hex()}+{material}"

    def __repr__(self) -> str:  # never the seed
        return f"Cosigner({self.verifier})"

    def cosign(self, body: str, timestamp: int) -> str:
        """The cosignature line (ending in a newline) over a checkpoint's note body at `timestamp`."""
        if not 0 <= timestamp <= MAX_TIMESTAMP:
            raise CosignError("a cosignature's timestamp is between 0 and 2^63 - 1")
        signature = self._key.sign(cosignature_message(body, timestamp))
        raw = self.verifier.key_id + timestamp.to_bytes(8, "big") + signature
        return f"{SIGNATURE_PREFIX}{self.name} {base64.b64encode(raw).decode('ascii')}\n"


def cosignatures(note: str, verifiers: Iterable[CosignVerifier]) -> dict[str, int]:
    """The valid cosignatures a signed note carries from the given witnesses: {vkey: timestamp}. Lines of other
    keys are ignored; a note that does not parse carries none."""
    try:
        parsed = SignedNote.parse(note)
    except NoteError:
        return {}
    found: dict[str, int] = {}
    for verifier in verifiers:
        for name, raw in parsed.signatures:
            if name == verifier.name:
                timestamp = verifier.timestamp_of(parsed.text, raw)
                if timestamp is not None:
                    found[str(verifier)] = timestamp
                    break
    return found


def quorum_problem(note: str, verifiers: Sequence[CosignVerifier], quorum: int) -> str | None:
    """Why a checkpoint lacks `quorum` valid cosignatures from `verifiers` (None: it has them)."""
    found = cosignatures(note, verifiers)
    if len(found) >= quorum:
        return None
    missing = [v.name for v in verifiers if str(v) not in found]
    return (f"the checkpoint carries {len(found)} valid cosignatures of the {quorum} required "
            f"(none valid from: {', '.join(missing)})")


def with_cosignatures(note: str, lines: Iterable[str]) -> str:
    """A signed note with cosignature lines appended (each once, after the note's own signatures)."""
    present = set(note.splitlines(keepends=True))
    return note + "".join(line for line in dict.fromkeys(lines) if line not in present)


def parse_cosignature_lines(body: str) -> list[tuple[str, bytes]]:
    """A witness's 200 answer: one or more signature lines, (name, raw bytes) each."""
    if not body.endswith("\n"):
        raise CosignError("a witness's answer ends in a newline")
    found = []
    for line in body[:-1].split("\n"):
        if not line.startswith(SIGNATURE_PREFIX):
            raise CosignError(f"not a signature line: {line[:40]!r}")
        name, _, blob = line[len(SIGNATURE_PREFIX):].partition(" ")
        found.append((name, _b64(blob, "a cosignature")))
    return found


@dataclass(frozen=True)
class AddCheckpoint:
    """tlog-witness's add-checkpoint request: the size the log believes the witness last cosigned, the
    consistency proof from it, and the signed checkpoint."""

    old_size: int
    proof: tuple[bytes, ...]
    note: str

    def encode(self) -> bytes:
        lines = [f"old {self.old_size}\n", *(base64.b64encode(h).decode("ascii") + "\n" for h in self.proof), "\n"]
        return ("".join(lines) + self.note).encode("utf-8")

    @classmethod
    def parse(cls, body: bytes) -> AddCheckpoint:
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError:
            raise CosignError("the request is not UTF-8") from None
        head, sep, note = text.partition("\n\n")
        if not sep:
            raise CosignError("the request has no blank line before the checkpoint")
        lines = head.split("\n")
        match = re.fullmatch(r"old (0|[1-9][0-9]{0,19})", lines[0])
        if not match or int(match[1]) >= 2 ** 64:
            raise CosignError("the request's first line is `old <size>`")
        if len(lines) - 1 > MAX_PROOF_LINES:
            raise CosignError(f"more than {MAX_PROOF_LINES} consistency proof lines")
        proof = []
        for line in lines[1:]:
            digest = _b64(line, "a consistency proof line")
            if len(digest) != 32:
                raise CosignError("a consistency proof line is a 32-byte hash")
            proof.append(digest)
        return cls(int(match[1]), tuple(proof), note)
