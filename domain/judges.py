"""Rules of LC 35/1991, one place per article: each article the product judges is judged by ONE registered function.

A judge is the function where an article's decision is taken and its refusal raised; the helpers it calls may live
elsewhere, but the verdict does not. `@judges("art-31")` registers the function under the article's id, so that
`JUDGES` leads from an article to its judge (and `git grep '"art-31"'` finds the decorator). An article of the
statute data that no function judges is in `NOT_JUDGED`, with why: its data only informs another judgement, or
it orders a procedure the lifecycle's admission enforces and nothing else decides. docs/law/README.md shows both
tables, generated from here by tests/test_judges.py.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

Judge = TypeVar("Judge", bound=Callable[..., Any])

#: Article id -> its judge. Complete once the modules of `JUDGING_MODULES` are imported (each registers its own).
JUDGES: dict[str, Callable[..., Any]] = {}
#: The modules whose functions judge an article (importing them fills `JUDGES`).
JUDGING_MODULES = ("domain.rules", "domain.registry", "domain.case.opening", "domain.case.instruction",
                   "domain.case.plebiscite", "domain.case.law", "domain.case.installation")


def judges(*articles: str) -> Callable[[Judge], Judge]:
    """Register the decorated function as the one judge of each of `articles` (article ids: `art-31`)."""

    def register(function: Judge) -> Judge:
        for article in articles:
            other = JUDGES.get(article)
            if other is not None and other is not function:
                raise ValueError(f"{article} is judged by {other.__module__}.{other.__qualname__} already")
            JUDGES[article] = function
        return function

    return register


#: The articles the statute data cites that no function judges, each with why (one line, shown in the docs).
NOT_JUDGED: dict[str, str] = {
    "art-6": "data only: the fusion lifecycle excludes the findings, the verification and the requisitions citing "
             "Art. 6, and the admission refuses them (`art-6.kinds-without-art-4` says the same, kept in agreement "
             "by a test)",
    "art-14": "procedure only: the TRE communicates the result when the lifecycle admits it; the act opens the "
              "deadlines of Art. 15 and 16 and closes its own (`Plebiscite.communicate_result`)",
    "art-15": "procedure only: the president's registration in plenary, admitted by the lifecycle, closes its "
              "deadline (`Plebiscite.register_in_plenary`)",
    "art-16": "procedure only: the CCJ's bill, admitted by the lifecycle after a favourable result (the condition "
              "`result-favourable` reads the verdict Art. 13's judge recorded), closes its deadline",
    "art-16-par-unico": "procedure only: the archive (a reason is required) ends the case and lifts the Art. 38 "
                        "freeze; the unfavourable result it follows was judged under Art. 13",
    "art-19": "procedure only: the installation names who takes office and opens the deadlines of Art. 22-24; the "
              "case concludes when every obligation is closed (`Deadlines._conclude_if_done`)",
    "art-22-par-unico": "procedure only: each origin's books and accounts, a deadline opened by the installation "
                        "and closed by the act",
    "art-24": "procedure only: the organic law, a deadline opened by the installation and closed by the act",
    "art-25": "procedure only: the Câmara fixes the remuneration once, after the installation",
    "art-26-par-unico": "procedure only: each origin's personnel documents, due on the installation's day and "
                        "closed by the act",
    "lei-9784-art-66": "data only: the convention by which the calendar counts every deadline "
                       "(`deadline.counting-convention`, domain/calendar.py)",
    "rules-lifecycle": "not an article: the product's order of acts and competence tables, applied to every act by "
                       "the admission (`Admission._admit`), whose refusals cite each step's own article",
}


def judge_of(article: str) -> Callable[..., Any]:
    """The function that judges `article` (KeyError when none does: see `NOT_JUDGED`)."""
    return JUDGES[article]
