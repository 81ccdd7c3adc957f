"""What a verification of the store found: its counts, its checkpoints and its findings (`audit/verify.py` makes
it, `audit/report.py` prints it, the API answers it)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

#: Findings listed per kind before the rest are only counted.
MAX_FINDINGS_PER_KIND = 25


@dataclass
class Finding:
    kind: str
    """altered, deleted, inserted, rewritten, reordered, forged, unsigned, checkpoint, fork, tree."""
    message: str
    aggregate_id: str | None = None
    label: str | None = None
    version: int | None = None
    event_type: str | None = None
    events: int | None = None
    """For a chain found altered: the events of its aggregate read up to the first that does not match."""

    def as_dict(self) -> dict[str, Any]:
        return dict(vars(self))


@dataclass
class CheckpointCheck:
    size: int
    source: str
    signed_at: str | None
    verified: bool
    matches: bool | None = None
    """The rebuilt tree's root at its size is the signed one (None: not reached)."""

    def as_dict(self) -> dict[str, Any]:
        return dict(vars(self))


@dataclass
class Verdict:
    events: int = 0
    aggregates: int = 0
    altered_chains: int = 0
    signed_events: int = 0
    unsigned_covered: int = 0
    """Events without a signature (recorded before the key existed) that a verified checkpoint covers instead."""
    signatures_checked: int = 0
    signatures_in_form: int = 0
    """Signatures of events a verified checkpoint covers, checked for their form only (`all_signatures`: none)."""
    covered: int = 0
    """The size of the largest checkpoint verified against the rebuilt tree (0: none)."""
    checkpoints: list[CheckpointCheck] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    more_findings: int = 0

    @property
    def not_yet_covered(self) -> int:
        return self.events - self.covered

    @property
    def ok(self) -> bool:
        return not self.findings and not self.more_findings

    def add(self, finding: Finding) -> None:
        if sum(1 for f in self.findings if f.kind == finding.kind) >= MAX_FINDINGS_PER_KIND:
            self.more_findings += 1
        else:
            self.findings.append(finding)

    def as_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "events": self.events, "aggregates": self.aggregates,
                "altered_chains": self.altered_chains, "signed_events": self.signed_events,
                "unsigned_covered": self.unsigned_covered,
                "signatures_checked": self.signatures_checked, "signatures_in_form": self.signatures_in_form,
                "covered": self.covered,
                "not_yet_covered": self.not_yet_covered, "checkpoints": [c.as_dict() for c in self.checkpoints],
                "findings": [f.as_dict() for f in self.findings], "more_findings": self.more_findings,
                "warnings": self.warnings}


@dataclass(slots=True)
class ChainHead:
    version: int
    hash: str
    label: str
    id_text: str
    """The aggregate id as the stored tree's leaf records write it."""
    events: int = 1
    broken: bool = False
    highest: int = 0
    """The highest version stored (the last one read is not it when events were reordered or one was inserted
    with a lower version)."""

    def moved_to(self, version: Any, chain_hash: str) -> None:
        """The chain's last event read is now `version`, of hash `chain_hash` (the highest integer version kept)."""
        self.version, self.hash = version, chain_hash
        if type(version) is int and version > self.highest:
            self.highest = version
