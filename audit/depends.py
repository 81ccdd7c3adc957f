"""A case's verdict covers the aggregates its acts depend on: the registry entries of the municipalities it names
(Art. 38's freezes, the figures its rules read) and its year's case numbering. Each is checked as `tramita verify`
checks an aggregate: its hash chain recomputed from the stored bytes, and every event the audit log holds of it
stored with the hash the log holds (none deleted, none rewritten)."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from audit import merkle
from audit.verdict import Finding
from domain.errors import CaseNotFoundError
from domain.numbering import CaseNumbering
from domain.registry import Municipality


def dependencies(petition: Any) -> list[tuple[UUID, str]]:
    """The aggregates a case's acts read besides the case, with how to name each: from its petition, the
    municipalities it names (origins and receiving) and its year's numbering."""
    codes = [*(getattr(petition, "municipalities", None) or []), getattr(petition, "receiving", None)]
    found = [(Municipality.id_for(code), f"municipality {code}") for code in dict.fromkeys(codes)
             if isinstance(code, str) and code]
    number = getattr(petition, "number", None)
    year = number.split("-")[1] if isinstance(number, str) and number.count("-") == 2 else ""
    if year.isdigit():
        found.append((CaseNumbering.id_for(int(year)), f"case numbering {year}"))
    return found


def dependency_findings(app: Any, log: Any, petition: Any) -> list[Finding]:
    """What is wrong with the aggregates the case depends on (`dependencies`), each finding naming the aggregate
    and its event."""
    findings: list[Finding] = []
    for aggregate_id, fallback in dependencies(petition):
        findings += _aggregate_findings(app, log, aggregate_id, fallback)
    return findings


def _aggregate_findings(app: Any, log: Any, aggregate_id: UUID, fallback: str) -> list[Finding]:
    try:
        leaves = {leaf.version: leaf.event_hash for leaf in log.leaves_of(aggregate_id)} if log.exists() else {}
    except merkle.ProofError as error:  # an altered leaf record: named, the events still checked
        leaves = {}
        findings = [Finding("tree", f"{fallback}: {error}", str(aggregate_id), fallback)]
    else:
        findings = []
    try:
        report, events = app.verified_events(aggregate_id)
    except CaseNotFoundError:  # no event stored
        if leaves:
            findings.append(Finding("deleted", f"{fallback}: all of its {len(leaves)} logged events were deleted "
                                    "from the store", str(aggregate_id), fallback, min(leaves)))
        return findings
    label = _label(events, fallback)
    if not report.ok:
        findings.append(Finding("altered", f"{label}: event {report.first_bad_version} ({report.first_bad_type}) "
                                f"does not match: {report.reason}", str(aggregate_id), label,
                                report.first_bad_version, report.first_bad_type))
    stored = {event.originator_version: event.hash for event in events}
    for version, logged_hash in sorted(leaves.items()):
        if version in stored and stored[version] != logged_hash:
            findings.append(Finding("rewritten", f"{label}: event {version} was rewritten after it was logged",
                                    str(aggregate_id), label, version))
    deleted = [version for version in leaves if version > report.events] if report.ok else []
    if deleted:
        findings.append(Finding("deleted", f"{label}: events {min(deleted)}..{max(deleted)} were logged and are "
                                "no longer stored (its last events were deleted)", str(aggregate_id), label,
                                min(deleted)))
    return findings


def _label(events: list[Any], fallback: str) -> str:
    """A municipality by its name and code, a numbering by its year (the first event names them)."""
    first = events[0] if events else None
    name, key = getattr(first, "name", None), getattr(first, "key", None)
    if isinstance(name, str):
        return f"{name} ({key})" if isinstance(key, str) else name
    return fallback
