"""The registry of municipalities: its seed, recorded figures, toponyms, and the reads acts need."""

from __future__ import annotations

import csv
from collections.abc import Callable, Iterator, Mapping
from datetime import date
from importlib import resources
from typing import Any

from domain.acts import Actor
from domain.application.base import Acted, ApplicationBase
from domain.errors import InvalidActError, Sentence
from domain.names import Toponym, ToponymList
from domain.registry import Figure, Municipality, ToponymRegister, figure_value, seed_metadata


def _seed_rows() -> list[dict[str, Any]]:
    """The registry seed: each municipality's known figures with the date and source of their column."""
    meta = seed_metadata()
    rows = []
    with resources.files("domain.statute").joinpath(meta["file"]).open(encoding="utf-8") as file:
        for row in csv.DictReader(file):
            figures = {}
            for column, spec in meta["columns"].items():
                if row.get(column, "").strip():
                    figures[spec["figure"]] = Figure(figure_value(spec["figure"], row[column]), spec["as_of"],
                                                     spec["source"])
            rows.append({"key": row["ibge_code"], "name": row["name"], "figures": figures})
    return rows



class _ReadWhenNeeded(Mapping[str, Any]):
    """A mapping read from `load` on its first use, once."""

    def __init__(self, load: Callable[[], dict[str, Any]]) -> None:
        self._load, self._data = load, None

    def _loaded(self) -> dict[str, Any]:
        if self._data is None:
            self._data = self._load()
        return self._data

    def __getitem__(self, key: str) -> Any:
        return self._loaded()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._loaded())

    def __len__(self) -> int:
        return len(self._loaded())


def _toponyms_of(added: list[dict[str, Any]]) -> list[Toponym]:
    """The register's recorded names (`ToponymRegister.added`) as toponyms."""
    return [Toponym(name=a["name"], uf=a["uf"], ibge_code=a["ibge_code"], source=a["source"]) for a in added]


class RegistryActs(ApplicationBase):
    """The registry of municipalities: its seed, recorded figures, toponyms, and the reads acts need."""

    # ------------------------------------------------------------------ registry

    def seed_registry(self, actor: Actor, occurred_on: date) -> list[str]:
        """Register Acre's municipalities from the shipped seed (figures with their dates and sources)."""
        seeded = []
        for row in _seed_rows():
            if self._find_municipality(row["key"]) is not None:
                continue
            ctx = self.context(actor, occurred_on)
            municipality = Municipality.register(ctx, key=row["key"], name=row["name"], figures=row["figures"])
            self.save(municipality)
            seeded.append(row["key"])
        return seeded

    def record_figure(self, code: str, actor: Actor, occurred_on: date, *, figure: str, value: Any, as_of: date,
                      source: str) -> Acted:
        """Art. 4 par. ún.: a competent body records a registry figure with its date and source."""

        def attempt() -> Acted:
            municipality = self._get_municipality(code)
            ctx = self.context(actor, occurred_on)
            municipality.record_figure(ctx, figure, value, as_of, source)
            acted = Acted(municipality.id, code, municipality.version, decided_from=municipality.version)
            return acted.stored(self.save(municipality, *self._receipts(ctx, acted)))

        return self._retrying(attempt)

    def add_toponym(self, actor: Actor, occurred_on: date, *, name: str, uf: str, ibge_code: str | None,
                    source: str) -> Acted:
        """Art. 17 par. ún.: a municipality created elsewhere in Brazil joins the list of existing names (its state
        one of the IBGE list's, its code, when given, one of that state's), so a later law may not repeat it."""

        def attempt() -> Acted:
            ctx = self.context(actor, occurred_on)
            ctx.require_competent("toponym-added", "art-17-par-unico")
            register = self._get_or_none(ToponymRegister.ID)
            decided_from = register.version + 1 if register else 1
            register = register or ToponymRegister.open(ctx)
            register.add(ctx, name=name, uf=uf, ibge_code=ibge_code, source=source,
                         states=ToponymList.shipped().state_codes())
            acted = Acted(register.id, "toponyms", register.version, decided_from=decided_from)
            return acted.stored(self.save(register, *self._receipts(ctx, acted)))

        return self._retrying(attempt)

    def toponyms(self, register: ToponymRegister | None = None) -> ToponymList:
        """Art. 17 par. ún.: the shipped IBGE list (Acre's municipalities included) plus the names recorded since
        (by IBGE, and by every creation or fusion law, which adds its new name in the same save)."""
        register = register or self._get_or_none(ToponymRegister.ID)
        version = register.last_hash if register else None  # the chain head names the content, not just its length
        added = list(register.added) if register else []
        cached = self.__dict__.get("_toponym_list")
        if cached is not None and cached[0] == version:  # built once per version of the register, not once per act
            return cached[2]
        if cached is not None and cached[1] == added[:len(cached[1])]:
            # The register only appends: the list of the version before, with the names added since (the same
            # list as built from all of them, without normalising every earlier name again on every law).
            toponyms = cached[2].with_names(_toponyms_of(added[len(cached[1]):]))
        else:
            toponyms = ToponymList.shipped().with_names(_toponyms_of(added))
        self.__dict__["_toponym_list"] = (version, added, toponyms)
        return toponyms

    def municipality(self, code: str) -> Municipality:
        return self._get_municipality(code)

    def _figures_on(self, codes: list[str], day: date,
                    registry: dict[str, Municipality] | None = None) -> dict[str, dict[str, Any]]:
        """Each municipality's registry figures in force on `day` (None: unknown)."""
        registry = registry or {}
        return {code: (registry.get(code) or self._get_municipality(code)).figures_on(day) for code in codes}

    def _figures_when_needed(self, codes: list[str], day: date) -> Mapping[str, dict[str, Any]]:
        """`_figures_on`, read the first time the act looks at them (a creation's finding looks only when it
        completes Art. 4), and then once."""
        return _ReadWhenNeeded(lambda: self._figures_on(codes, day))

    def _require_district(self, municipality: Municipality, district: str) -> None:
        from domain.names import normalise_name

        if normalise_name(district) not in {normalise_name(d) for d in municipality.districts}:
            raise InvalidActError("district", Sentence(
                "%(name)s has no district named %(district)r in the registry",
                name=municipality.name, district=district))
