"""Art. 8, 9, 31, 37, 38 and Art. 16 par. ún.: opening a case (what it concerns, what it freezes) and archiving it.

The opening act of each kind, and its article, is the first step of the kind's lifecycle (statute data); its
territories (Art. 1 §1-4), the voters' signatures (Art. 8), the Governor's or Deputy's documents (Art. 9) and the
federal gate (CF art. 18 §4) are judged here, each by its registered judge (domain.judges: `judge_territories`,
`judge_documents`, `judge_federal_gate`; the signatures by `domain.rules.check_signatures`). The freeze it asks
for is judged by the registry (`domain.registry.judge_freeze`). Any case may be archived by the body that holds
it until its law.
"""

from __future__ import annotations

from datetime import date
from typing import TYPE_CHECKING, Any

from domain.acts import ActContext, refuse, require_legal_date
from domain.case.kinds import DISTRICT_KINDS, KINDS, MUNICIPAL_KINDS, case_id_for
from domain.errors import InvalidActError, Listing, Sentence, Term
from domain.judges import judges
from domain.lifecycle import lifecycle_of
from domain.rules import ART_4_ITEMS, amount, check_signatures

if TYPE_CHECKING:
    from domain.case import Case
    from domain.parameters import Statute


class Opening:
    """Opening (Art. 8, 9, 31, 37) and archiving (Art. 16 par. ún.) a case."""

    @classmethod
    def open(cls, ctx: ActContext, *, number: str, kind: str, municipalities: list[str],
             receiving: str | None = None, areas: list[dict[str, Any]] | None = None,
             proposed_name: str | None = None, district: str | None = None,
             signatures: list[dict[str, Any]] | None = None, documents: dict[str, str] | None = None,
             existing: set[str] = frozenset()) -> Case:
        """Art. 8, 9 (Art. 31 for districts, Art. 37 for extinction): open a case and decide what it freezes.

        `existing` is the set of registered IBGE codes (the application reads the registry).
        """
        require_legal_date(ctx, None)
        statute, day = ctx.statute, ctx.occurred_on
        if kind not in KINDS:
            raise InvalidActError("kind", Sentence("%(kind)r is not one of %(kinds)s", kind=kind, kinds=Listing(KINDS)))
        opening = lifecycle_of(statute, kind, day).opening
        article = opening.article
        areas, signatures, documents = list(areas or []), list(signatures or []), dict(documents or {})
        municipalities = list(dict.fromkeys(municipalities))
        for code in municipalities + ([receiving] if receiving else []):
            if code not in existing:
                raise InvalidActError("municipalities", Sentence("%(code)s is not a municipality of the registry",
                                                                  code=code))
        versions: dict[str, str] = {}
        if kind in DISTRICT_KINDS:
            ctx.require_competent(opening.act, article, municipality=municipalities[0] if municipalities else None)
            if len(municipalities) != 1 or not (district or "").strip():
                raise InvalidActError("district", "a district case names one municipality and the district")
            initiator = ctx.actor.role
        elif kind == "extinction":
            ctx.require_competent(opening.act, article)
            if len(municipalities) != 1:
                raise InvalidActError("municipalities", "an extinction case names the one municipality to extinguish")
            initiator = "voters"
        else:
            ctx.require_competent(opening.act, article)
            initiator = {"governor": "governor", "deputy": "deputy"}.get(ctx.actor.role, "voters")
            judge_territories(kind, municipalities, receiving, areas)
            if initiator == "voters":
                area_keys = [_area_key(a) for a in areas] or municipalities
                signatures = _signatures_by_area(signatures, area_keys)
                versions.update(check_signatures(statute, day, signatures, area_keys).versions)
            elif signatures:
                raise InvalidActError("signatures", "signatures accompany a voters' representation only (Art. 8)")
            judge_documents(kind, initiator, documents)
        closed_since, gate_versions = gate_closed_since(statute, kind, day)
        versions.update(gate_versions)
        impediments = [] if closed_since is None else [dict(GATE_IMPEDIMENT)]
        freezing = kind in MUNICIPAL_KINDS
        freezes = municipalities + ([receiving] if receiving else []) if freezing else []
        return cls._start(  # type: ignore[attr-defined]
            cls.PetitionFiled, ctx, id=case_id_for(number), article=article,  # type: ignore[attr-defined]
            rule_versions=versions,
            number=number, kind=kind, initiator=initiator, municipalities=municipalities, receiving=receiving,
            areas=[_clean_area(a) for a in areas], proposed_name=proposed_name, district=district,
            signatures=signatures, documents=documents, impediments=impediments, freezes=freezes,
        )

    def archive(self, ctx: ActContext, *, reason: str) -> None:
        """Art. 16 par. ún. (or withdrawal/rejection): the body holding the case archives it; the freeze lifts."""
        self._admit(ctx, "district-case-archived" if self.kind in DISTRICT_KINDS else "case-archived")
        if not reason.strip():
            raise InvalidActError("reason", "an archive states its reason")
        self._record(self.CaseArchived, ctx, article="art-16-par-unico", reason=reason)

    def impediments_on(self: Case, statute: Statute, day: date) -> list[dict[str, str]]:
        """CF art. 18 §4: what stands in the way of the case's law on `day`, judged then, not only at the opening.

        Until its law is enacted (or it is archived), a case of a gated kind shows the federal gate as an open
        impediment on every day the gate is closed, whenever it was opened (a case opened on 1996-09-12, read on a
        later day), and none on a day a federal period is open (after an amendment opening one) or before the gate
        came into force. Once the law is enacted there is none; an archived case keeps what it recorded."""
        if self.law is not None or self.archived:
            return list(self.impediments)
        closed_since, _ = gate_closed_since(statute, self.kind, day)
        return [dict(GATE_IMPEDIMENT)] if closed_since is not None else []

    @property
    def article_of_opening(self) -> str:
        """The article the case was opened under (its first event's)."""
        return self.opening_article


def _area_key(area: dict[str, Any]) -> str:
    return f"{area['municipality']}/{area['district']}" if area.get("district") else str(area["municipality"])


def _signatures_by_area(signatures: list[Any], area_keys: list[str]) -> list[Any]:
    """Art. 8 par. ún.: each signature's area as the petition's key for it (`code/district` for a district): a
    signature may name the part by its key, by its municipality's code when that municipality has one part, or by
    the district's name when one part has it; with one part, a signature that names none is that part's (Art. 8
    asks only zone, section and title). Anything else is left as given, and refused naming the signature."""
    only = area_keys[0] if len(area_keys) == 1 else None
    aliases: dict[str, list[str]] = {}
    for key in area_keys:
        code, _, district = key.partition("/")
        for alias in {key, code, district} - {""}:
            aliases.setdefault(alias, []).append(key)
    resolved = []
    for signature in signatures:
        area = signature.get("area") if isinstance(signature, dict) else None
        if isinstance(signature, dict) and only is not None and (area is None or (isinstance(area, str)
                                                                                  and not area.strip())):
            signature = {**signature, "area": only}
        elif isinstance(signature, dict) and isinstance(signature.get("area"), str):
            keys = aliases.get(signature["area"].strip(), [])
            if len(keys) == 1:
                signature = {**signature, "area": keys[0]}
        resolved.append(signature)
    return resolved


def _clean_area(area: dict[str, Any]) -> dict[str, Any]:
    if "municipality" not in area:
        raise InvalidActError("areas[].municipality", "each area names the municipality it is taken from")
    return {"municipality": str(area["municipality"]), "district": area.get("district"),
            "area_km2": amount(area.get("area_km2", 0), "areas[].area_km2"),
            "description": str(area.get("description", ""))}


@judges("art-9")
def judge_documents(kind: str, initiator: str, documents: dict[str, str]) -> None:
    """Art. 9: the Governor's or a Deputy's initiative for a creation comes with the Art. 4 documents.

    Documents are keyed by the items of Art. 4 (any other key is refused); a creation not opened by voters
    must give one for every item."""
    unknown = [key for key in documents if key not in ART_4_ITEMS]
    if unknown:
        raise InvalidActError(f"documents.{unknown[0]}", Sentence(
            "is not an item of Art. 4; the documents are keyed by its items: %(items)s",
            items=", ".join(ART_4_ITEMS)), article="art-9")
    if initiator != "voters" and kind == "creation":
        missing = [item for item in ART_4_ITEMS if not str(documents.get(item, "")).strip()]
        if missing:
            raise refuse("art-9", Sentence("a %(initiator)s's initiative must come with the Art. 4 documents; "
                                           "missing: %(missing)s", initiator=Term(initiator), missing=Listing(missing)),
                         missing=missing)


@judges("art-1")
def judge_territories(kind: str, municipalities: list[str], receiving: str | None,
                      areas: list[dict[str, Any]]) -> None:
    """Art. 1 §1-4: which municipalities each kind of case concerns, and the areas it takes from them.

    A fusion joins two or more; an incorporation and a dismemberment name one origin and a different receiving
    municipality (no other kind names one); a creation and a dismemberment describe the area taken from each
    origin (a dismemberment may also take a parcel of the receiving municipality in exchange, Art. 1-III)."""
    if not municipalities:
        raise InvalidActError("municipalities", "name the origin municipality or municipalities")
    if kind == "fusion" and len(municipalities) < 2:
        raise InvalidActError("municipalities", "a fusion joins two or more municipalities (Art. 1 §3)",
                              article="art-1")
    if kind in ("incorporation", "dismemberment"):
        if len(municipalities) != 1 or not receiving or receiving in municipalities:
            raise InvalidActError("receiving", Sentence("a %(kind)s names one origin and a different receiving "
                                                          "municipality", kind=Term(kind)), article="art-1")
    elif receiving:
        raise InvalidActError("receiving", Sentence("a %(kind)s case has no receiving municipality", kind=Term(kind)),
                              article="art-1")
    if kind in ("creation", "dismemberment"):
        if not areas:
            raise InvalidActError("areas", Sentence("a %(kind)s petition describes the area taken from each origin",
                                                  kind=Term(kind)))
        # Art. 1-III: a dismemberment may also move a parcel of the receiving municipality to the origin (an
        # exchange); the dispensation and the registry then go by each municipality's net area.
        givers = municipalities + ([receiving] if kind == "dismemberment" and receiving else [])
        which = (Term("the origin or the receiving municipality") if len(givers) > len(municipalities) else
                 Term("an origin"))
        for area in areas:
            if str(area.get("municipality")) not in givers:
                raise InvalidActError("areas[].municipality", Sentence("%(municipality)s is not %(which)s",
                                                                        municipality=area.get("municipality"),
                                                                        which=which))
        if not any(str(area.get("municipality")) in municipalities for area in areas):
            raise InvalidActError("areas", Sentence("a %(kind)s petition describes the area taken from its origin",
                                                  kind=Term(kind)))


@judges("cf-art-18-par-4")
def judge_federal_gate(statute: Statute, kind: str, on: date) -> dict[str, str]:
    """CF art. 18 §4: while no federal period is open, no creation/incorporation/fusion/dismemberment law.

    Since the amendment of 1996 such a law needs the period a federal complementary law sets; while none is open,
    it is refused, saying since when. Returns the rule versions used. (A case of a gated kind shows the gate as an
    impediment on every day it is closed: `Opening.impediments_on`, from `gate_closed_since`.)"""
    closed_since, versions = gate_closed_since(statute, kind, on)
    if closed_since is not None:
        raise refuse("cf-art-18-par-4", Sentence(
            "since %(since)s a %(kind)s law needs the period of a federal complementary law, and none is open on "
            "%(on)s (EC 15/1996; STF ADPF 819)", since=closed_since.isoformat(), kind=Term(kind),
            on=on.isoformat()),
                     gate_since=closed_since.isoformat())
    return versions


def gate_closed_since(statute: Statute, kind: str, day: date) -> tuple[date | None, dict[str, str]]:
    """CF art. 18 §4 on `day`: since when the gate is closed for `kind` (None: open), and the versions used."""
    gated = statute.in_force("cf-art-18-par-4.gated-kinds", day)
    period = statute.in_force("cf-art-18-par-4.federal-period", day)
    closed = kind in gated.value and period.value == "closed"
    return (period.effective_from if closed else None), {gated.id: gated.version, period.id: period.version}


#: What a case of a gated kind shows while the gate is closed (CF art. 18 §4, EC 15/1996).
GATE_IMPEDIMENT = {
    "article": "cf-art-18-par-4",
    "message": "no federal complementary law sets the period for this act (EC 15/1996); the law enacting it will be "
               "refused while the gate is closed"}
