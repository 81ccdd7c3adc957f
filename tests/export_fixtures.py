"""A synthetic but realistic case export in the published format, and the alterations the offline verifier
(docs/audit/verify_export.py) must refuse.

`build_export()` makes one creation case of 12 acts mixed among 40 leaves of other aggregates in a log of 52 leaves,
with the project's own modules: each event's document and hash by `domain.chain`'s recipe, the tree and its proofs
by `audit.merkle`, the checkpoint, the case head and the event signatures by `audit.notes.Signer`. The checkpoint
covers the case's first 10 events; the last 2, appended after it, are listed in `not_yet_covered` and signed.

The alterations take an export's lines (dicts, the closing line last) and return an altered copy, so they apply as
they are to an export from the application:
`write_export(path, change_field(read_export(path), 3, "document", "Laudo forjado"))`.
"""

from __future__ import annotations

import base64
import copy
import hashlib
import json
import random
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any
from uuid import UUID, uuid5

from audit.merkle import inclusion_proof, leaf_hash, root_of, subtree_of
from audit.notes import EVENT_SIGNATURE_CONTEXT, Checkpoint, Signer
from domain import chain

UNHASHED = ("hash", "proof", "signature")
LOG_NAME = "tramita.example/acre"
LOG_SIGNER = Signer(LOG_NAME, hashlib.sha256(b"tramita offline verifier tests: the log key").digest())
FORGER = Signer(LOG_NAME, hashlib.sha256(b"tramita offline verifier tests: a forger's key of the same name").digest())
CASE_ID = uuid5(UUID("5777026c-28cb-51c0-922b-acc89b7d0b06"), "LC35-2026-0007")
EVENTS, OTHER_LEAVES, COVERED = 12, 40, 10

# The case's acts: (event type, legal date, actor role, article, payload).
ACTS: list[tuple[str, date, str, str, dict[str, Any]]] = [
    ("Case.PetitionFiled", date(2026, 2, 2), "governor", "art-8", {
        "number": "LC35-2026-0007", "kind": "creation", "initiator": "governor", "municipalities": ["1200385"],
        "receiving": None, "areas": [{"municipality": "1200385", "district": None, "area_km2": Decimal("312.75"),
                                      "description": "Vila Campinas, às margens do rio Iaco"}],
        "proposed_name": "Campinas do Iaco", "district": None, "signatures": [],
        "documents": {"art-4-I": "Ofício GG 7/2026", "art-4-II": "Ofício GG 8/2026"}, "impediments": [],
        "freezes": ["1200385"]}),
    ("Case.FindingRecorded", date(2026, 2, 9), "ibge", "art-4-I", {
        "item": "art-4-I", "body": "ibge", "value": 3100, "by_origin": {"1200385": 3100}, "state_tax_revenue": None,
        "document": "Laudo IBGE 12/2026", "holds": None}),
    ("Case.FindingRecorded", date(2026, 2, 10), "tre", "art-4-II", {
        "item": "art-4-II", "body": "tre", "value": 1350, "by_origin": {"1200385": 1350}, "state_tax_revenue": None,
        "document": "Certidão TRE-AC 31/2026", "holds": None}),
    ("Case.FindingRecorded", date(2026, 2, 11), "sefaz", "art-4-III", {
        "item": "art-4-III", "body": "sefaz", "value": Decimal("118000.00"),
        "by_origin": {"1200385": Decimal("118000.00")}, "state_tax_revenue": Decimal("41000000.00"),
        "document": "Parecer SEFAZ 5/2026", "holds": None}),
    ("Case.RequirementsVerified", date(2026, 2, 16), "sectma", "art-5", {
        "verdicts": {"art-4-I": True, "art-4-II": True, "art-4-III": True}, "remainders": {}}),
    ("Case.PlebisciteDecreed", date(2026, 2, 23), "assembly-president", "art-11", {
        "decree": "Decreto Legislativo 4/2026"}),
    ("Case.PlebisciteScheduled", date(2026, 2, 27), "tre", "art-12", {
        "resolution": "Resolução TRE-AC 18/2026", "plebiscite_date": date(2026, 4, 12)}),
    ("Case.PlebisciteResultHomologated", date(2026, 4, 14), "tre", "art-13", {
        "voted_on": date(2026, 4, 12), "populations": {"area": {
            "registered": 1350, "turnout": 1012, "yes": 870, "no": 119, "blank": 15, "void": 8}},
        "favourable": True, "reasons": [], "seat": None}),
    ("Case.DeadlineOpened", date(2026, 4, 14), "tre", "art-14", {
        "deadline": "result-communication", "rule": "result-communication", "who": "tre", "municipality": None,
        "starts_on": date(2026, 4, 14), "due_on": date(2026, 4, 29), "raw_due_on": date(2026, 4, 29),
        "convention": "lei-9784-art-66", "calendar_version": "holidays-0.109+corrections-2026.1", "moved_over": []}),
    ("Case.ResultCommunicated", date(2026, 4, 15), "tre", "art-14", {}),
    ("Case.DeadlineMet", date(2026, 4, 15), "tre", "art-14", {
        "deadline": "result-communication", "closing_act": "result-communicated", "on_time": True, "days_late": 0}),
    ("Case.ResultRegisteredInPlenary", date(2026, 4, 16), "assembly-president", "art-15", {
        "governor_informed": True}),
]


def entry_of(originator_id: UUID, version: int, hash_hex: str) -> bytes:
    """An event's 56-byte leaf entry: the UUID's 16 bytes, the version as 8 bytes big-endian, the 32-byte hash."""
    return originator_id.bytes + version.to_bytes(8, "big") + bytes.fromhex(hash_hex)


def entry_of_line(line: dict[str, Any]) -> bytes:
    return entry_of(UUID(line["originator_id"]["$uuid"]), line["originator_version"], line["hash"])


def line_hash(line: dict[str, Any]) -> str:
    """The hash of an export line's document, by `domain.chain`'s recipe (the line is already canonical)."""
    fields = {name: value for name, value in line.items() if name not in (*UNHASHED, "type")}
    return hashlib.sha256(chain.canonical_bytes(line["type"], fields)).hexdigest()


def case_head(signer: Signer, line: dict[str, Any]) -> str:
    """The signed case head for an export ending with `line`: origin, case id, last version, last hash."""
    return signer.sign_note(f"{signer.name}\n{line['originator_id']['$uuid']}\n{line['originator_version']}\n"
                            f"{line['hash']}\n")


@dataclass
class SyntheticExport:
    lines: list[dict[str, Any]]
    """The event lines, then the closing line."""
    signer: Signer
    checkpoint_size: int | None
    leaf_indexes: list[int]
    """Each event's position in the log (by version order)."""

    @property
    def verifier_key(self) -> str:
        return str(self.signer.verifier)


def build_export(*, signer: Signer = LOG_SIGNER, checkpoint: bool = True, signed: str = "all",
                 positions: list[int] | None = None) -> SyntheticExport:
    """The case's export. `checkpoint=False`: the log has signed no checkpoint yet, so no event has a proof.
    `signed`: "all" events carry a signature (made when each is recorded), or only the "uncovered" ones.
    `positions`: each event's leaf index in the log (by default increasing with the version, as the log appends)."""
    events, previous = [], chain.GENESIS
    recorded = datetime(2026, 2, 2, 13, 5, tzinfo=UTC)
    for version, (event_type, occurred_on, role, article, payload) in enumerate(ACTS, start=1):
        fields = {"timestamp": recorded + timedelta(days=version, minutes=7 * version), "occurred_on": occurred_on,
                  "actor": {"principal": f"{role}-servidor", "role": role, "municipality": None},
                  "article": article, "rule_versions": {}, "prev_hash": previous, **payload,
                  "originator_id": CASE_ID, "originator_version": version}
        previous = chain.event_hash(event_type, fields)
        events.append({**chain.canonical_document(event_type, fields), "hash": previous})

    # The log: the case's events among other aggregates' (tokens, alerts, other cases), in the order stored.
    positions = positions or sorted(random.Random(1991).sample(range(EVENTS + OTHER_LEAVES), EVENTS))
    others = iter(entry_of(uuid5(CASE_ID, f"other aggregate {i % 7}"), 1 + i // 7,
                           hashlib.sha256(b"other event %d" % i).hexdigest()) for i in range(OTHER_LEAVES))
    case_entries = {index: entry_of_line(line) for index, line in zip(positions, events)}
    leaves = [leaf_hash(case_entries[i] if i in case_entries else next(others)) for i in range(EVENTS + OTHER_LEAVES)]
    size = min(positions[COVERED:]) if checkpoint else None  # the tree just before the case's 11th event
    subtree = subtree_of(leaves)

    for version, (line, index) in enumerate(zip(events, positions), start=1):
        covered = size is not None and index < size
        line["proof"] = None if not covered else {
            "leaf_index": index, "tree_size": size,
            "hashes": [base64.b64encode(h).decode() for h in inclusion_proof(index, size, subtree)]}
        if signed == "all" or not covered:
            line["signature"] = signer.sign_event(entry_of_line(line))
    closing = {
        "checkpoint": signer.sign_note(Checkpoint(signer.name, size, root_of(leaves[:size])).text()) if size else None,
        "case_head": case_head(signer, events[-1]),
        "not_yet_covered": [line["originator_version"] for line in events if line["proof"] is None],
    }
    return SyntheticExport([*events, closing], signer, size, positions)


def read_export(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines()]


def export_text(lines: list[dict[str, Any]]) -> str:
    """As the application writes an export: one JSON object a line, sorted keys, not ASCII-escaped."""
    return "".join(json.dumps(line, ensure_ascii=False, sort_keys=True) + "\n" for line in lines)


def write_export(path: Path, lines: list[dict[str, Any]]) -> Path:
    Path(path).write_text(export_text(lines), encoding="utf-8")
    return Path(path)


# ------------------------------------------------------------------------------------------- alterations

def _events_and_closing(lines: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    lines = copy.deepcopy(lines)
    return lines[:-1], lines[-1]


def _version(events: list[dict[str, Any]], version: int) -> dict[str, Any]:
    [line] = [line for line in events if line["originator_version"] == version]
    return line


def change_field(lines: list[dict[str, Any]], version: int, name: str, value: Any, *,
                 rehash: bool = False) -> list[dict[str, Any]]:
    """One event's field changed; `rehash`: its `hash` recomputed too, as a forger who knows the recipe would."""
    events, closing = _events_and_closing(lines)
    line = _version(events, version)
    line[name] = value
    if rehash:
        line["hash"] = line_hash(line)
    return [*events, closing]


def drop_event(lines: list[dict[str, Any]], version: int) -> list[dict[str, Any]]:
    events, closing = _events_and_closing(lines)
    return [line for line in events if line["originator_version"] != version] + [closing]


def change_proof_step(lines: list[dict[str, Any]], version: int, step: int = 0) -> list[dict[str, Any]]:
    """One bit of one hash of an event's inclusion proof flipped."""
    events, closing = _events_and_closing(lines)
    hashes = _version(events, version)["proof"]["hashes"]
    raw = bytearray(base64.b64decode(hashes[step]))
    raw[0] ^= 0x01
    hashes[step] = base64.b64encode(bytes(raw)).decode()
    return [*events, closing]


def change_checkpoint_signature(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One bit of the checkpoint's Ed25519 signature flipped (its key hash kept, so the key is still recognised)."""
    events, closing = _events_and_closing(lines)
    text, _, signature_line = closing["checkpoint"].rstrip("\n").rpartition("\n")
    prefix, _, signature = signature_line.rpartition(" ")
    raw = bytearray(base64.b64decode(signature))
    raw[-1] ^= 0x01
    closing["checkpoint"] = f"{text}\n{prefix} {base64.b64encode(bytes(raw)).decode()}\n"
    return [*events, closing]


def cut_short(lines: list[dict[str, Any]], keep: int) -> list[dict[str, Any]]:
    """Only the first `keep` events, and `not_yet_covered` trimmed to them: a file that ends early, with nothing
    left to show it but the case head."""
    events, closing = _events_and_closing(lines)
    kept = events[:keep]
    versions = {line["originator_version"] for line in kept}
    closing["not_yet_covered"] = [v for v in closing["not_yet_covered"] if v in versions]
    return [*kept, closing]


def strip_signature(lines: list[dict[str, Any]], version: int) -> list[dict[str, Any]]:
    events, closing = _events_and_closing(lines)
    del _version(events, version)["signature"]
    return [*events, closing]


def forged_signature(lines: list[dict[str, Any]], entry: bytes) -> str:
    """A signature that claims the log's key (its key ID, read from an event's signature or the case head's) but is
    made with `FORGER`'s: what a forger without the log's private key can best do."""
    signature = next((line["signature"] for line in lines[:-1] if line.get("signature")), None)
    signature = signature or lines[-1]["case_head"].rstrip("\n").rpartition(" ")[2]
    key_id = base64.b64decode(signature)[:4]
    return base64.b64encode(key_id + FORGER.sign(EVENT_SIGNATURE_CONTEXT + entry)).decode()


def append_forged_event(lines: list[dict[str, Any]], *, signed: bool = True) -> list[dict[str, Any]]:
    """A forged act appended after the last event: its hash and chain right, listed as not yet covered, and carrying
    a `forged_signature` (or none, `signed=False`)."""
    events, closing = _events_and_closing(lines)
    last = events[-1]
    forged = {"type": "Case.CaseArchived", "timestamp": {"$datetime": "2026-04-20T09:00:00+00:00"},
              "occurred_on": {"$date": "2026-04-20"},
              "actor": {"principal": "assembly-president-servidor", "role": "assembly-president",
                        "municipality": None},
              "article": "art-19", "rule_versions": {}, "prev_hash": last["hash"],
              "originator_id": last["originator_id"], "originator_version": last["originator_version"] + 1,
              "proof": None}
    forged["hash"] = line_hash(forged)
    if signed:
        forged["signature"] = forged_signature(lines, entry_of_line(forged))
    closing["not_yet_covered"] = [*closing["not_yet_covered"], forged["originator_version"]]
    return [*events, forged, closing]
