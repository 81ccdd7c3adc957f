"""The registry of municipalities (Art. 5, Art. 1-I, Art. 37) and the Art. 38 freeze, event-sourced.

A figure changes only by a recorded act with its source and date, so a rule is judged on the figures in
force on its act's date. The freeze is held here, on the municipality, so that opening a case and a
district act on the same territory conflict in the store and never both succeed. Art. 38 is judged by one
function, `judge_freeze`, for a district act and for an opening alike.
"""

from __future__ import annotations

import re
import tomllib
from bisect import bisect_right, insort_right
from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from functools import lru_cache
from importlib import resources
from collections.abc import Mapping
from typing import Any
from uuid import NAMESPACE_URL, UUID, uuid5

from domain.acts import ActContext, ChainedAggregate, refuse, require_date
from domain.errors import InvalidActError, Listing, Sentence
from domain.judges import judges
from domain.names import Toponym, name_fault, normalise_name

FIGURES = ("area_km2", "population", "voters", "revenue", "buildings")
REGISTRY_NAMESPACE = uuid5(NAMESPACE_URL, "urn:tramita:registry")
#: The form of an IBGE municipality code: seven ASCII digits (the state's two, then the municipality's).
_IBGE_CODE = re.compile(r"[0-9]{7}")


@dataclass(frozen=True)
class Figure:
    """A registry figure in force: its value, the date it refers to and its source."""

    value: int | Decimal
    as_of: date
    source: str


@lru_cache(maxsize=1)
def seed_metadata() -> dict[str, Any]:
    """The registry seed's metadata (domain/statute/acre-municipalities.toml): its file and, per column, the figure,
    the date it refers to, its source, and whether it has no date of its own (`undated`)."""
    return tomllib.loads(resources.files("domain.statute").joinpath("acre-municipalities.toml").read_text("utf-8"))


@lru_cache(maxsize=1)
def seeded_undated() -> frozenset[str]:
    """The figures whose seeded value has no date of its own (`undated` in the seed's metadata: the area, which
    measures the territory that only a recorded law changes): it stands on every day until a recorded act changes
    it. Read from the data, not stored in the seed's events, so that a registry seeded before the reading gets it
    too."""
    return frozenset(spec["figure"] for spec in seed_metadata()["columns"].values() if spec.get("undated"))


def figure_value(figure: str, raw: Any) -> int | Decimal:
    """Area and revenue are decimals; population, voters and buildings are whole numbers."""
    whole = figure not in ("area_km2", "revenue")
    try:
        value = Decimal(str(raw)) if not whole else int(str(raw))
    except (ArithmeticError, ValueError):
        raise InvalidActError(figure, Sentence("%(raw)r is not a whole number", raw=raw) if whole
                              else Sentence("%(raw)r is not a number", raw=raw)) from None
    if value < 0:
        raise InvalidActError(figure, Sentence("%(raw)r is negative", raw=raw))
    return value


def _as_of(entry: dict[str, Any]) -> date:
    return entry["as_of"]


def _file_figure(m: Municipality, name: str, entry: dict[str, Any]) -> None:
    """A figure's history in date order; an entry of a day already there goes after it (the last recorded wins)."""
    insort_right(m.figures.setdefault(name, []), entry, key=_as_of)


@judges("art-38")
def judge_freeze(municipality: Municipality, day: date, *, opening: bool = False) -> None:
    """Art. 38: while a case on its territory is open, no district of the municipality is created, changed or ended.

    A district act (a municipal law, Art. 31) dated on a day a freeze covers the municipality is refused, naming the
    case. An opening that freezes it (`opening`: a creation, dismemberment, incorporation or fusion) is refused when
    the municipality had ceased by its day, or when a district act already recorded is dated on or after it: the
    freeze would hold that act, and history would violate Art. 38.
    """
    if opening:
        municipality.require_existing(day, "art-38")
        inside = [act for act in municipality.district_acts if act["on"] >= day]
        if inside:
            act = inside[0]
            raise refuse("art-38", Sentence(
                "%(name)s's district %(district)s was changed by %(law)s on %(on)s; a case opened on "
                "%(occurred_on)s would have frozen it: check the opening date",
                name=municipality.name, district=act['district'], law=act['law'], on=act['on'].isoformat(),
                occurred_on=day.isoformat()), district_law=act["law"], district_law_on=act["on"].isoformat())
        return
    blocking = municipality.freezes_on(day)
    if blocking:
        numbers = ", ".join(f["case_number"] for f in blocking)
        raise refuse(
            "art-38",
            Sentence(
                "%(name)s is frozen on %(occurred_on)s by case %(numbers)s (opened %(since)s): no district may "
                "be created, dismembered, merged or extinguished there",
                name=municipality.name, occurred_on=day.isoformat(), numbers=numbers,
                since=blocking[0]['since'].isoformat()),
            blocking_case=blocking[0]["case_number"], blocking_case_id=blocking[0]["case_id"],
        )


class Municipality(ChainedAggregate):
    """One municipality of Acre: registry figures with their history, districts, Art. 38 freezes."""

    @staticmethod
    @lru_cache(maxsize=4096)  # a pure function of the key, asked several times an act: remembered, bounded
    def id_for(key: str) -> UUID:
        return uuid5(REGISTRY_NAMESPACE, f"municipality:{key}")

    class Registered(ChainedAggregate.Created):
        key: str
        name: str
        uf: str
        figures: dict[str, list[dict[str, Any]]]
        districts: list[str]
        created_by_case: str | None

        def assign(self, m: Municipality) -> None:
            m.key, m.name, m.uf = self.key, self.name, self.uf
            m.figures = {}
            #: The figures the registry was seeded with, the very entries filed (`entry_on` lets an undated one
            #: stand until another is recorded, and tells it from another entry by identity, not by its value).
            m.seeded = {}
            for name, history in self.figures.items():
                for entry in history:
                    filed = dict(entry)
                    _file_figure(m, name, filed)
                    if self.article == "registry-seed":
                        m.seeded.setdefault(name, filed)
            m.districts = list(self.districts)
            m.freezes = []
            m.active_freezes = {}
            m.district_acts = []
            m.ceased = None
            m.created_by_case = self.created_by_case

    class FigureRecorded(ChainedAggregate.Event):
        figure: str
        value: Any
        as_of: date
        source: str

        def assign(self, m: Municipality) -> None:
            _file_figure(m, self.figure, {"value": self.value, "as_of": self.as_of, "source": self.source})

    class Frozen(ChainedAggregate.Event):
        case_id: str
        case_number: str
        since: date

        def assign(self, m: Municipality) -> None:
            freeze = {"case_id": self.case_id, "case_number": self.case_number, "since": self.since, "lifted_on": None}
            m.freezes.append(freeze)
            m.active_freezes[self.case_id] = freeze

    class Unfrozen(ChainedAggregate.Event):
        case_id: str
        case_number: str
        lifted_on: date

        def assign(self, m: Municipality) -> None:
            freeze = m.active_freezes.pop(self.case_id, None)
            if freeze is not None:
                freeze["lifted_on"] = self.lifted_on

    class DistrictCreated(ChainedAggregate.Event):
        district: str
        case_id: str
        law: str

        def assign(self, m: Municipality) -> None:
            m.districts.append(self.district)
            m.district_acts.append({"district": self.district, "on": self.occurred_on, "law": self.law,
                                    "case_id": self.case_id})

    class DistrictSuppressed(ChainedAggregate.Event):
        district: str
        case_id: str
        law: str

        def assign(self, m: Municipality) -> None:
            m.districts.remove(self.district)
            m.district_acts.append({"district": self.district, "on": self.occurred_on, "law": self.law,
                                    "case_id": self.case_id})

    class TerritoryChanged(ChainedAggregate.Event):
        case_id: str
        law: str
        figures: dict[str, Any]
        districts: list[str]

        def assign(self, m: Municipality) -> None:
            for name, value in self.figures.items():
                _file_figure(m, name, {"value": value, "as_of": self.occurred_on, "source": self.law})
            m.districts = list(self.districts)

    class Ceased(ChainedAggregate.Event):
        case_id: str
        law: str
        into: list[str]

        def assign(self, m: Municipality) -> None:
            m.ceased = {"on": self.occurred_on, "law": self.law, "into": list(self.into)}

    # ------------------------------------------------------------------ commands

    @classmethod
    def register(
        cls, ctx: ActContext, *, key: str, name: str, uf: str = "AC",
        figures: dict[str, Figure] | None = None, districts: list[str] | None = None,
        created_by_case: str | None = None, article: str = "registry-seed",
    ) -> Municipality:
        """Registry seed or a new municipality created by law: its figures with date and source."""
        history = {
            figure: [{"value": entry.value, "as_of": entry.as_of, "source": entry.source}]
            for figure, entry in (figures or {}).items()
        }
        return cls._start(
            cls.Registered, ctx, id=cls.id_for(key), article=article, key=key, name=name, uf=uf,
            figures=history, districts=list(districts or []), created_by_case=created_by_case,
        )

    def record_figure(self, ctx: ActContext, figure: str, raw: Any, as_of: date, source: str) -> None:
        """Art. 4 par. ún.: the competent body records a registry figure, with its date and source."""
        if figure not in FIGURES:
            raise InvalidActError("figure", Sentence(
                "%(figure)r is not one of %(figures)s",
                figure=figure, figures=Listing(FIGURES)))
        competence = ctx.statute.in_force("competence.registry-figure", ctx.occurred_on)
        ctx.require_role(competence.value[figure], competence.article, f"the {figure} figure")
        if not source.strip():
            raise InvalidActError("source", "a registry figure needs its source")
        if require_date("as_of", as_of) > ctx.occurred_on:
            raise InvalidActError("as_of", "a figure cannot refer to a date after the act recording it")
        self._record(
            self.FigureRecorded, ctx, article=competence.article,
            rule_versions={competence.id: competence.version},
            figure=figure, value=figure_value(figure, raw), as_of=as_of, source=source,
        )

    def figure_on(self, figure: str, day: date) -> Figure | None:
        """The figure in force on `day` (`entry_on`) with its date and source; None: unknown."""
        current = self.entry_on(figure, day)
        if current is None or current["value"] is None:  # unknown, or made unknown by a law that moved an unknown
            return None                                   # part of it (domain/law_effects.py)
        return Figure(figure_value(figure, current["value"]), current["as_of"], current["source"])

    def entry_on(self, figure: str, day: date) -> dict[str, Any] | None:
        """The entry of `figure` in force on `day`: the latest dated on or before it, the last recorded of a day
        (each history is kept in date order, `_file_figure`, so this is a binary search). The seed's entry of a
        figure it gives without a date of its own (`seeded_undated`: the area) stands until any other entry: it is
        passed over wherever another is dated on or before `day`, and stands when none is. None: nothing known."""
        history = self.figures.get(figure, [])
        position = bisect_right(history, day, key=_as_of)
        seed = getattr(self, "seeded", {}).get(figure) if figure in seeded_undated() else None
        if seed is None:
            return history[position - 1] if position else None
        for entry in reversed(history[:position]):
            if entry is not seed:
                return entry
        return seed

    def figures_on(self, day: date) -> dict[str, int | Decimal | None]:
        """Every registry figure's value in force on `day` (None: unknown)."""
        return {name: (f.value if (f := self.figure_on(name, day)) else None) for name in FIGURES}

    def freezes_on(self, day: date) -> list[dict[str, Any]]:
        """Art. 38: the freezes in force on `day` (from the case's opening until the day it is lifted)."""
        return [
            f for f in self.freezes
            if f["since"] <= day and (f["lifted_on"] is None or day < f["lifted_on"])
        ]

    def freeze(self, ctx: ActContext, case_id: str, case_number: str) -> None:
        """Art. 38: opening a creation, dismemberment, incorporation or fusion case freezes the territory, as its
        judge (`judge_freeze`) admits."""
        judge_freeze(self, ctx.occurred_on, opening=True)
        self._record(self.Frozen, ctx, article="art-38", case_id=case_id, case_number=case_number,
                     since=ctx.occurred_on)

    def unfreeze(self, ctx: ActContext, case_id: str, case_number: str) -> None:
        """Art. 38: archiving the case or enacting its law lifts its freeze."""
        if case_id in self.active_freezes:
            self._record(self.Unfrozen, ctx, article="art-38", case_id=case_id, case_number=case_number,
                         lifted_on=ctx.occurred_on)

    def change_district(self, ctx: ActContext, *, create: bool, district: str, case_id: str, law: str) -> None:
        """Art. 31: a municipal law creates or suppresses a district, as the law's judge (`judge_district_law`)
        decided; a suppression records the district as the registry spells it."""
        if create:
            self._record(self.DistrictCreated, ctx, article="art-31", district=district, case_id=case_id, law=law)
        else:
            existing = {normalise_name(d): d for d in self.districts}
            self._record(self.DistrictSuppressed, ctx, article="art-31",
                         district=existing[normalise_name(district)], case_id=case_id, law=law)

    def change_territory(self, ctx: ActContext, *, article: str, case_id: str, law: str,
                         figures: dict[str, Any], districts: list[str]) -> None:
        """A law moves territory: the new figures in force from the law's date (unknown stay unknown)."""
        self.require_existing(ctx.occurred_on, article)
        self._record(self.TerritoryChanged, ctx, article=article, case_id=case_id, law=law,
                     figures=figures, districts=list(districts))

    def cease(self, ctx: ActContext, *, article: str, case_id: str, law: str, into: list[str]) -> None:
        """Incorporation, fusion or extinction: the municipality loses its personality by law."""
        self.require_existing(ctx.occurred_on, article)
        self._record(self.Ceased, ctx, article=article, case_id=case_id, law=law, into=list(into))

    def ceased_by(self, day: date) -> bool:
        """Had the municipality ceased (incorporation, fusion, extinction) by `day`?"""
        return self.ceased is not None and self.ceased["on"] <= day

    def require_existing(self, on: date, article: str) -> None:
        """The municipality has not ceased by `on`: an act on it under `article` is refused otherwise."""
        if self.ceased_by(on):
            raise refuse(article, Sentence(
                "%(name)s ceased to exist on %(on)s (%(law)s)",
                name=self.name, on=self.ceased['on'].isoformat(), law=self.ceased['law']))


class ToponymRegister(ChainedAggregate):
    """Art. 17 par. ún.: names of municipalities created after the shipped IBGE list, added by recorded acts."""

    ID = uuid5(REGISTRY_NAMESPACE, "toponyms")

    class Opened(ChainedAggregate.Created):
        def assign(self, register: ToponymRegister) -> None:
            register.added = []

    class NameAdded(ChainedAggregate.Event):
        name: str
        uf: str
        ibge_code: str | None
        source: str

        def assign(self, register: ToponymRegister) -> None:
            register.added.append({"name": self.name, "uf": self.uf, "ibge_code": self.ibge_code,
                                   "source": self.source})

    @classmethod
    def open(cls, ctx: ActContext) -> ToponymRegister:
        return cls._start(cls.Opened, ctx, id=cls.ID, article="art-17-par-unico")

    def add(self, ctx: ActContext, *, name: str, uf: str, ibge_code: str | None, source: str,
            states: Mapping[str, str] | None = None) -> None:
        """Art. 17 par. ún.: a municipality created after the shipped list joins it (IBGE, or the creation law).

        `states`: the states (UF) a name may be added in, each with the two digits its IBGE codes begin with
        (`ToponymList.state_codes`); given for the IBGE's act, which names a municipality of another state."""
        if not name.strip() or not source.strip():
            raise InvalidActError("name" if not name.strip() else "source", "is required")
        fault = name_fault(name)
        if fault is not None:
            raise InvalidActError("name", fault, article="art-17-par-unico")
        if states is not None:
            if uf not in states:
                raise InvalidActError("uf", Sentence("%(uf)r is not a state (UF) of the IBGE list: one of %(ufs)s",
                                                     uf=uf, ufs=", ".join(sorted(states))))
            if ibge_code is not None and not (_IBGE_CODE.fullmatch(ibge_code) and ibge_code.startswith(states[uf])):
                raise InvalidActError("ibge_code", Sentence(
                    "%(code)r is not an IBGE municipality code of %(uf)s: seven digits beginning with %(prefix)s",
                    code=ibge_code, uf=uf, prefix=states[uf]))
        self._record(self.NameAdded, ctx, article="art-17-par-unico", name=name.strip(), uf=uf,
                     ibge_code=ibge_code, source=source)

    def toponyms(self) -> list[Toponym]:
        return [Toponym(name=a["name"], uf=a["uf"], ibge_code=a["ibge_code"], source=a["source"]) for a in self.added]
