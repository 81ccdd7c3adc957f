"""What `tramita verify` prints: the verdict in plain words, naming the case, the event and the kind of
tampering; and reading the files an auditor hands it (checkpoints kept outside, receipts)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from audit.verdict import Verdict

KIND_WORDS = {
    "altered": "ALTERED", "deleted": "DELETED", "inserted": "INSERTED", "rewritten": "REWRITTEN",
    "reordered": "REORDERED", "forged": "FORGED", "unsigned": "UNSIGNED", "checkpoint": "CHECKPOINT", "fork": "FORK",
    "tree": "TREE",
}


def read_checkpoints(paths: list[str]) -> list[tuple[str, str]]:
    """(source, note) of each checkpoint file given, or of each file in a folder given."""
    found = []
    for given in paths:
        path = Path(given)
        files = sorted(p for p in path.iterdir() if p.is_file()) if path.is_dir() else [path]
        for file in files:
            try:
                found.append((f"kept outside in {file}", file.read_text(encoding="utf-8")))
            except (OSError, UnicodeDecodeError) as error:
                raise ValueError(f"--checkpoint: cannot read {file}: {error}") from None
    return found


def read_receipt(path: str) -> str:
    """The signed note of a receipt file: the note itself, or an act's JSON answer (or its `receipt` member)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise ValueError(f"--receipt: cannot read {path}: {error}") from None
    if text.lstrip().startswith("{"):
        try:
            document: Any = json.loads(text)
        except json.JSONDecodeError as error:
            raise ValueError(f"--receipt: {path} is neither a signed note nor JSON: {error}") from None
        document = document.get("receipt", document) if isinstance(document, dict) else None
        note = document.get("note") if isinstance(document, dict) else None
        if not isinstance(note, str):
            raise ValueError(f"--receipt: {path} holds no receipt note (`receipt.note`)")
        return note
    return text


def store_verdict(verdict: Verdict) -> str:
    lines = []
    for finding in (f for f in verdict.findings if f.kind == "altered"):
        lines.append(f"{finding.label}: {finding.events} events, ALTERED at event {finding.version} "
                     f"({finding.event_type}): {finding.message}")
    chains = verdict.aggregates
    lines.append(f"verified {chains} chains: {chains - verdict.altered_chains} intact, "
                 f"{verdict.altered_chains} altered")
    verified = [c for c in verdict.checkpoints if c.verified]
    if verified:
        sizes = sorted({c.size for c in verified})
        lines.append(f"checkpoints: {len(verified)} with a valid signature (sizes {sizes[0]}..{sizes[-1]}); the "
                     f"tree rebuilt from the {verdict.events} stored events "
                     + (f"matches every one up to size {verdict.covered}" if verdict.covered else "matches none"))
    if verdict.unsigned_covered:
        lines.append(f"{verdict.unsigned_covered} events carry no signature (recorded before the signing key "
                     "existed): the checkpoints cover them instead")
    lines.append(f"not yet covered by a checkpoint: {verdict.not_yet_covered} events"
                 + (f" ({verdict.signatures_checked} signatures checked)" if verdict.signatures_checked else ""))
    if verdict.signatures_in_form:
        lines.append(f"{verdict.signatures_in_form} signatures under the checkpoints were checked for their form only "
                     "(the checkpoints bind those events; --all-signatures checks each one)")
    lines += [f"warning: {warning}" for warning in verdict.warnings]
    others = [f for f in verdict.findings if f.kind != "altered"]
    if verdict.ok:
        lines.append("VERDICT: intact: every stored event is as recorded and nothing signed was removed")
    else:
        count = len(verdict.findings) + verdict.more_findings
        lines.append(f"VERDICT: TAMPERING FOUND ({count} finding{'s' if count != 1 else ''}):")
        lines += [f"  - {KIND_WORDS[f.kind]}: {f.message}" for f in others]
        lines += [f"  - ALTERED: {f.label}, event {f.version} ({f.event_type}): {f.message}"
                  for f in verdict.findings if f.kind == "altered"]
        if verdict.more_findings:
            lines.append(f"  - … and {verdict.more_findings} more of the same kinds")
    return "\n".join(lines)


def case_verdict(report: dict[str, Any]) -> str:
    chain = ("ok" if not report.get("first_bad_version") else
             f"ALTERED at event {report['first_bad_version']} ({report['first_bad_type']}): {report['reason']}")
    lines = [f"{report['label']}: {report['events']} events, {chain}"]
    if report.get("checkpoint_size"):
        lines.append(f"under the checkpoint of size {report['checkpoint_size']}: "
                     f"{report['events'] - report['not_yet_covered']} events; not yet covered: "
                     f"{report['not_yet_covered']}")
    lines += [f"  - {KIND_WORDS[f['kind']]}: {f['message']}" for f in report.get("findings", [])]
    lines.append("VERDICT: intact" if report["ok"] else "VERDICT: TAMPERING FOUND")
    return "\n".join(lines)


def receipt_verdict(path: str, problems: list[str]) -> str:
    if not problems:
        return f"{path}: the receipt's event is stored as the receipt says (signature valid)"
    return "\n".join([f"{path}:"] + [f"  - {problem}" for problem in problems])
