"""Art. 1-I to III, 11-16, 28-30: the councils' decrees, the dispensation, the plebiscite and the CCJ's bill.

Art. 28-30: each interested council decides by legislative decree (absolute majority of its seats).
Art. 1-I (from LC 132/2004): a dismemberment's plebiscite is dispensed when each net area ceded is within its
bracket. Art. 11-15: the Assembly decrees the plebiscite, the TRE fixes it, homologates the result (Art. 13's
verdict is recorded) and communicates it; the president registers it. Art. 16: the CCJ drafts the bill.
The order of these acts is the kind's lifecycle (domain.case.admission); the figures are judged by the
registered judges (domain.judges): the councils' and the result's in domain.rules, the decree's, the date's and
the fusion's seat's here.
"""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from typing import Any

from domain.acts import ActContext, refuse, require_date
from domain.calendar import Calendar
from domain.errors import ActOutOfOrderError, InvalidActError, Listing, Sentence
from domain.judges import judges
from domain.rules import judge_council, judge_dispensation, judge_plebiscite_result, whole


class Plebiscite:
    """Councils (Art. 28-30), dispensation (Art. 1-I), plebiscite (Art. 11-15) and the bill (Art. 16)."""

    def record_council_decree(self, ctx: ActContext, *, municipality: str, decree: str, seats: Any,
                              yes_votes: Any) -> None:
        """Art. 28, 29, 30: each interested council's legislative decree, approved by absolute majority."""
        if municipality not in self._territories():
            raise InvalidActError("municipality", Sentence("%(municipality)s is not a municipality of this case",
                                                              municipality=municipality))
        article = self._admit(ctx, "council-decree-recorded", municipality=municipality).article
        judgement = judge_council(ctx.statute, ctx.occurred_on, article, seats, yes_votes)
        self._record(self.CouncilDecreeRecorded, ctx, article=article, rule_versions=judgement.versions,
                     municipality=municipality, decree=decree, seats=judgement.figures["seats"],
                     yes_votes=judgement.figures["yes_votes"], approved=judgement.holds)

    def dispense_plebiscite(self, ctx: ActContext, *, justification: str, areas_km2: dict[str, Decimal | None],
                            names: dict[str, str]) -> None:
        """Art. 1-I, 1-II, 1-III: dispense the plebiscite when every net area ceded is within its bracket."""
        step = self._admit(ctx, "plebiscite-dispensed")
        if not justification.strip():
            raise InvalidActError("justification", "Art. 1-II's criteria are stated as a justification")
        judgement = judge_dispensation(ctx.statute, ctx.occurred_on, self.kind, self._net_areas(), areas_km2, names)
        self._record(self.PlebisciteDispensed, ctx, article=step.article, rule_versions=judgement.versions,
                     justification=justification, figures=judgement.figures)

    @judges("art-11")
    def decree_plebiscite(self, ctx: ActContext, *, decree: str,
                          origin_figures: dict[str, dict[str, Any]] | None = None) -> None:
        """Art. 11: once the requirements hold (or the councils approved), the Assembly decrees the plebiscite.

        A creation whose requirements were not yet recorded as met is judged now (Art. 4, 5), in the same save.
        """
        step = self._admit(ctx, "plebiscite-decreed")
        if self.kind == "creation" and self.requirements is None:
            if origin_figures is None:
                raise ActOutOfOrderError("art-11", "the plebiscite is decreed once the Art. 4 requirements are "
                                         "verified; they are not yet")
            self._record_requirements_met(ctx, origin_figures)
        self._record(self.PlebisciteDecreed, ctx, article=step.article, decree=decree)

    @judges("art-12")
    def schedule_plebiscite(self, ctx: ActContext, *, resolution: str, plebiscite_date: date) -> None:
        """Art. 12: the TRE regulates the plebiscite by resolution and fixes its date."""
        step = self._admit(ctx, "plebiscite-scheduled")
        if require_date("plebiscite_date", plebiscite_date) < ctx.occurred_on:
            raise InvalidActError("plebiscite_date", "the plebiscite cannot be fixed before its resolution",
                                  article="art-12")
        self._record(self.PlebisciteScheduled, ctx, article=step.article, resolution=resolution,
                     plebiscite_date=plebiscite_date)

    def homologate_result(self, ctx: ActContext, calendar: Calendar, *, voted_on: date,
                          populations: dict[str, dict[str, Any]], seat_votes: dict[str, Any] | None = None) -> None:
        """Art. 13, 30 par. ún.: the TRE homologates; favourable only if every population's vote is."""
        step = self._admit(ctx, "plebiscite-result-homologated")
        judgements = judge_plebiscite_result(ctx.statute, ctx.occurred_on, populations, kind=self.kind,
                                             municipalities=self.municipalities,
                                             scheduled_for=self.plebiscite["scheduled_for"], voted_on=voted_on)
        versions = {k: v for j in judgements.values() for k, v in j.versions.items()}
        favourable = all(j.holds for j in judgements.values())
        reasons = [r for j in judgements.values() for r in j.reasons]  # recorded in English, as decided
        seat = judge_seat(seat_votes or {}, favourable) if self.kind == "fusion" else None
        self._record(self.PlebisciteResultHomologated, ctx, article=step.article, rule_versions=versions,
                     voted_on=voted_on, populations={k: j.figures for k, j in judgements.items()},
                     favourable=favourable, reasons=reasons, seat=seat)
        self._open_deadline(ctx, calendar, "result-communication")

    def communicate_result(self, ctx: ActContext, calendar: Calendar) -> None:
        """Art. 14: the TRE communicates the result; Art. 15's and (if favourable) Art. 16's deadlines start."""
        self._admit(ctx, "result-communicated")
        self._record(self.ResultCommunicated, ctx, article="art-14")
        self._close_deadline(ctx, "result-communication", "result-communicated")
        self._open_deadline(ctx, calendar, "plenary-registration")
        if self.result["favourable"]:
            self._open_deadline(ctx, calendar, "creation-bill")

    def register_in_plenary(self, ctx: ActContext) -> None:
        """Art. 15: the Assembly president registers the result in plenary and informs the Governor."""
        self._admit(ctx, "result-registered-in-plenary")
        self._record(self.ResultRegisteredInPlenary, ctx, article="art-15", governor_informed=True)
        self._close_deadline(ctx, "plenary-registration", "result-registered-in-plenary")

    def draft_bill(self, ctx: ActContext, *, bill: str) -> None:
        """Art. 16: with a favourable result (or a dispensation, Art. 1-I), the CCJ drafts the bill."""
        self._admit(ctx, "creation-bill-drafted")  # after the communication or the dispensation, if favourable
        self._record(self.CreationBillDrafted, ctx, article="art-16", bill=bill)
        self._close_deadline(ctx, "creation-bill", "creation-bill-drafted")

    def _net_areas(self) -> dict[str, Decimal]:
        """Art. 1-III: each municipality's area ceded minus area received."""
        net: dict[str, Decimal] = {code: Decimal(0) for code in self._territories()}
        for area in self.areas:
            km2 = Decimal(str(area["area_km2"]))
            giver = area["municipality"]
            net[giver] += km2
            taker = self._taker_of(giver)
            if taker is not None:
                net[taker] -= km2
        return net

    def _taker_of(self, giver: str) -> str | None:
        """Art. 1 §4, 1-III: where a parcel of `giver` goes in this case: the receiving municipality for an
        origin's parcel, the origin for a parcel the receiving municipality gives in exchange; None when it goes to
        the new municipality (creation)."""
        if not self.receiving:
            return None
        return self.municipalities[0] if giver == self.receiving else self.receiving


@judges("art-30-par-unico")
def judge_seat(seat_votes: dict[str, Any], favourable: bool) -> str | None:
    """Art. 30 par. ún.: a fusion's plebiscite also chooses the seat: the most voted place, without a tie.

    The seat matters only to a fusion the result approves: then a tie, or no seat vote, is refused; an unfavourable
    result records the most voted place when one is (None otherwise)."""
    if not favourable:
        return winners[0] if len(winners := _most_voted(seat_votes)) == 1 else None
    if not seat_votes:
        raise InvalidActError("seat_votes", "a fusion plebiscite also chooses the seat (Art. 30 par. ún.)",
                              article="art-30")
    winners = _most_voted(seat_votes)
    if len(winners) > 1:
        raise refuse("art-30", Sentence("the seat vote is tied between %(winners)s", winners=Listing(winners)))
    return winners[0]


def _most_voted(seat_votes: dict[str, Any]) -> list[str]:
    """The places with the most seat votes (each a whole number): one, or those tied at the top (none without
    votes)."""
    votes = {seat: whole(v, f"seat_votes.{seat}") for seat, v in seat_votes.items()}
    best = max(votes.values(), default=None)
    return [seat for seat, v in votes.items() if v == best]
