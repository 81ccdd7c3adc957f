"""C2SP signed notes and checkpoints, with Ed25519 keys in the formats of Go's `golang.org/x/mod/sumdb/note`.

- key hash: the first 4 bytes of SHA-256(name ‖ "\\n" ‖ 0x01 ‖ the 32-byte public key), read big-endian;
- verifier key: `<name>+<8 hex digits of the key hash>+<base64(0x01 ‖ public key)>`;
- signer key (the private key file): `PRIVATE+KEY+<name>+<8 hex digits>+<base64(0x01 ‖ 32-byte seed)>`;
- signed note: the text (UTF-8, each line ending in a newline), a blank line, then one line per signature,
  `— <name> <base64(4-byte key hash ‖ 64-byte Ed25519 signature of the text)>` (U+2014, a space);
- checkpoint (C2SP tlog-checkpoint) text: the origin, the tree size in decimal, the root hash in standard padded
  base64, each on its own line; tramita writes no extension lines.

Standard verifiers of those formats (Go's note package, transparency-dev's checkpoint tools) accept what this
module signs; `tests/test_audit_notes.py` checks it against the Go package's published example.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
from dataclasses import dataclass
from functools import cached_property
from uuid import UUID

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

ALGORITHM_ED25519 = 0x01
SIGNATURE_PREFIX = "\u2014 "
#: What an event signature signs, before the event's 56-byte leaf entry (the NUL keeps it apart from note texts).
EVENT_SIGNATURE_CONTEXT = b"tramita/event-signature/v1\x00"
ZERO_HASH = bytes(32)


class NoteError(ValueError):
    """A key, note or checkpoint that is malformed, or a signature that does not verify."""


def _valid_name(name: str) -> bool:
    return bool(name) and "+" not in name and not any(c.isspace() for c in name) and name.isprintable()


def key_hash(name: str, public_key: bytes) -> int:
    """The 32-bit key hash of Go's note package: SHA-256(name ‖ "\\n" ‖ 0x01 ‖ public key)[:4], big-endian."""
    digest = hashlib.sha256(name.encode("utf-8") + b"\n" + bytes([ALGORITHM_ED25519]) + public_key).digest()
    return int.from_bytes(digest[:4], "big")


def _b64decode(text: str, what: str) -> bytes:
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise NoteError(f"{what} is not standard base64") from None


@dataclass(frozen=True)
class Verifier:
    """A public key with its name: checks signatures of notes and of events."""

    name: str
    public_key: bytes

    @cached_property
    def hash(self) -> int:
        return key_hash(self.name, self.public_key)

    @cached_property
    def hash_bytes(self) -> bytes:
        return self.hash.to_bytes(4, "big")

    @cached_property
    def _public(self) -> Ed25519PublicKey:
        return Ed25519PublicKey.from_public_bytes(self.public_key)

    def __str__(self) -> str:
        """The verifier key: `<name>+<hash>+<base64(0x01 ‖ public key)>`."""
        material = base64.b64encode(bytes([ALGORITHM_ED25519]) + self.public_key).decode("ascii")
        return f"{self.name}+{self.hash:08x}+{material}"

    @classmethod
    def parse(cls, text: str) -> Verifier:
        """A verifier key in the note package's format (the base64 may itself hold a '+')."""
        parts = text.strip().split("+", 2)
        if len(parts) != 3 or not _valid_name(parts[0]) or not re.fullmatch(r"[0-9a-f]{8}", parts[1]):
            raise NoteError("not a verifier key (<name>+<8 hex digits>+<base64 key>)")
        material = _b64decode(parts[2], "the verifier key's material")
        if len(material) != 33 or material[0] != ALGORITHM_ED25519:
            raise NoteError("the verifier key is not an Ed25519 key (0x01 followed by 32 bytes)")
        verifier = cls(parts[0], material[1:])
        if verifier.hash != int(parts[1], 16):
            raise NoteError(f"the verifier key's hash {parts[1]} does not match its name and key")
        return verifier

    def verify(self, message: bytes, signature: bytes) -> bool:
        try:
            self._public.verify(signature, message)
        except (InvalidSignature, ValueError):
            return False
        return True


class Signer:
    """An Ed25519 private key with its name (the log's origin)."""

    def __init__(self, name: str, seed: bytes) -> None:
        if not _valid_name(name):
            raise NoteError(f"{name!r} is not a key name (no spaces, no '+')")
        if len(seed) != 32:
            raise NoteError("an Ed25519 seed is 32 bytes")
        self.name = name
        self._key = Ed25519PrivateKey.from_private_bytes(seed)
        public = self._key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
        self.verifier = Verifier(name, public)

    @classmethod
    def generate(cls, name: str) -> Signer:
        return cls(name, Ed25519PrivateKey.generate().private_bytes_raw())

    @classmethod
    def parse(cls, text: str) -> Signer:
        """A signer key: `PRIVATE+KEY+<name>+<hash>+<base64(0x01 ‖ seed)>`."""
        parts = text.strip().split("+", 4)
        if len(parts) != 5 or parts[:2] != ["PRIVATE", "KEY"] or not re.fullmatch(r"[0-9a-f]{8}", parts[3]):
            raise NoteError("not a signer key (PRIVATE+KEY+<name>+<8 hex digits>+<base64 key>)")
        material = _b64decode(parts[4], "the signer key's material")
        if len(material) != 33 or material[0] != ALGORITHM_ED25519:
            raise NoteError("the signer key is not an Ed25519 key (0x01 followed by a 32-byte seed)")
        signer = cls(parts[2], material[1:])
        if signer.verifier.hash != int(parts[3], 16):
            raise NoteError(f"the signer key's hash {parts[3]} does not match its name and key")
        return signer

    def __str__(self) -> str:
        material = base64.b64encode(bytes([ALGORITHM_ED25519]) + self._key.private_bytes_raw()).decode("ascii")
        return f"PRIVATE+KEY+{self.name}+{self.verifier.hash:08x}+{material}"

    def __repr__(self) -> str:  # never the seed
        return f"Signer({self.verifier})"

    def sign(self, message: bytes) -> bytes:
        return self._key.sign(message)

    def sign_note(self, text: str) -> str:
        """The signed note: the text, a blank line, and this key's signature line."""
        _require_text(text)
        signature = base64.b64encode(self.verifier.hash_bytes + self.sign(text.encode("utf-8"))).decode("ascii")
        return f"{text}\n{SIGNATURE_PREFIX}{self.name} {signature}\n"

    def sign_event(self, entry: bytes) -> str:
        """An event's signature: base64(key hash ‖ Ed25519 signature of the context string ‖ its leaf entry)."""
        return base64.b64encode(self.verifier.hash_bytes + self.sign(EVENT_SIGNATURE_CONTEXT + entry)).decode()

    def sign_recorded(self, originator_id: UUID, version: int, chain_hash: str) -> str:
        """The signature of a recorded event, over its leaf entry (what the application stores with it)."""
        return self.sign_event(entry_of(originator_id, version, chain_hash))


#: Unicode's control characters (category Cc: U+0000-U+001F, U+007F-U+009F) but the newline.
_CONTROL = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f]")


def _require_text(text: str) -> None:
    """C2SP signed-note: the text is UTF-8, ends in a newline, and holds no control character but newlines."""
    if not text.endswith("\n"):
        raise NoteError("a note's text ends in a newline")
    if _CONTROL.search(text):
        raise NoteError("a note's text holds no control characters other than newlines")


@dataclass(frozen=True)
class SignedNote:
    text: str
    signatures: tuple[tuple[str, bytes], ...]
    """(key name, 4-byte key hash ‖ signature) of each signature line."""

    @classmethod
    def parse(cls, note: str) -> SignedNote:
        if not isinstance(note, str):  # a stored note an administrator rewrote as bytes or a number
            raise NoteError(f"not a signed note (a {type(note).__name__}, not text)")
        text, sep, block = note.rpartition("\n\n")
        if not sep or not block.endswith("\n"):
            raise NoteError("not a signed note (text, a blank line, signature lines)")
        text += "\n"
        _require_text(text)
        signatures = []
        for line in block[:-1].split("\n"):
            if not line.startswith(SIGNATURE_PREFIX):
                raise NoteError(f"not a signature line: {line[:40]!r}")
            name, _, blob = line[len(SIGNATURE_PREFIX):].partition(" ")
            raw = _b64decode(blob, "a signature")
            if not _valid_name(name) or len(raw) < 5:
                raise NoteError(f"not a signature line: {line[:40]!r}")
            signatures.append((name, raw))
        return cls(text, tuple(signatures))

    def verified_by(self, verifier: Verifier) -> bool:
        """Some signature line is this key's and verifies over the text, and none of this key's fails (a note
        with a bad signature by a known key is rejected, as Go's note package does)."""
        message = self.text.encode("utf-8")
        mine = [raw[4:] for name, raw in self.signatures if name == verifier.name and raw[:4] == verifier.hash_bytes]
        return bool(mine) and all(verifier.verify(message, signature) for signature in mine)


def open_note(note: str, verifier: Verifier) -> str:
    """The text of a note signed by `verifier`; NoteError otherwise."""
    parsed = SignedNote.parse(note)
    if not parsed.verified_by(verifier):
        raise NoteError(f"the note carries no valid signature by {verifier.name}+{verifier.hash:08x}")
    return parsed.text


def verify_event_signature(verifier: Verifier, entry: bytes, signature: str) -> bool:
    raw = _event_signature_bytes(signature)
    return raw is not None and raw[:4] == verifier.hash_bytes and \
        verifier.verify(EVENT_SIGNATURE_CONTEXT + entry, raw[4:])


#: The order L of Ed25519's base point: a signature's S (its last 32 bytes, little-endian) is below it (RFC 8032
#: §5.1.6 computes S mod L; §5.1.7 rejects S >= L).
_ED25519_ORDER = 2 ** 252 + 27742317777372353535851937790883648493


def event_signature_in_form(verifier: Verifier | None, signature: object) -> bool:
    """Whether an event's signature has the form the log's key gives every one (`Signer.sign_event`): standard
    base64 of 68 bytes, the key's hash first (when the key is known), an Ed25519 S below the group's order. It
    says nothing of what was signed (`verify_event_signature` does, at about a hundred times the cost): it is the
    check of a signature a verified checkpoint covers, which garbage or another key's signature fails."""
    raw = _event_signature_bytes(signature)
    if raw is None or (verifier is not None and raw[:4] != verifier.hash_bytes):
        return False
    top = raw[67]  # S's most significant byte: below 0x10, S < 2**252 < L
    return top < 0x10 or (top == 0x10 and int.from_bytes(raw[36:], "little") < _ED25519_ORDER)


def _event_signature_bytes(signature: object) -> bytes | None:
    """The 68 bytes of an event's signature (key hash ‖ Ed25519 signature), or None when it is not that."""
    if type(signature) is not str or len(signature) != 92:
        return None
    try:
        raw = binascii.a2b_base64(signature, strict_mode=True)
    except (binascii.Error, ValueError):
        return None
    # One text per signature: base64's unused bits of the last character set would decode alike. 92 characters
    # that decode strictly to 68 bytes end in one group of three characters and a "=", whose third character
    # carries two unused bits: the text is the one base64 writes exactly when they are zero (the re-encoding's
    # answer, without re-encoding).
    return raw if len(raw) == 68 and signature[90] in _NO_UNUSED_BITS else None


#: The base64 characters whose value's two lowest bits are zero (the last character before a single "=").
_NO_UNUSED_BITS = frozenset("AEIMQUYcgkosw048")


@dataclass(frozen=True)
class Checkpoint:
    """A C2SP tlog-checkpoint body: origin, tree size, root hash."""

    origin: str
    size: int
    root: bytes

    def text(self) -> str:
        return f"{self.origin}\n{self.size}\n{base64.b64encode(self.root).decode('ascii')}\n"

    @classmethod
    def parse(cls, text: str) -> Checkpoint:
        lines = text.split("\n")
        if len(lines) < 4 or lines[-1] != "":
            raise NoteError("a checkpoint has at least three lines: origin, size, root hash")
        origin, size, root = lines[0], lines[1], lines[2]
        if not origin or not re.fullmatch(r"0|[1-9][0-9]{0,19}", size) or int(size) >= 2**64:
            raise NoteError("a checkpoint's second line is the tree size in decimal (below 2^64)")
        digest = _b64decode(root, "the checkpoint's root hash")
        if len(digest) != 32:
            raise NoteError("a checkpoint's root hash is 32 bytes")
        return cls(origin, int(size), digest)


def open_checkpoint(note: str, verifier: Verifier) -> Checkpoint:
    """The checkpoint in a note signed by `verifier`, whose origin is the key's name."""
    checkpoint = Checkpoint.parse(open_note(note, verifier))
    if checkpoint.origin != verifier.name:
        raise NoteError(f"the checkpoint's origin {checkpoint.origin!r} is not the key's name {verifier.name!r}")
    return checkpoint


def entry_of(originator_id: UUID, version: int, chain_hash: str) -> bytes:
    """An event's 56-byte leaf entry: its aggregate id (16 bytes, `UUID.bytes`) ‖ its version (8 bytes, unsigned
    big-endian) ‖ its chain hash (32 bytes). A hash that is not 64 hex digits counts as 32 zero bytes; a version
    that 8 unsigned bytes cannot hold (a row an administrator inserted with version -1, or wrote as text) as eight
    0xFF bytes: the event still takes its leaf, and verification names it."""
    return originator_id.bytes + entry_after_id(version, chain_hash)


def entry_after_id(version: int, chain_hash: str) -> bytes:
    """The 40 bytes of a leaf entry after its aggregate id, as `entry_of` writes them (for a verifier that holds
    the id's bytes already)."""
    try:
        digest = bytes.fromhex(chain_hash)
    except (TypeError, ValueError):
        digest = b""
    if len(digest) != 32:
        digest = ZERO_HASH
    held = type(version) is int and 0 <= version < 2 ** 64
    return (version.to_bytes(8, "big") if held else UNWRITABLE_VERSION) + digest


#: The leaf entry's version of an event whose version 8 unsigned bytes cannot hold (`entry_of`).
UNWRITABLE_VERSION = b"\xff" * 8
