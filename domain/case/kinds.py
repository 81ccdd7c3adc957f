"""Art. 1, 4, 23, 28-31, 37: the case kinds and the vocabularies their acts use (item ids, not legal numbers).

The order of each kind's acts is data (domain/statute/lifecycles.toml); these names say which kind of case an
act judges and which items a finding or a bill may name.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any
from uuid import UUID, uuid5

from domain.registry import REGISTRY_NAMESPACE
from domain.rules import ART_4_ITEMS

KINDS = ("creation", "incorporation", "fusion", "dismemberment", "district_creation", "district_suppression",
         "extinction")
MUNICIPAL_KINDS = ("creation", "incorporation", "fusion", "dismemberment")
DISTRICT_KINDS = ("district_creation", "district_suppression")
NEW_MUNICIPALITY_KINDS = ("creation", "fusion")
#: Art. 5 (Art. 39 for a dismemberment): the kinds whose law judges again that every origin keeps Art. 4 I-IV, on
#: the registry's figures on the law's day (another law, or a later figure, may have moved them since).
ART_5_LAW_KINDS = ("creation", "dismemberment")
COUNCIL_ARTICLE = {"dismemberment": "art-28", "incorporation": "art-29", "fusion": "art-30"}
FINDING_ITEMS = {
    "creation": ART_4_ITEMS,
    "dismemberment": ("art-4-I", "art-4-II", "art-4-III", "art-4-IV"),
    "extinction": ART_4_ITEMS,
    "district_creation": ("art-31-I", "art-31-II", "art-31-III"),
}
BOOLEAN_ITEMS = ("art-4-V", "art-4-VI", "art-31-III")
PREFECT_BILLS = {"art-23-I": "budget-proposal", "art-23-II": "administrative-organization-bill",
                 "art-23-III": "civil-service-regime-bill", "art-23-IV": "staff-framework-bill"}
INSTALLATION_DEADLINES = ("budget-proposal", "administrative-organization-bill", "civil-service-regime-bill",
                          "staff-framework-bill", "organic-law")


#: The two bodies that both find Art. 4-VI and Art. 31-III (Art. 4 par. ún., Art. 32: the PGE and the SECTMA).
BOTH_BODIES = ("pge", "sectma")


def findings_missing(findings: dict[str, dict[str, Any]], items: tuple[str, ...], by_both: str) -> list[str]:
    """Art. 4 par. ún., Art. 32: the items of `items` no finding was recorded for yet, in their order, then
    `by_both` (Art. 4-VI, 31-III) for each of its two bodies that has not found it yet (`art-4-VI (pge)`)."""
    missing = [item for item in items if item not in findings]
    missing += [f"{by_both} ({body})" for body in BOTH_BODIES if by_both in findings and body not in findings[by_both]]
    return missing


@lru_cache(maxsize=4096)  # a pure function of the number, asked on every act by number: remembered, bounded
def case_id_for(number: str) -> UUID:
    """Deterministic id of the case numbered `number` (e.g. LC35-2026-0001)."""
    return uuid5(REGISTRY_NAMESPACE, f"case:{number}")
