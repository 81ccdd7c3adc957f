#!/usr/bin/env python3
"""Check a tramita case export offline: is every event of the case in the log signed by the key you trust?

Usage:

    python verify_export.py EXPORT.jsonl --key VERIFIER_KEY_OR_FILE [--documents DIR]
                            [--witness-key WITNESS_KEY_OR_FILE ... [--quorum N]]

    VERIFIER_KEY_OR_FILE is the log's verifier key, `<name>+<8 hex digits>+<base64 key>` (the format of Go's
    golang.org/x/mod/sumdb/note), or a file that holds it on its first line. Take it from the log's operator through
    a channel you trust (a published notice, a signed letter), never from the export itself.

    It prints a line for each problem it finds, then its verdict, and exits with 0 when every event is in the signed
    log, 1 when any check fails, 2 when it was called wrongly (no such file, a malformed key).

This file stands alone: Python 3.11 or later and the `cryptography` package (`pip install cryptography`), nothing
from tramita. It re-implements, small and exact, the three things it needs: RFC 9162 §2.1 Merkle tree hashing and
inclusion-proof verification (§2.1.3.2), C2SP signed notes (c2sp.org/signed-note) with Ed25519 keys in the Go note
package's format, and C2SP checkpoints (c2sp.org/tlog-checkpoint).

The export (JSON Lines, UTF-8) and what is checked:
- every line but the last is one event of the case, in version order: the event's hashed document (every stored
  field but `hash`, with `type`; dates `{"$date": …}`, timestamps `{"$datetime": …}`, decimals `{"$decimal": …}`,
  UUIDs `{"$uuid": …}`) plus three members that are not hashed: `hash`, `signature` and `proof`.
  Checked: the SHA-256 of the document (the line without `hash`, `proof` and `signature`, as JSON with sorted keys,
  separators `,` and `:`, UTF-8 without ASCII escapes) is `hash`; `originator_version` runs 1, 2, 3, … and each
  `prev_hash` is the previous line's `hash` (64 zeros for the first); every line has the case's `originator_id`.
- an event's entry in the log is 56 bytes: the 16 bytes of its `originator_id`, its `originator_version` as 8 bytes
  big-endian, and the 32 bytes of its `hash`; its leaf hash is SHA-256(0x00 ‖ entry).
- `proof` is null or `{"leaf_index": i, "tree_size": n, "hashes": [base64, …]}`, the inclusion path of the event's
  leaf in the tree of size n. Checked: n is the checkpoint's size and the path leads to the checkpoint's root.
- `signature` (optional) is base64 of the key's 4-byte key ID ‖ the Ed25519 signature of
  b"tramita/event-signature/v1\\x00" ‖ the entry. Checked wherever present; an event without a proof must carry one.
- the last line is `{"checkpoint": note or null, "case_head": note or null, "not_yet_covered": [versions]}`.
  Checked: the checkpoint is signed by the key and its origin is the key's name; every event without a proof is
  listed in `not_yet_covered` (and nothing else is); the case head is signed by the key and names the case, its last
  version and that version's hash, which must be the last event line's (so a file cut short is caught).
  Without a checkpoint, no event is covered yet, and each must carry a valid signature.
- an event of type `Case.DocumentsAttached` lists the documents an act cites, each `{"sha256", "name", "type",
  "size"}`; their bytes are not in the export. With `--documents DIR` (a folder holding the files, under any names,
  e.g. as downloaded from `GET /documents/{sha256}`), checked: for every document listed, a file of the folder has
  that SHA-256 and that size. Since the event is in the signed log, such a file is the document the act cited.
- with `--witness-key` (repeatable; each a witness's verifier key `<name>+<8 hex>+<base64(0x04 ‖ key)>`, from the
  Tribunal de Contas, the Ministério Público, …) and `--quorum N` (default: all of them): the checkpoint carries a
  valid cosignature (c2sp.org/tlog-cosignature, Ed25519) of at least N of those witnesses, each a signature line
  `— <name> <base64(key ID ‖ 8-byte big-endian POSIX time ‖ Ed25519 signature)>` over `cosignature/v1\n`,
  `time <POSIX time>\n` and the checkpoint's text. A witness cosigns only a checkpoint that extends every one it
  cosigned before, so a log rolled back or forked after they saw it cannot show this export a quorum.
"""

from __future__ import annotations

import argparse
import base64
import binascii
import hashlib
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from uuid import UUID

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

GENESIS = "0" * 64
UNHASHED_MEMBERS = ("hash", "proof", "signature")
CLOSING_MEMBERS = {"checkpoint", "case_head", "not_yet_covered"}
EVENT_SIGNATURE_CONTEXT = b"tramita/event-signature/v1\x00"
ED25519 = 0x01  # C2SP signed-note: the signature type of Ed25519 keys
COSIGNATURE_ED25519 = 0x04  # C2SP signed-note: the signature type of Ed25519 tlog-cosignatures (timestamped)
SIGNATURE_PREFIX = "\u2014 "  # em dash, space
HEX_HASH = re.compile(r"[0-9a-f]{64}")
DECIMAL = re.compile(r"0|[1-9][0-9]*")
MAX_SIZE = 2**64 - 1


class UsageError(Exception):
    """The verifier was called wrongly (exit status 2)."""


class Invalid(ValueError):
    """A check failed; the message says which, in plain words."""


def b64decode(text: Any, what: str) -> bytes:
    if not isinstance(text, str):
        raise Invalid(f"{what} is not a base64 string")
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise Invalid(f"{what} is not valid base64") from None


# ------------------------------------------------------------------------- keys and signed notes (C2SP)

@dataclass(frozen=True)
class Key:
    """A verifier key: `<name>+<8 hex digits of the key ID>+<base64(0x01 ‖ 32-byte Ed25519 public key)>`."""

    name: str
    key_id: bytes
    public_key: bytes

    def verify(self, message: bytes, signature: bytes) -> bool:
        try:
            Ed25519PublicKey.from_public_bytes(self.public_key).verify(signature, message)
        except (InvalidSignature, ValueError):
            return False
        return True

    def __str__(self) -> str:
        return f"{self.name}+{self.key_id.hex()}"


def valid_key_name(name: str) -> bool:
    """C2SP signed-note: key names are non-empty and hold no Unicode spaces and no '+'."""
    return bool(name) and "+" not in name and not any(c.isspace() for c in name)


def key_id(name: str, public_key: bytes) -> bytes:
    """C2SP signed-note: key ID = SHA-256(key name ‖ 0x0A ‖ 0x01 ‖ 32-byte Ed25519 public key)[:4]."""
    return hashlib.sha256(name.encode("utf-8") + b"\n" + bytes([ED25519]) + public_key).digest()[:4]


def parse_key(text: str) -> Key:
    text = text.strip()
    name, _, rest = text.partition("+")
    id_hex, _, material_b64 = rest.partition("+")  # the base64 may itself hold '+'
    if not valid_key_name(name) or not re.fullmatch(r"[0-9a-fA-F]{8}", id_hex):
        raise Invalid("it is not a verifier key (<name>+<8 hex digits>+<base64 key>)")
    material = b64decode(material_b64, "the key's base64 part")
    if len(material) != 33 or material[0] != ED25519:
        raise Invalid("it is not an Ed25519 verifier key (0x01 followed by 32 bytes)")
    key = Key(name, bytes.fromhex(id_hex), material[1:])
    if key_id(name, key.public_key) != key.key_id:
        raise Invalid(f"its key ID {id_hex} does not match its name and public key")
    return key


def open_note(note: str, key: Key) -> str:
    """The text of a C2SP signed note that `key` signed; Invalid otherwise.

    Format: the text (ending in a newline), a blank line, then signature lines `— <key name> <base64(4-byte key ID ‖
    signature)>`, each ending in a newline; no control characters but newlines. The text is everything before the
    last blank line, with its final newline. Signatures by other keys are ignored (as the spec requires); one by
    this key that does not verify rejects the note (as the spec recommends).
    """
    if not isinstance(note, str):
        raise Invalid("it is not a signed note (not a string)")
    try:
        note.encode("utf-8")
    except UnicodeEncodeError:
        raise Invalid("it is not a signed note (not UTF-8: it holds a lone surrogate)") from None
    if any(c < " " and c != "\n" for c in note):
        raise Invalid("it is not a signed note (it holds a control character)")
    split = note.rfind("\n\n")
    if split < 0 or not note.endswith("\n") or split + 2 == len(note):
        raise Invalid("it is not a signed note (text, a blank line, signature lines)")
    text, block = note[:split + 1], note[split + 2:]
    ours = 0
    for line in block[:-1].split("\n"):
        if not line.startswith(SIGNATURE_PREFIX):
            raise Invalid(f"it is not a signed note (a line of its signature block is not a signature: {line[:30]!r})")
        name, _, signature_b64 = line[len(SIGNATURE_PREFIX):].partition(" ")
        raw = b64decode(signature_b64, "a signature line's signature")
        if not valid_key_name(name) or len(raw) < 5:
            raise Invalid(f"it is not a signed note (a malformed signature line: {line[:30]!r})")
        if name == key.name and raw[:4] == key.key_id:
            if not key.verify(text.encode("utf-8"), raw[4:]):
                raise Invalid(f"its signature by {key} does not verify: the note was altered or not signed by "
                              "this key")
            ours += 1
    if not ours:
        raise Invalid(f"it carries no signature by {key}")
    return text


@dataclass(frozen=True)
class Checkpoint:
    size: int
    root: bytes


def open_checkpoint(note: str, key: Key) -> Checkpoint:
    """C2SP tlog-checkpoint: the origin (here, the key's name), the tree size in decimal without leading zeros, the
    root hash in base64, each on its own line; any further (extension) lines are non-empty."""
    lines = open_note(note, key).split("\n")[:-1]
    if len(lines) < 3 or any(not line for line in lines):
        raise Invalid("its text is not a checkpoint (origin, tree size, root hash, each on its own line)")
    origin, size, root_b64 = lines[:3]
    if origin != key.name:
        raise Invalid(f"its origin {origin!r} is not the key's name {key.name!r}")
    if not DECIMAL.fullmatch(size) or int(size) > MAX_SIZE:
        raise Invalid(f"its tree size {size!r} is not a decimal number without leading zeros (at most 2^64 - 1)")
    root = b64decode(root_b64, "its root hash")
    if len(root) != 32:
        raise Invalid("its root hash is not 32 bytes")
    return Checkpoint(int(size), root)


# ---------------------------------------------------------------------------------- the tree (RFC 9162)

def leaf_hash(entry: bytes) -> bytes:
    """RFC 9162 §2.1.1: the hash of a leaf is SHA-256(0x00 ‖ entry)."""
    return hashlib.sha256(b"\x00" + entry).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    """RFC 9162 §2.1.1: the hash of an interior node is SHA-256(0x01 ‖ left ‖ right)."""
    return hashlib.sha256(b"\x01" + left + right).digest()


def root_from_inclusion(leaf_index: int, tree_size: int, leaf: bytes, path: list[bytes]) -> bytes:
    """RFC 9162 §2.1.3.2, step by step: the root that `path` leads to from `leaf`; Invalid when the path is not
    one for that leaf index and tree size. (The caller compares the root with the checkpoint's.)"""
    if not 0 <= leaf_index < tree_size:  # a leaf index at or above the tree size fails
        raise Invalid(f"its leaf index {leaf_index} is not below its tree size {tree_size}")
    fn, sn, r = leaf_index, tree_size - 1, leaf
    for p in path:
        if sn == 0:  # "If sn is 0, then stop the iteration and fail the proof verification."
            raise Invalid("its path is longer than the tree is deep")
        if fn & 1 or fn == sn:  # "If LSB(fn) is set, or if fn is equal to sn, then:"
            r = node_hash(p, r)
            if not fn & 1:  # "right-shift both fn and sn equally until either LSB(fn) is set or fn is 0"
                while fn and not fn & 1:
                    fn, sn = fn >> 1, sn >> 1
        else:
            r = node_hash(r, p)
        fn, sn = fn >> 1, sn >> 1  # "Finally, right-shift both fn and sn one time."
    if sn != 0:  # the log has proven the inclusion only if "sn is equal to 0" at the end
        raise Invalid("its path is shorter than the tree is deep")
    return r


# ------------------------------------------------------------------------------------------- the export

def parse_json(text: str) -> Any:
    """JSON as the export writes it: no member twice (a reader could be shown the other), no floats (the format
    never holds one: decimals are {"$decimal": "…"})."""
    def members(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        found: dict[str, Any] = {}
        for name, value in pairs:
            if name in found:
                raise Invalid(f"the member {name!r} appears twice")
            found[name] = value
        return found

    def no_float(number: str) -> Any:
        raise Invalid(f"it holds the number {number}, which the format never writes "
                      f"(decimals are {{\"$decimal\": …}})")

    try:
        return json.loads(text, object_pairs_hook=members, parse_float=no_float, parse_constant=no_float)
    except Invalid:
        raise
    except json.JSONDecodeError as error:
        raise Invalid(f"it is not JSON ({error.msg} at column {error.colno})") from None
    except (ValueError, RecursionError) as error:  # a number of thousands of digits, arrays nested thousands deep
        raise Invalid(f"it is not JSON that the format allows ({error})") from None


def document_hash(line: dict[str, Any]) -> str:
    """SHA-256 hex of the hashed document: the line without `hash`, `proof` and `signature`, as JSON with sorted
    keys, separators `,` and `:`, UTF-8 without ASCII escapes."""
    document = {name: value for name, value in line.items() if name not in UNHASHED_MEMBERS}
    encoded = json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    try:
        return hashlib.sha256(encoded.encode("utf-8")).hexdigest()
    except UnicodeEncodeError:
        raise Invalid("it holds a string that is not Unicode text (a lone surrogate)") from None


def is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


@dataclass
class Event:
    line: int
    version: int
    case_id: UUID
    hash: str
    entry: bytes


@dataclass
class Verdict:
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    case_id: UUID | None = None
    checkpoint: Checkpoint | None = None
    checkpoint_note: str | None = None
    events: int = 0
    covered: int = 0
    signed_uncovered: int = 0

    def problem(self, text: str) -> None:
        self.problems.append(text)


def parse_event(number: int, line: dict[str, Any]) -> Event:
    """An event line's identity and entry; Invalid if its `hash`, `originator_id`, `originator_version` or
    `prev_hash` is malformed."""
    stated = line.get("hash")
    if not isinstance(stated, str) or not HEX_HASH.fullmatch(stated):
        raise Invalid("its `hash` is not 64 lower-case hex digits")
    originator = line.get("originator_id")
    if not (isinstance(originator, dict) and set(originator) == {"$uuid"} and isinstance(originator["$uuid"], str)):
        raise Invalid('its `originator_id` is not {"$uuid": "…"}')
    try:
        case_id = UUID(originator["$uuid"])
    except ValueError:
        case_id = None
    if case_id is None or str(case_id) != originator["$uuid"]:
        raise Invalid("its `originator_id` is not a UUID in canonical lower-case form")
    version = line.get("originator_version")
    if not is_count(version) or not 1 <= version <= MAX_SIZE:
        raise Invalid("its `originator_version` is not a whole number from 1 (below 2^64)")
    if not isinstance(line.get("prev_hash"), str) or not HEX_HASH.fullmatch(line["prev_hash"]):
        raise Invalid("its `prev_hash` is not 64 lower-case hex digits")
    return Event(number, version, case_id, stated, case_id.bytes + version.to_bytes(8, "big") + bytes.fromhex(stated))


def parse_proof(proof: Any) -> tuple[int, int, list[bytes]]:
    if not (isinstance(proof, dict) and set(proof) == {"leaf_index", "tree_size", "hashes"}
            and is_count(proof["leaf_index"]) and is_count(proof["tree_size"]) and isinstance(proof["hashes"], list)):
        raise Invalid('its `proof` is not {"leaf_index": i, "tree_size": n, "hashes": [base64, …]}')
    path = [b64decode(step, "a step of its proof") for step in proof["hashes"]]
    if any(len(step) != 32 for step in path):
        raise Invalid("a step of its proof is not a 32-byte hash")
    return proof["leaf_index"], proof["tree_size"], path


def event_signature_problem(key: Key, entry: bytes, signature: Any) -> str | None:
    """None if `signature` is the key's signature of the event's entry, else what is wrong with it."""
    try:
        raw = b64decode(signature, "it")
    except Invalid:
        return "its signature is not base64"
    if len(raw) != 68:
        return "its signature is not 4 + 64 bytes (key ID and Ed25519 signature)"
    if raw[:4] != key.key_id:
        return f"its signature is by another key (key ID {raw[:4].hex()}), not by {key}"
    if not key.verify(EVENT_SIGNATURE_CONTEXT + entry, raw[4:]):
        return f"its signature does not verify with key {key}: the event was altered or not signed by the log"
    return None


def check_export(text: str, key: Key) -> Verdict:
    verdict = Verdict()
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # the final newline
    if not lines:
        verdict.problem("the export is empty")
        return verdict
    closing, last_is_event = _closing_line(lines[-1], verdict)
    event_lines = lines if last_is_event else lines[:-1]
    checkpoint, not_yet_covered = None, set()
    if closing is not None:
        not_yet_covered = _not_yet_covered(closing.get("not_yet_covered"), verdict)
        if closing.get("checkpoint") is None:
            verdict.notes.append("the export has no checkpoint: no event is covered by the signed log yet, so each "
                                 "must carry a valid signature")
        else:
            try:
                checkpoint = verdict.checkpoint = open_checkpoint(closing["checkpoint"], key)
                verdict.checkpoint_note = closing["checkpoint"]
                verdict.notes.append(f"checkpoint: tree size {checkpoint.size}, signed by {key}")
            except Invalid as error:
                verdict.problem(f"the checkpoint is not to be trusted: {error}; no event's proof can be checked")
    events = _check_events(event_lines, key, checkpoint, closing, not_yet_covered, verdict)
    if closing is not None:
        versions = {event.version for event in events}
        for version in sorted(not_yet_covered - versions):
            verdict.problem(f"`not_yet_covered` lists version {version}, which is not in the export: an event was "
                            "removed")
        _check_case_head(closing.get("case_head"), events[-1] if events else None, key, verdict)
    return verdict


def _closing_line(text: str, verdict: Verdict) -> tuple[dict[str, Any] | None, bool]:
    """The closing line, if the last line is one; and whether the last line is an event instead."""
    try:
        line = parse_json(text)
    except Invalid as error:
        verdict.problem(f"the last line is not the export's closing line ({error}): the file is cut short")
        return None, False
    if not isinstance(line, dict) or "checkpoint" not in line or "hash" in line:
        verdict.problem("the last line is not the export's closing line (checkpoint, case head, not_yet_covered): "
                        "the file is cut short")
        return None, isinstance(line, dict) and "hash" in line
    for name in sorted(set(line) - CLOSING_MEMBERS):
        verdict.problem(f"the closing line has a member the format does not know: {name!r}")
    for name in sorted(CLOSING_MEMBERS - set(line)):
        verdict.problem(f"the closing line lacks its {name!r} member")
    return line, False


def _not_yet_covered(listed: Any, verdict: Verdict) -> set[int]:
    if not isinstance(listed, list) or not all(is_count(v) and v >= 1 for v in listed) or len(set(listed)) != len(
            listed):
        verdict.problem("the closing line's `not_yet_covered` is not a list of distinct versions")
        return set()
    return set(listed)


def _check_events(lines: list[str], key: Key, checkpoint: Checkpoint | None, closing: dict[str, Any] | None,
                  not_yet_covered: set[int], verdict: Verdict) -> list[Event]:
    """Each event line's hash, chain, signature and proof (against `checkpoint`, the trusted one, if any)."""
    no_checkpoint = closing is not None and closing.get("checkpoint") is None
    events: list[Event] = []
    previous: Event | None = None
    last_leaf_index, first_uncovered = -1, None
    for number, text in enumerate(lines, start=1):
        where = f"line {number}"
        try:
            line = parse_json(text)
            if not isinstance(line, dict):
                raise Invalid("it is not a JSON object")
            event = parse_event(number, line)
        except Invalid as error:
            verdict.problem(f"{where}: {error}")
            previous = None
            continue
        where = f"event {event.version} (line {number})"
        events.append(event)
        verdict.case_id = verdict.case_id or event.case_id
        verdict.events += 1
        try:
            if document_hash(line) != event.hash:
                verdict.problem(f"{where}: its content does not match its hash: the event was changed after it was "
                                "recorded")
        except Invalid as error:
            verdict.problem(f"{where}: {error}")
        _check_chain(event, line["prev_hash"], previous, events[0], where, verdict)
        previous = event

        signature = line.get("signature")
        wrong = None if signature is None else event_signature_problem(key, event.entry, signature)
        if wrong:
            verdict.problem(f"{where}: {wrong}")
        proof = line.get("proof")
        if proof is not None:
            if event.version in not_yet_covered:
                verdict.problem(f"{where}: it carries a proof, yet `not_yet_covered` lists it")
            if first_uncovered is not None:
                verdict.problem(f"{where}: it carries a proof, but the earlier event {first_uncovered} has none: the "
                                "log appends a case's events in order, so that one is in the tree too")
            if no_checkpoint:
                verdict.problem(f"{where}: it carries a proof, but the export has no checkpoint to check it against")
            elif checkpoint is not None:
                leaf_index = _check_proof(event, proof, checkpoint, where, verdict)
                if leaf_index is not None:
                    if leaf_index <= last_leaf_index:
                        verdict.problem(f"{where}: its leaf index {leaf_index} is not after the previous event's: "
                                        "the log appends a case's events in order")
                    last_leaf_index = leaf_index
                    verdict.covered += 1
            continue
        if first_uncovered is None:
            first_uncovered = event.version
        if closing is not None and event.version not in not_yet_covered:
            verdict.problem(f"{where}: it has no proof and `not_yet_covered` does not list it")
        if signature is None:
            verdict.problem(f"{where}: it is not covered by the checkpoint and carries no signature: nothing shows "
                            "that the log recorded it")
        elif not wrong:
            verdict.signed_uncovered += 1
    return events


def _check_chain(event: Event, prev_hash: str, previous: Event | None, first: Event, where: str,
                 verdict: Verdict) -> None:
    if event.case_id != first.case_id:
        verdict.problem(f"{where}: its originator_id is not the case's ({first.case_id}): it belongs to another "
                        "aggregate")
    if previous is None:
        if event.line == 1 and event.version != 1:
            verdict.problem(f"{where}: the export starts at version {event.version}, not 1: its first events are "
                            "missing")
        if event.line == 1 and prev_hash != GENESIS:
            verdict.problem(f"{where}: the first event's prev_hash is not 64 zeros")
        return
    if event.version != previous.version + 1:
        if event.version > previous.version + 1:
            missing = (f"version {previous.version + 1} is" if event.version == previous.version + 2
                       else f"versions {previous.version + 1} to {event.version - 1} are")
            verdict.problem(f"{where}: it follows version {previous.version}: {missing} missing")
        else:
            verdict.problem(f"{where}: it follows version {previous.version}: an event is repeated or out of order")
    if prev_hash != previous.hash:
        verdict.problem(f"{where}: its prev_hash is not the hash of the line before (version {previous.version}): "
                        "the chain is broken")


def _check_proof(event: Event, proof: Any, checkpoint: Checkpoint, where: str, verdict: Verdict) -> int | None:
    """The event's leaf index if its proof leads to the checkpoint's root, else None (and the problem said)."""
    try:
        leaf_index, tree_size, path = parse_proof(proof)
        if tree_size != checkpoint.size:
            raise Invalid(f"its proof is for a tree of size {tree_size}, not the checkpoint's {checkpoint.size}")
        if root_from_inclusion(leaf_index, tree_size, leaf_hash(event.entry), path) != checkpoint.root:
            raise Invalid("its inclusion proof does not lead to the checkpoint's root: the event (or its proof) is "
                          "not what the signed log holds")
    except Invalid as error:
        verdict.problem(f"{where}: {error}")
        return None
    return leaf_index


def _check_case_head(note: Any, last: Event | None, key: Key, verdict: Verdict) -> None:
    if note is None:
        verdict.problem("the export has no case head: nothing shows that it ends with the case's last event")
        return
    try:
        lines = open_note(note, key).split("\n")[:-1]
        if len(lines) != 4:
            raise Invalid("its text is not four lines (origin, case id, last version, last hash)")
        origin, case_id, version, last_hash = lines
        if origin != key.name:
            raise Invalid(f"its origin {origin!r} is not the key's name {key.name!r}")
        if not re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", case_id):
            raise Invalid(f"its case id {case_id!r} is not a UUID in canonical lower-case form")
        if not DECIMAL.fullmatch(version) or version == "0" or not HEX_HASH.fullmatch(last_hash):
            raise Invalid("its last version or last hash is malformed")
    except Invalid as error:
        verdict.problem(f"the case head is not to be trusted: {error}")
        return
    if last is None:
        verdict.problem(f"the case head names version {version} of case {case_id}, but the export holds no event")
    elif UUID(case_id) != last.case_id:
        verdict.problem(f"the case head is for case {case_id}, not this export's case {last.case_id}")
    elif int(version) != last.version:
        verdict.problem(f"the case head names version {version} as the case's last, but the export ends with version "
                        f"{last.version}: the file is cut short, or events were removed or added at its end")
    elif last_hash != last.hash:
        verdict.problem(f"the case head names another hash for version {version} than the export's last event has: "
                        "the last event was replaced")


# --------------------------------------------------------------------------------------------- the program

DOCUMENTS_ATTACHED = "Case.DocumentsAttached"


def attached_documents(text: str) -> list[dict[str, Any]]:
    """The documents the export's `Case.DocumentsAttached` lines list (each with the version that lists it)."""
    found = []
    for number, line in enumerate(text.split("\n"), 1):
        try:
            document = parse_json(line) if line else None
        except ValueError:
            continue  # check_export reports it
        if isinstance(document, dict) and document.get("type") == DOCUMENTS_ATTACHED:
            for listed in document.get("documents") or []:
                if isinstance(listed, dict):
                    found.append({**listed, "listed_by": document.get("originator_version", number)})
    return found


def check_documents(listed: list[dict[str, Any]], folder: Path, verdict: Verdict) -> None:
    """Every listed document has a file in `folder` with its SHA-256 and size (the files' names do not matter)."""
    held: dict[str, int] = {}
    for path in sorted(folder.iterdir()):
        if path.is_file():
            content = path.read_bytes()
            held[hashlib.sha256(content).hexdigest()] = len(content)
    for document in listed:
        digest, where = document.get("sha256"), f"event {document['listed_by']}"
        if not isinstance(digest, str) or not HEX_HASH.fullmatch(digest):
            verdict.problem(f"{where}: a document without a SHA-256 of 64 lower-case hex digits")
        elif digest not in held:
            verdict.problem(f"{where}: no file in {folder} has the SHA-256 of {document.get('name')!r} ({digest})")
        elif held[digest] != document.get("size"):
            verdict.problem(f"{where}: {document.get('name')!r} is listed with {document.get('size')} bytes, its "
                            f"file has {held[digest]}")
    if listed and not verdict.problems:
        verdict.notes.append(f"documents: each of the {len(listed)} attached is a file of {folder} with its "
                             "SHA-256 and size")


def parse_witness_key(text: str) -> Key:
    """A witness's verifier key: `<name>+<8 hex digits>+<base64(0x04 ‖ 32-byte Ed25519 public key)>`, its key ID
    SHA-256(name ‖ 0x0A ‖ 0x04 ‖ public key)[:4] (c2sp.org/tlog-cosignature)."""
    name, _, rest = text.strip().partition("+")
    id_hex, _, material_b64 = rest.partition("+")
    if not valid_key_name(name) or not re.fullmatch(r"[0-9a-fA-F]{8}", id_hex):
        raise Invalid("it is not a witness's verifier key (<name>+<8 hex digits>+<base64 key>)")
    material = b64decode(material_b64, "the key's base64 part")
    if len(material) != 33 or material[0] != COSIGNATURE_ED25519:
        raise Invalid("it is not an Ed25519 cosignature key (0x04 followed by 32 bytes)")
    digest = hashlib.sha256(name.encode("utf-8") + b"\n" + material).digest()[:4]
    if digest != bytes.fromhex(id_hex):
        raise Invalid(f"its key ID {id_hex} does not match its name and public key")
    return Key(name, digest, material[1:])


def cosigned_by(note: str, witnesses: list[Key]) -> list[str]:
    """The witnesses (of `witnesses`) with a valid cosignature line in a signed note; other lines are ignored."""
    split = note.rfind("\n\n")
    text, block = note[:split + 1], note[split + 2:]
    found = []
    for witness in witnesses:
        for line in block[:-1].split("\n"):
            name, _, signature_b64 = line[len(SIGNATURE_PREFIX):].partition(" ")
            try:
                raw = b64decode(signature_b64, "a cosignature")
            except Invalid:
                continue
            if name != witness.name or len(raw) != 76 or raw[:4] != witness.key_id:
                continue
            timestamp = int.from_bytes(raw[4:12], "big")
            message = f"cosignature/v1\ntime {timestamp}\n".encode("ascii") + text.encode("utf-8")
            if timestamp < 2 ** 63 and witness.verify(message, raw[12:]):
                found.append(str(witness))
                break
    return found


def check_quorum(verdict: Verdict, witnesses: list[Key], quorum: int) -> None:
    if verdict.checkpoint_note is None:
        verdict.problem("the export has no checkpoint the log signed: no witness can have cosigned it")
        return
    found = cosigned_by(verdict.checkpoint_note, witnesses)
    if len(found) < quorum:
        missing = [str(w) for w in witnesses if str(w) not in found]
        verdict.problem(f"the checkpoint carries {len(found)} valid witness cosignatures of the {quorum} required "
                        f"(none valid from {', '.join(missing)}): the witnesses did not see this log, or refused it")
    else:
        verdict.notes.append(f"witnesses: the checkpoint is cosigned by {', '.join(found)} (quorum {quorum})")


def read_key(argument: str, parse: Any = None) -> Key:
    path = Path(argument)
    text = argument
    if path.is_file():
        try:
            lines = [line.strip() for line in path.read_text(encoding="utf-8").splitlines()]
        except (OSError, UnicodeDecodeError) as error:
            raise UsageError(f"cannot read the key file {argument}: {error}") from None
        text = next((line for line in lines if line and not line.startswith("#")), "")
    try:
        return (parse or parse_key)(text)
    except Invalid as error:
        raise UsageError(f"{'--witness-key' if parse else '--key'} {argument!r}: {error}") from None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Check offline that every event of a tramita case export is in the log signed by the key you "
                    "trust. Exit status: 0 all events are in the signed log, 1 a check failed, 2 a usage error.")
    parser.add_argument("export", metavar="EXPORT.jsonl", help="the case export (JSON Lines)")
    parser.add_argument("--key", required=True, metavar="VERIFIER_KEY_OR_FILE",
                        help="the log's verifier key (<name>+<8 hex digits>+<base64>), or a file holding it")
    parser.add_argument("--documents", metavar="DIR", type=Path,
                        help="a folder holding the attached documents' files: each must have its listed SHA-256")
    parser.add_argument("--witness-key", action="append", default=[], metavar="WITNESS_KEY_OR_FILE",
                        help="a witness's verifier key (<name>+<8 hex digits>+<base64 of 0x04 and the key>), or a "
                             "file holding it; repeatable")
    parser.add_argument("--quorum", type=int, metavar="N",
                        help="valid cosignatures of the --witness-key witnesses the checkpoint needs (default: all)")
    arguments = parser.parse_args(argv)
    sys.stdout.reconfigure(errors="backslashreplace")  # a console that cannot show a character still gets the verdict
    try:
        key = read_key(arguments.key)
        witnesses = [read_key(argument, parse_witness_key) for argument in arguments.witness_key]
        quorum = len(witnesses) if arguments.quorum is None else arguments.quorum
        if witnesses and not 1 <= quorum <= len(witnesses) or arguments.quorum and not witnesses:
            raise UsageError("--quorum is between 1 and the number of --witness-key given")
        try:
            data = Path(arguments.export).read_bytes()
        except OSError as error:
            raise UsageError(f"cannot read {arguments.export}: {error.strerror}") from None
    except UsageError as error:
        print(f"verify_export: {error}", file=sys.stderr)
        return 2
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        verdict = Verdict(problems=[f"the export is not UTF-8 text (byte {error.start})"])
    else:
        verdict = check_export(text, key)
        if witnesses:
            check_quorum(verdict, witnesses, quorum)
        listed = attached_documents(text)
        if arguments.documents is not None:
            if not arguments.documents.is_dir():
                print(f"verify_export: --documents {arguments.documents}: not a folder", file=sys.stderr)
                return 2
            check_documents(listed, arguments.documents, verdict)
        elif listed:
            verdict.notes.append(f"{len(listed)} documents are attached; their bytes are not in the export: pass "
                                 "--documents DIR with their files to check them")
    case = f"case {verdict.case_id}" if verdict.case_id else "no case"
    print(f"export {arguments.export}: {case}, {verdict.events} events; key {key}")
    for note in verdict.notes:
        print(f"  {note}")
    for problem in verdict.problems:
        print(f"PROBLEM: {problem}")
    if verdict.problems:
        print(f"REJECTED: {len(verdict.problems)} problem{'s' if len(verdict.problems) > 1 else ''}; the export does "
              "not show that every event is in the signed log.")
        return 1
    if verdict.checkpoint is None:
        how = "no checkpoint yet, and each of them signed by the log's key"
    else:
        how = (f"{verdict.covered} covered by the checkpoint of tree size {verdict.checkpoint.size}, "
               f"{verdict.signed_uncovered} not yet covered and signed by the log's key")
    print(f"VERIFIED: all {verdict.events} events are in the log signed by {key}: {how}.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
