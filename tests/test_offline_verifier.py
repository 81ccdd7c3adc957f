"""The standalone offline verifier, docs/audit/verify_export.py, run as a third party runs it: on an export built with
the project's own modules (tests/export_fixtures.py) it says VERIFIED and exits 0, and on each altered copy it names
the problem and exits 1. Its re-implementations are held to the published vectors and to `audit.merkle`.
"""

from __future__ import annotations

import ast
import base64
import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from audit import merkle
from tests import export_fixtures as fx
from tests.test_audit_merkle import INCLUSION_PROOFS, REFERENCE_LEAVES, ROOT_HASHES
from tests.test_audit_notes import (
    ENOCH_SIGNATURE,
    ENOCH_VERIFIER_KEY,
    PETER_NOTE,
    PETER_TEXT,
    PETER_VERIFIER_KEY,
    SUMDB_CHECKPOINT,
    SUMDB_VERIFIER_KEY,
    manglings,
)

VERIFIER = Path(__file__).resolve().parents[1] / "docs" / "audit" / "verify_export.py"


def _load_verifier():
    spec = importlib.util.spec_from_file_location("verify_export", VERIFIER)
    module = sys.modules["verify_export"] = importlib.util.module_from_spec(spec)  # dataclasses look it up there
    spec.loader.exec_module(module)
    return module


verify_export = _load_verifier()


GENUINE = fx.build_export()
GENUINE_TEXT = fx.export_text(GENUINE.lines)
GENUINE_KEY = verify_export.parse_key(GENUINE.verifier_key)


def run(export: Path, key: str) -> subprocess.CompletedProcess:
    """The verifier as an auditor runs it."""
    return subprocess.run([sys.executable, str(VERIFIER), str(export), "--key", key], capture_output=True, text=True,
                          timeout=120)


@pytest.fixture
def genuine() -> fx.SyntheticExport:
    return GENUINE


def problems(result: subprocess.CompletedProcess) -> list[str]:
    return [line.removeprefix("PROBLEM: ") for line in result.stdout.splitlines() if line.startswith("PROBLEM: ")]


def assert_rejected(result: subprocess.CompletedProcess, *expected: list[str]) -> None:
    """Exit status 1, a REJECTED verdict, and for each `expected` list of words a problem that holds them all."""
    assert result.returncode == 1, result.stdout + result.stderr
    assert "REJECTED" in result.stdout and "VERIFIED" not in result.stdout
    found = problems(result)
    for words in expected:
        assert any(all(word in problem for word in words) for problem in found), (words, found)


# ------------------------------------------------------------------------------------------ it stands alone

def test_the_verifier_imports_only_the_standard_library_and_cryptography():
    tree = ast.parse(VERIFIER.read_text(encoding="utf-8"))
    imported = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import)
                for alias in node.names}
    imported |= {node.module.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert imported - set(sys.stdlib_module_names) == {"cryptography"}


def test_the_verifier_runs_from_a_folder_of_its_own(genuine, tmp_path):
    alone = tmp_path / "auditor"
    alone.mkdir()
    program = Path(shutil.copy(VERIFIER, alone / "verify_export.py"))
    export = fx.write_export(alone / "LC35-2026-0007.jsonl", genuine.lines)
    result = subprocess.run([sys.executable, "-I", program.name, export.name, "--key", genuine.verifier_key],
                            capture_output=True, text=True, cwd=alone, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "VERIFIED" in result.stdout


def test_its_docstring_opens_with_how_to_run_it():
    usage = verify_export.__doc__.split("Usage:", 1)[1][:400]
    assert "python verify_export.py EXPORT.jsonl --key VERIFIER_KEY_OR_FILE" in usage


# ------------------------------------------------------------------------------------------ genuine exports

def test_a_genuine_export_is_verified(genuine, tmp_path):
    result = run(fx.write_export(tmp_path / "export.jsonl", genuine.lines), genuine.verifier_key)
    assert result.returncode == 0, result.stdout
    assert problems(result) == []
    assert f"case {fx.CASE_ID}, 12 events" in result.stdout
    assert (f"VERIFIED: all 12 events are in the log signed by {genuine.signer.verifier.name}+"
            f"{genuine.signer.verifier.hash:08x}: 10 covered by the checkpoint of tree size {genuine.checkpoint_size}, "
            "2 not yet covered and signed by the log's key.") in result.stdout


def test_the_genuine_export_mixes_the_case_among_other_aggregates_and_covers_its_first_ten_events(genuine):
    events, closing = genuine.lines[:-1], genuine.lines[-1]
    assert len(events) == 12 and genuine.leaf_indexes[-1] < 52
    assert genuine.leaf_indexes != list(range(12))
    assert [line["proof"] is not None for line in events] == [True] * 10 + [False] * 2
    assert closing["not_yet_covered"] == [11, 12]
    assert genuine.leaf_indexes[9] < genuine.checkpoint_size <= genuine.leaf_indexes[10]


def test_an_export_whose_covered_events_carry_no_signature_is_verified(tmp_path):
    export = fx.build_export(signed="uncovered")
    assert [("signature" in line) for line in export.lines[:-1]] == [False] * 10 + [True] * 2
    result = run(fx.write_export(tmp_path / "export.jsonl", export.lines), export.verifier_key)
    assert result.returncode == 0, result.stdout
    assert "10 covered by the checkpoint" in result.stdout


def test_an_export_without_a_checkpoint_is_verified_when_every_event_is_signed(tmp_path):
    export = fx.build_export(checkpoint=False)
    result = run(fx.write_export(tmp_path / "export.jsonl", export.lines), export.verifier_key)
    assert result.returncode == 0, result.stdout
    assert "no event is covered by the signed log yet" in result.stdout
    assert "no checkpoint yet, and each of them signed by the log's key" in result.stdout


def test_an_export_without_a_checkpoint_is_rejected_when_an_event_is_unsigned(tmp_path):
    export = fx.build_export(checkpoint=False)
    result = run(fx.write_export(tmp_path / "export.jsonl", fx.strip_signature(export.lines, 5)), export.verifier_key)
    assert_rejected(result, ["event 5", "not covered", "carries no signature"])


def test_the_key_may_be_given_in_a_file(genuine, tmp_path):
    key_file = tmp_path / "tramita.vkey"
    key_file.write_text(f"# the log's verifier key, as published\n{genuine.verifier_key}\n", encoding="utf-8")
    result = run(fx.write_export(tmp_path / "export.jsonl", genuine.lines), str(key_file))
    assert result.returncode == 0, result.stdout + result.stderr


# ------------------------------------------------------------------------------------------ altered exports

ALTERATIONS = {
    "an event's field changed": (
        lambda lines: fx.change_field(lines, 4, "document", "Laudo forjado"),
        [["event 4", "does not match its hash"]]),
    "an event's field changed and its hash recomputed": (
        lambda lines: fx.change_field(lines, 4, "document", "Laudo forjado", rehash=True),
        [["event 4", "inclusion proof does not lead to the checkpoint's root"],
         ["event 4", "signature does not verify"], ["event 5", "prev_hash", "chain is broken"]]),
    "an event in the middle dropped": (
        lambda lines: fx.drop_event(lines, 6),
        [["event 7", "follows version 5", "version 6 is missing"], ["event 7", "chain is broken"]]),
    "the last event dropped": (
        lambda lines: fx.drop_event(lines, 12),
        [["case head", "version 12", "ends with version 11"], ["not_yet_covered", "version 12", "not in the export"]]),
    "a proof step changed": (
        lambda lines: fx.change_proof_step(lines, 3, step=1),
        [["event 3", "inclusion proof does not lead to the checkpoint's root"]]),
    "the checkpoint's signature changed": (
        fx.change_checkpoint_signature,
        [["checkpoint", "signature", "does not verify"]]),
    "the file cut short": (
        lambda lines: fx.cut_short(lines, keep=10),
        [["case head", "version 12", "ends with version 10", "cut short"]]),
    "an uncovered event without its signature": (
        lambda lines: fx.strip_signature(lines, 11),
        [["event 11", "not covered by the checkpoint", "carries no signature"]]),
    "a covered event's signature made by another key of the log's name": (
        lambda lines: fx.change_field(lines, 2, "signature", fx.FORGER.sign_event(fx.entry_of_line(lines[1]))),
        [["event 2", "signature is by another key"]]),
    "a covered event's signature forged under the log's key ID": (
        lambda lines: fx.change_field(lines, 2, "signature", fx.forged_signature(lines, fx.entry_of_line(lines[1]))),
        [["event 2", "signature does not verify"]]),
    "a forged event appended with a correct hash and a forged signature": (
        fx.append_forged_event,
        [["event 13", "signature does not verify"], ["case head", "version 12", "ends with version 13"]]),
    "a forged event appended with a correct hash and no signature": (
        lambda lines: fx.append_forged_event(lines, signed=False),
        [["event 13", "carries no signature"], ["case head", "ends with version 13"]]),
    "a covered event's proof removed": (
        lambda lines: fx.change_field(lines, 5, "proof", None),
        [["event 5", "no proof", "does not list it"], ["event 6", "carries a proof", "earlier event 5 has none"]]),
    "a proof for another tree size": (
        lambda lines: fx.change_field(lines, 3, "proof", {**lines[2]["proof"], "tree_size": 52}),
        [["event 3", "tree of size 52", "not the checkpoint's"]]),
    "two events swapped": (
        lambda lines: [*lines[:2], lines[3], lines[2], *lines[4:]],
        [["event 4", "follows version 2", "version 3 is missing"], ["event 3", "follows version 4", "out of order"]]),
    "a decimal written as a JSON number": (
        lambda lines: fx.change_field(lines, 4, "value", 118000.5),
        [["line 4", "number 118000.5", "$decimal"]]),
}


@pytest.mark.parametrize("alteration", ALTERATIONS)
def test_an_altered_export_is_rejected_with_its_problem_named(genuine, tmp_path, alteration):
    alter, expected = ALTERATIONS[alteration]
    altered = alter(genuine.lines)
    assert altered != genuine.lines
    assert_rejected(run(fx.write_export(tmp_path / "altered.jsonl", altered), genuine.verifier_key), *expected)


def test_an_export_whose_log_holds_the_case_out_of_version_order_is_rejected(tmp_path):
    positions = fx.build_export().leaf_indexes
    positions[2], positions[3] = positions[3], positions[2]  # version 4 appended before version 3
    export = fx.build_export(positions=positions)
    result = run(fx.write_export(tmp_path / "export.jsonl", export.lines), export.verifier_key)
    assert_rejected(result, ["event 4", f"leaf index {positions[3]}", "not after the previous event's"])


def test_an_export_checked_with_another_key_is_rejected(genuine, tmp_path):
    export = fx.write_export(tmp_path / "export.jsonl", genuine.lines)
    other = str(fx.FORGER.verifier)  # the log's name, another key
    assert_rejected(run(export, other), ["checkpoint", "no signature by"], ["case head", "no signature by"],
                    ["event 1", "signature is by another key"], ["event 12", "signature is by another key"])


def test_a_file_cut_in_the_middle_of_a_line_is_rejected(genuine, tmp_path):
    export = fx.write_export(tmp_path / "export.jsonl", genuine.lines)
    text = export.read_text(encoding="utf-8")
    export.write_text(text[:text.index("\n", len(text) // 2) - 40], encoding="utf-8")
    assert_rejected(run(export, genuine.verifier_key), ["last line", "cut short"])


def test_an_event_line_holding_a_member_twice_is_rejected(genuine, tmp_path):
    """JSON readers disagree on which of two equal names wins: the hashed one could be hidden behind the other."""
    export = fx.write_export(tmp_path / "export.jsonl", genuine.lines)
    lines = export.read_text(encoding="utf-8").splitlines(keepends=True)
    lines[3] = lines[3].replace('{"actor"', '{"document": "Laudo forjado", "actor"', 1)
    export.write_text("".join(lines), encoding="utf-8")
    assert_rejected(run(export, genuine.verifier_key), ["line 4", "'document' appears twice"])


def test_an_export_that_is_not_utf8_is_rejected(genuine, tmp_path):
    export = fx.write_export(tmp_path / "export.jsonl", genuine.lines)
    export.write_bytes(export.read_bytes().replace("às".encode(), b"\xe0s", 1))
    assert_rejected(run(export, genuine.verifier_key), ["not UTF-8"])


def _event_identities(text: str) -> list[tuple]:
    """The events' ids, versions and hashes, the text cut into lines at "\n" only, as the verifier cuts it (a
    carriage return between two members is JSON's whitespace, where `str.splitlines` would end a line)."""
    lines = [json.loads(line) for line in text.removesuffix("\n").split("\n")]
    return [(line["originator_id"]["$uuid"], line["originator_version"], line["hash"]) for line in lines[:-1]]


@st.composite
def changed_texts(draw) -> str:
    """The genuine export's text with one change: a character replaced, a span deleted or repeated, two lines
    swapped, or the text cut."""
    text, lines = GENUINE_TEXT, GENUINE_TEXT.splitlines(keepends=True)
    kind = draw(st.sampled_from(["replace", "delete", "repeat", "swap", "cut"]))
    at = draw(st.integers(0, len(text) - 1))
    if kind == "replace":
        character = draw(st.sampled_from('0123456789abcdef{}[]":,. +/=\\n\t\\u2014') | st.characters())
        return text[:at] + character + text[at + 1:]
    if kind == "cut":
        return text[:at]
    if kind == "swap":
        i, j = draw(st.lists(st.integers(0, len(lines) - 1), min_size=2, max_size=2, unique=True))
        lines[i], lines[j] = lines[j], lines[i]
        return "".join(lines)
    length = draw(st.integers(1, 80))
    return text[:at] + text[at + length:] if kind == "delete" else text[:at + length] + text[at:]


@settings(max_examples=300, deadline=None)
@given(changed_texts())
def test_no_change_to_an_export_crashes_the_verifier_or_passes_other_events_off_as_signed(text):
    verdict = verify_export.check_export(text, GENUINE_KEY)
    if not verdict.problems:  # a change it accepts leaves the same events: spacing, or base64's unused bits
        assert _event_identities(text) == _event_identities(GENUINE_TEXT)


@pytest.mark.parametrize("change", [
    lambda text: text.replace("tramita.example/acre\\n", "tramita.example/acre\\ud800\\n", 1),
    lambda text: text.replace('"rule_versions": {}', '"rule_versions": ' + "[" * 5000 + "]" * 5000, 1),
    lambda text: text.replace('"days_late": 0', '"days_late": ' + "9" * 5000, 1),
], ids=["a lone surrogate in a note", "arrays nested 5000 deep", "a number of 5000 digits"])
def test_a_hostile_export_is_rejected_not_crashed_on(change):
    text = change(GENUINE_TEXT)
    assert text != GENUINE_TEXT
    assert verify_export.check_export(text, GENUINE_KEY).problems


# ---------------------------------------------------------------------------------------------- usage errors

def test_a_missing_export_is_a_usage_error(genuine, tmp_path):
    result = run(tmp_path / "nowhere.jsonl", genuine.verifier_key)
    assert result.returncode == 2
    assert "cannot read" in result.stderr


def test_a_malformed_key_is_a_usage_error(genuine, tmp_path):
    export = fx.write_export(tmp_path / "export.jsonl", genuine.lines)
    result = run(export, genuine.verifier_key[:-4])
    assert result.returncode == 2
    assert "--key" in result.stderr and result.stdout == ""


def test_a_call_without_the_key_is_a_usage_error(tmp_path):
    result = subprocess.run([sys.executable, str(VERIFIER), str(tmp_path / "export.jsonl")], capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 2
    assert "--key" in result.stderr


# --------------------------------------------------------------- its re-implementations, against the vectors

@pytest.mark.parametrize(("index", "size", "path"), INCLUSION_PROOFS)
def test_the_verifiers_inclusion_check_reaches_each_published_root(index, size, path):
    assert verify_export.leaf_hash(b"") == REFERENCE_LEAVES[0]
    assert verify_export.root_from_inclusion(index, size, REFERENCE_LEAVES[index], path) == ROOT_HASHES[size]


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 300), st.integers(0, 300), st.binary(min_size=32, max_size=32),
       st.lists(st.binary(min_size=32, max_size=32), max_size=12))
def test_the_verifiers_inclusion_check_agrees_with_audit_merkle_on_any_path(index, size, leaf, path):
    def outcome(root_from_inclusion, error):
        try:
            return root_from_inclusion(index, size, leaf, path)
        except error:
            return "refused"

    assert (outcome(verify_export.root_from_inclusion, verify_export.Invalid)
            == outcome(merkle.root_from_inclusion, merkle.ProofError))


def test_the_verifier_opens_the_go_note_packages_example_with_either_key():
    note = PETER_NOTE + ENOCH_SIGNATURE
    assert verify_export.open_note(PETER_NOTE, verify_export.parse_key(PETER_VERIFIER_KEY)) == PETER_TEXT
    assert verify_export.open_note(note, verify_export.parse_key(ENOCH_VERIFIER_KEY)) == PETER_TEXT
    with pytest.raises(verify_export.Invalid):
        verify_export.open_note(PETER_NOTE, verify_export.parse_key(ENOCH_VERIFIER_KEY))


def test_the_verifier_refuses_every_mangling_of_the_published_verifier_key():
    accepted = []
    for mangled in manglings(PETER_VERIFIER_KEY):
        try:
            verify_export.parse_key(mangled)
        except verify_export.Invalid:
            continue
        accepted.append(mangled)
    assert accepted == []


def test_the_verifier_refuses_a_note_with_a_bad_signature_by_its_key_beside_a_good_one():
    """C2SP signed-note: "If a signature from a known key fails to verify, clients SHOULD reject the whole note."""
    [signature_line] = [line for line in PETER_NOTE.splitlines() if line.startswith("—")]
    name_and_blob = signature_line.rsplit(" ", 1)
    raw = bytearray(base64.b64decode(name_and_blob[1]))
    raw[-1] ^= 1
    bad = f"{name_and_blob[0]} {base64.b64encode(bytes(raw)).decode()}\n"
    with pytest.raises(verify_export.Invalid, match="does not verify"):
        verify_export.open_note(PETER_NOTE + bad, verify_export.parse_key(PETER_VERIFIER_KEY))


def test_the_verifier_opens_the_sum_golang_org_checkpoint_but_not_as_a_checkpoint_of_its_key():
    key = verify_export.parse_key(SUMDB_VERIFIER_KEY)
    assert verify_export.open_note(SUMDB_CHECKPOINT, key).startswith("go.sum database tree\n6476701\n")
    with pytest.raises(verify_export.Invalid, match="origin"):
        verify_export.open_checkpoint(SUMDB_CHECKPOINT, key)


@pytest.mark.parametrize(("size", "accepted"), [("0", True), ("52", True), ("18446744073709551615", True),
                                                ("18446744073709551616", False), ("052", False), ("-1", False)])
def test_the_verifier_reads_a_checkpoint_size_as_c2sp_and_uint64_allow(size, accepted):
    signer = fx.LOG_SIGNER
    note = signer.sign_note(f"{signer.name}\n{size}\n{base64.b64encode(bytes(32)).decode()}\n")
    key = verify_export.parse_key(str(signer.verifier))
    if accepted:
        assert verify_export.open_checkpoint(note, key).size == int(size)
    else:
        with pytest.raises(verify_export.Invalid, match="tree size"):
            verify_export.open_checkpoint(note, key)
