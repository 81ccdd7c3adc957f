"""The domain's own errors: every refusal names the article at fault (house style: `<Condition>Error`).

A refusal's words are a `Sentence`: an English template and the values it is filled with, kept apart so that an
interface can give the template to its catalogue and fill the translation with the same values (the API answers
in Portuguese when asked: api/errors.py). A value that is itself a word of the vocabulary (a case kind, a
comparison such as "at least", a phrase of the statute data) is a `Term`, translated too; a code (a role such as
`assembly-mesa`, an act such as `plebiscite-decreed`, an article id, a case number) is shown as it is, in every
language. `str()` of a sentence is its English text. The domain knows no catalogue and no language.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any


def _same(text: str) -> str:
    return text


def _grouped(number: int) -> str:
    return f"{number:,}"


class Sentence:
    """Words for people, `template % values`, the template an English msgid of the catalogues.

    A value is a code or a figure shown as it is, a whole number (grouped by the reader's convention: `1,000` in
    English, `1.000` in Portuguese), or itself a `Sentence`, `Term` or `Listing`, rendered the same way.
    """

    __slots__ = ("template", "values")

    def __init__(self, template: str, **values: Any) -> None:
        self.template = template
        self.values = values

    def render(self, translate: Callable[[str], str] = _same, number: Callable[[int], str] = _grouped) -> str:
        """The sentence with `translate` applied to every template and term, and `number` to every whole number."""
        text = translate(self.template) if self.template else self.template
        if not self.values:
            return text
        return text % {name: rendered(value, translate, number) for name, value in self.values.items()}

    def __str__(self) -> str:
        return self.render()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.template!r}, **{self.values!r})"

    def __eq__(self, other: object) -> bool:
        return (type(other) is type(self) and self.template == other.template  # type: ignore[attr-defined]
                and self.values == other.values)  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash(self.template)


class Term(Sentence):
    """A word or phrase of the vocabulary inside a sentence (`creation`, `at least`), translated whole."""

    def __init__(self, word: str) -> None:
        super().__init__(word)


class Listing:
    """Several values shown one after the other (`a, b`; `reason; reason`), each rendered as a sentence's value.

    A separator that is a term is a word between spaces (`OR`: `tre or ibge`, `tre ou ibge`)."""

    __slots__ = ("items", "separator")

    def __init__(self, items: Iterable[Any], separator: str | Term = ", ") -> None:
        self.items = tuple(items)
        self.separator = separator

    def render(self, translate: Callable[[str], str] = _same, number: Callable[[int], str] = _grouped) -> str:
        separator = self.separator
        if isinstance(separator, Term):
            separator = f" {separator.render(translate)} "
        return separator.join(str(rendered(item, translate, number)) for item in self.items)

    def __str__(self) -> str:
        return self.render()

    def __bool__(self) -> bool:
        return bool(self.items)

    def __repr__(self) -> str:
        return f"Listing({list(self.items)!r}, {self.separator!r})"


#: The separator of alternatives: `assembly-mesa or tre`.
OR = Term("or")


def rendered(value: Any, translate: Callable[[str], str] = _same, number: Callable[[int], str] = _grouped) -> Any:
    """A sentence's value as shown: sentences and listings rendered, whole numbers grouped, anything else as is."""
    if isinstance(value, (Sentence, Listing)):
        return value.render(translate, number)
    if isinstance(value, int) and not isinstance(value, bool):
        return number(value)
    return value


def sentence(message: str | Sentence | Listing) -> Sentence:
    """A message as a sentence (a plain string is a sentence without values; a listing, sentences one after the
    other)."""
    if isinstance(message, Listing):
        return Sentence("%(said)s", said=message)
    return message if isinstance(message, Sentence) else Sentence(message)


class SaidError(Exception):
    """An error whose message is a sentence: `str()` is its English text, `sentence` the template and values."""

    def __init__(self, message: str | Sentence) -> None:
        self.sentence = sentence(message)
        super().__init__(str(self.sentence))


class StoredEventsUnreadableError(SaidError):
    """An aggregate's stored events no longer rebuild it: one does not decode, or names a class, a version or a
    value no event of tramita has. Only an edit of the store's rows makes this; verification names the event."""

    def __init__(self, aggregate_id: Any, version: Any, reason: str) -> None:
        self.aggregate_id, self.version = aggregate_id, version
        super().__init__(Sentence("the stored events of %(aggregate)s no longer rebuild it (its event %(version)s: "
                                  "%(reason)s): the store was altered; GET /verify and `tramita verify` name what",
                                  aggregate=str(aggregate_id), version=str(version), reason=reason[:200]))


class StoredEventsAlteredError(SaidError):
    """An aggregate an act (or a read) needs is not stored as its hash chain and the audit log say it was: an
    event deleted (the last one, or one in the middle), inserted, or its stored bytes altered. Nothing is judged on
    it and nothing is recorded; `label` names the aggregate (a case by its number, a municipality by its name),
    `version` the event at fault."""

    def __init__(self, aggregate_id: Any, version: int, reason: str | Sentence, label: Any = None) -> None:
        self.aggregate_id, self.version, self.label = aggregate_id, version, label or str(aggregate_id)
        self.reason = sentence(reason)
        super().__init__(Sentence("the stored events of %(aggregate)s contradict their hash chain or the audit "
                                  "log at its event %(version)s: %(reason)s; nothing was judged or recorded, the "
                                  "tamper alarm was raised, and GET /verify and `tramita verify` name what was "
                                  "altered",
                                  aggregate=self.label, version=str(version), reason=self.reason))


class LegalRuleError(Exception):
    """An act refused under the law: carries the article id (`art-13`) and a plain-language message.

    `figures` holds what was compared (required and found), so that an API can show them; `sentence` is the
    message as template and values (`message` is its English text).
    """

    def __init__(self, article: str, message: str | Sentence | Listing, **figures: Any) -> None:
        self.sentence = sentence(message)
        self.article = article
        self.message = str(self.sentence)
        self.figures = figures
        super().__init__(f"{article}: {self.message}")


class ActOutOfOrderError(LegalRuleError):
    """The act is not allowed at this point of the case (the article names the order)."""


class IncompetentBodyError(LegalRuleError):
    """The actor's role is not the competent body for this act."""


class RuleNotInForceError(LegalRuleError):
    """No version of a statute parameter was in force on the act's date."""


class CaseNotFoundError(Exception):
    """No case with that number or id, or no such event of it.

    `reference` is the case's number or id as it was asked for, never the id a number resolves to, so that the
    answer names what the client asked for. The message is one sentence, `template % values` with the reference
    as `%(reference)s`, so that it can be given translated whole (the API's problem details).
    """

    NO_CASE = "no case %(reference)s"
    NO_SUCH_EVENT = "case %(reference)s has events 1 to %(events)d; %(version)d is none"
    EVENT_NOT_STORED = "no event %(version)d of %(reference)s"
    EVENT_NOT_IN_LOG = "event %(version)d of %(reference)s is not in the notification log"

    def __init__(self, reference: Any, template: str = NO_CASE, **values: Any) -> None:
        self.reference = str(reference)
        self.template = template
        self.values = {"reference": self.reference, **values}
        super().__init__(template % self.values)


class AlertNotFoundError(Exception):
    """No alert with that id."""


class MunicipalityNotFoundError(SaidError):
    """No municipality with that IBGE code in the registry."""


class StaleVersionError(Exception):
    """The caller expected another version of the case (optimistic concurrency)."""

    def __init__(self, expected: int, actual: int) -> None:
        super().__init__(f"expected version {expected}, the case is at version {actual}")
        self.expected = expected
        self.actual = actual


class InvalidActError(Exception):
    """Input that does not describe an act at all (missing or malformed field); names the field, and the article
    when the law states what the field must be (`article`, e.g. a homologation dated before the vote: `art-13`)."""

    def __init__(self, field: str, message: str | Sentence, *, article: str | None = None) -> None:
        self.sentence = sentence(message)
        self.field = field
        self.article = article
        self.message = str(self.sentence)
        super().__init__(f"{article}: {field}: {self.message}" if article else f"{field}: {self.message}")


class StatuteAmendmentError(InvalidActError):
    """An amendment refused: every problem, keyed by the entry it is in (`parameters[2]`, `law`, ...).

    `problems` holds the English texts, `sentences` the same problems as sentences (for a translation)."""

    def __init__(self, problems: dict[str, list[str | Sentence]]) -> None:
        first = next(iter(problems))
        self.sentences = {key: [sentence(m) for m in messages] for key, messages in problems.items()}
        summary = Listing((Sentence("%(entry)s: %(problems)s", entry=key, problems=Listing(messages, " "))
                           for key, messages in self.sentences.items()), "; ")
        super().__init__(first, Sentence("the amendment is refused and nothing was recorded: %(summary)s",
                                         summary=summary))
        self.problems = {key: [str(m) for m in messages] for key, messages in self.sentences.items()}


class AuthenticationError(SaidError):
    """No token, a malformed or unknown token, or a revoked one: nobody is recording the act."""


class IdempotencyKeyReusedError(SaidError):
    """An `Idempotency-Key` already used by this token for another request (another act, case or body)."""

    def __init__(self, key: str, act: str, case_number: str) -> None:
        super().__init__(Sentence("Idempotency-Key %(key)r was already used by this token for another request "
                                  "(%(act)s on %(case)s); a retry must repeat the original request exactly",
                                  key=key, act=act, case=case_number))
        self.key = key
