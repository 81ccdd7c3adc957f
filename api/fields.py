"""The fields every request schema is made of: what the API accepts at its edge, checked once for every operation.

A request that reaches the application holds only text without control characters or lone surrogates, of a
bounded length; dates as `YYYY-MM-DD` and moments as ISO 8601 with a time zone, within a product range; whole
numbers within bounds; and finite decimals of bounded size. Anything else is refused with 422 naming the field
(marshmallow keys each error by the field's name), before anything is recorded. These are product limits, not
rules of the law (the domain judges those and names the article); each is a named constant, documented in the
README's HTTP API section and, through the validators, in the OpenAPI document (`maxLength`, `pattern`,
`minimum`, `maximum`).
"""

from __future__ import annotations

import re
from datetime import date, datetime, timezone
from decimal import Decimal
from typing import Any

from marshmallow import ValidationError, fields, validate
from werkzeug.routing import UnicodeConverter

#: Longest name (of a municipality, district, comarca, person) or search words: a name is one line.
MAX_NAME_CHARS = 200
#: Longest reference (a law, decree, document, IBGE code, body, item, source): one line.
MAX_REFERENCE_CHARS = 500
#: Longest free text (a reason, a justification, a description of limits): may hold newlines and tabs.
MAX_FREE_TEXT_CHARS = 10_000
#: The most documents one act attaches (`attachments`: each already stored with `POST /documents`).
MAX_ATTACHMENTS = 50
#: The most items a list, or entries a mapping, of a request may hold (a voters' signatures excepted): far more
#: than an act names (its municipalities, areas, districts, populations), and refused before any item is read, so
#: that a body of many small bad items costs no more to refuse than one.
MAX_ITEMS = 1000
#: The most signatures one voters' representation may carry (Art. 8): about what a 1 MiB body holds.
MAX_SIGNATURES = 20_000
#: Earliest and latest day a date or a moment may name: far outside any act of LC 35/1991, and far enough from
#: the calendar's ends that a deadline computed from either never overflows.
EARLIEST_DAY, LATEST_DAY = date(1900, 1, 1), date(2199, 12, 31)
#: The largest whole number a count (votes, seats, voters) may be, and an offset into a list.
MAX_COUNT = 10**9
#: A decimal (an area, a revenue, a figure): at most this many digits before the point and after it as text;
#: as a JSON number, at most MAX_QUANTITY in size (a float carries no more than 17 significant digits anyway).
MAX_INTEGER_DIGITS, MAX_FRACTION_DIGITS = 15, 9
MAX_QUANTITY = 10**MAX_INTEGER_DIGITS - 1

#: Characters no text field holds: C0 and C1 controls and DEL; free text may hold a newline and a tab. Lone UTF-16
#: surrogates (a JSON `"\\ud800"` not followed by its pair) are no characters at all, cannot be encoded, hashed
#: or stored, and are refused too; the OpenAPI `pattern` leaves them out (an ECMA-262 pattern cannot name them).
_NOT_IN_A_LINE = "\\x00-\\x1f\\x7f-\\x9f"
_NOT_IN_FREE_TEXT = "\\x00-\\x08\\x0b-\\x1f\\x7f-\\x9f"
_SURROGATES = "\\ud800-\\udfff"
_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_ISO_MOMENT = re.compile(r"(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2}(?::\d{2})?)(?:\.(\d{1,9}))?(Z|[+-]\d{2}:\d{2})")
_ASCII_DIGITS = re.compile(r"[0-9]+")
_DECIMAL_TEXT = re.compile(rf"-?[0-9]{{1,{MAX_INTEGER_DIGITS}}}(\.[0-9]{{1,{MAX_FRACTION_DIGITS}}})?")
_SHARE_TEXT = re.compile(r"[0-9]{1,9}(/0{0,8}[1-9][0-9]{0,8}|\.[0-9]{1,9})?")  # never a zero denominator


#: The messages of these fields, `str.format` templates (api/i18n.py translates them, values kept).
CHARACTER_REFUSED = "holds the character {character} at position {position}, which has no place in this field"
DAY_OUTSIDE = "{day} is outside {earliest} .. {latest}"
NOT_A_COUNT = "Not a whole number from 0 to {most}."
NOT_A = "Not {what}."
NOT_A_WITHIN = "Not {what} from {minimum} to {maximum}."
TOO_MANY = "Too many items: at most {most}."
NOT_A_DECIMAL = ("Not a decimal as text: digits with at most one point (at most {before} before it and {after} "
                 "after), e.g. \"420.5\".")
#: The words a `{what}` above is filled with.
WHATS = ("a number", 'a share: a fraction ("1/3") or a decimal ("0.5") as text, or a number')
MESSAGES = (CHARACTER_REFUSED, DAY_OUTSIDE, NOT_A_COUNT, NOT_A, NOT_A_WITHIN, NOT_A_DECIMAL, TOO_MANY,
            "Not a valid date: give YYYY-MM-DD.",
            "Not a valid moment: give ISO 8601 with a time zone, e.g. 2026-04-01T00:00:00Z.",
            "Not a valid moment: no such day, time or time zone.", "Not a number.")


class Characters(validate.Regexp):
    """No character of a class (documented as the OpenAPI `pattern`); the error names the first one found."""

    def __init__(self, forbidden: str) -> None:
        super().__init__(f"^[^{forbidden}]*$")
        self.forbidden = re.compile(f"[{forbidden}{_SURROGATES}]")

    def __call__(self, value: str) -> str:
        found = self.forbidden.search(value)
        if found is not None:
            raise ValidationError(CHARACTER_REFUSED.format(character=f"U+{ord(found.group()):04X}",
                                                           position=found.start()))
        return value


class Text(fields.String):
    """A string of 0 (or `min_length`) to `max_length` characters, none of them a control character or a lone
    surrogate; newlines and tabs only when `multiline`."""

    def __init__(self, *, max_length: int, multiline: bool = False, min_length: int | None = None,
                 **kwargs: Any) -> None:
        checks = [validate.Length(min=min_length, max=max_length),
                  Characters(_NOT_IN_FREE_TEXT if multiline else _NOT_IN_A_LINE)]
        extra = kwargs.pop("validate", None)
        checks += [extra] if callable(extra) else list(extra or [])
        super().__init__(validate=checks, **kwargs)


def Name(**kwargs: Any) -> Text:  # noqa: N802 - a field constructor, named like the field classes
    """A name: one line, at most MAX_NAME_CHARS characters."""
    return Text(max_length=MAX_NAME_CHARS, **kwargs)


def Reference(**kwargs: Any) -> Text:  # noqa: N802
    """A reference or a code: one line, at most MAX_REFERENCE_CHARS characters."""
    return Text(max_length=MAX_REFERENCE_CHARS, **kwargs)


def FreeText(**kwargs: Any) -> Text:  # noqa: N802
    """Free text: newlines and tabs allowed, at most MAX_FREE_TEXT_CHARS characters."""
    return Text(max_length=MAX_FREE_TEXT_CHARS, multiline=True, **kwargs)


def _within_days(day: date) -> None:
    if not EARLIEST_DAY <= day <= LATEST_DAY:
        raise ValidationError(DAY_OUTSIDE.format(day=day.isoformat(), earliest=EARLIEST_DAY.isoformat(),
                                                 latest=LATEST_DAY.isoformat()))


class Day(fields.Date):
    """A calendar day as `YYYY-MM-DD` only (not `20261201`, not a week date), from EARLIEST_DAY to LATEST_DAY."""

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> date:
        if not isinstance(value, str) or not _ISO_DATE.fullmatch(value):
            raise ValidationError("Not a valid date: give YYYY-MM-DD.")
        day = super()._deserialize(value, attr, data, **kwargs)
        _within_days(day)
        return day


class Moment(fields.AwareDateTime):
    """A moment as ISO 8601 (RFC 3339) with its time zone: `2026-04-01T00:00:00Z`, `2026-04-01T09:30-05:00`,
    fractions of a second to the microsecond (more digits are cut); its day from EARLIEST_DAY to LATEST_DAY, so
    that converting it to UTC never overflows. Answered in UTC."""

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> datetime:
        found = _ISO_MOMENT.fullmatch(value) if isinstance(value, str) else None
        if found is None:
            raise ValidationError("Not a valid moment: give ISO 8601 with a time zone, e.g. 2026-04-01T00:00:00Z.")
        day, time, fraction, zone = found.groups()
        try:
            moment = datetime.fromisoformat(f"{day}T{time}{'.' + fraction[:6].ljust(6, '0') if fraction else ''}"
                                            f"{'+00:00' if zone == 'Z' else zone}")
        except ValueError:
            raise ValidationError("Not a valid moment: no such day, time or time zone.") from None
        _within_days(moment.date())
        return moment.astimezone(timezone.utc)


class Count(fields.Integer):
    """A whole number from `minimum` (0) to `maximum` (MAX_COUNT): a JSON integer, or in a query string ASCII
    digits only (`int()` would take `²`-like digits of other scripts, `1_000` and surrounding spaces)."""

    def __init__(self, *, minimum: int = 0, maximum: int = MAX_COUNT, **kwargs: Any) -> None:
        super().__init__(strict=True, validate=validate.Range(min=minimum, max=maximum), **kwargs)

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> int:
        if isinstance(value, str):
            if not _ASCII_DIGITS.fullmatch(value) or len(value) > len(str(MAX_COUNT)):
                raise ValidationError(NOT_A_COUNT.format(most=MAX_COUNT))
            value = int(value)
        return super()._deserialize(value, attr, data, **kwargs)


def _bounded_number(value: Any, minimum: int, maximum: int, what: str) -> Any:
    """A JSON number (int, float, or the Decimal of a literal too large for either) from `minimum` to `maximum`."""
    if isinstance(value, bool) or not isinstance(value, (int, float, Decimal)):
        raise ValidationError(NOT_A.format(what=what))
    number = Decimal(value) if isinstance(value, int) else Decimal(str(value))
    if not number.is_finite() or not minimum <= number <= maximum:
        raise ValidationError(NOT_A_WITHIN.format(what=what, minimum=minimum, maximum=maximum))
    return value


class Quantity(fields.Field):
    """A figure: a JSON number or a decimal as text (`"420.5"`, digits and one point only), finite and of bounded
    size; `true`/`false` when `booleans` (an Art. 4-V/VI finding). The value goes to the domain as given."""

    def __init__(self, *, booleans: bool = False, **kwargs: Any) -> None:
        self.booleans = booleans
        kinds = [{"type": "number", "minimum": -MAX_QUANTITY, "maximum": MAX_QUANTITY},
                 {"type": "string", "pattern": f"^{_DECIMAL_TEXT.pattern}$"}]
        kinds += [{"type": "boolean"}] if booleans else []
        kwargs["metadata"] = {"anyOf": kinds, **kwargs.get("metadata", {})}
        super().__init__(**kwargs)

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> Any:
        if isinstance(value, bool):
            if not self.booleans:
                raise ValidationError("Not a number.")
            return value
        if isinstance(value, str):
            if not _DECIMAL_TEXT.fullmatch(value):
                raise ValidationError(NOT_A_DECIMAL.format(before=MAX_INTEGER_DIGITS, after=MAX_FRACTION_DIGITS))
            return value
        return _bounded_number(value, -MAX_QUANTITY, MAX_QUANTITY, "a number")


class DecimalText(fields.String):
    """A decimal as text (`"420.5"`): digits with at most one point, of bounded size (never NaN or Infinity)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(validate=validate.Regexp(f"^{_DECIMAL_TEXT.pattern}$",
                                                  error="Not a decimal as text, e.g. \"420.5\"."), **kwargs)


class Share(fields.Field):
    """A share of a whole: a fraction or decimal as text (`"1/3"`, `"0.5"`, `"1"`) or a JSON number, bounded."""

    def __init__(self, **kwargs: Any) -> None:
        kinds = [{"type": "number", "minimum": 0, "maximum": MAX_COUNT},
                 {"type": "string", "pattern": f"^{_SHARE_TEXT.pattern}$"}]
        kwargs["metadata"] = {"anyOf": kinds, **kwargs.get("metadata", {})}
        super().__init__(**kwargs)

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> Any:
        if isinstance(value, str) and _SHARE_TEXT.fullmatch(value):
            return value
        return _bounded_number(value, 0, MAX_COUNT, 'a share: a fraction ("1/3") or a decimal ("0.5") as text, or a '
                               "number")


class PathSegment(UnicodeConverter):
    """Every path parameter (`/cases/<case_ref>`): one segment of 1 to MAX_REFERENCE_CHARS characters, none a
    control character; anything else matches no route (404), so it never reaches a view or the database."""

    regex = f"[^/{_NOT_IN_A_LINE}{_SURROGATES}]{{1,{MAX_REFERENCE_CHARS}}}"
    #: The regex never matches a slash, which Werkzeug cannot tell from its text (it holds a `/`, excluded): said
    #: here, every rule with a path parameter is matched a segment at a time instead of by one regex per rule over
    #: the rest of the path (an act's path was tried against each of the 32 rules under `/cases/<case_ref>/`).
    part_isolating = True

    def __init__(self, map: Any, *args: Any, **kwargs: Any) -> None:  # noqa: A002 - Werkzeug's signature
        super().__init__(map, *args, **kwargs)
        self.regex = PathSegment.regex


def path_segment_schema(converter: PathSegment) -> dict[str, Any]:
    """How the OpenAPI document describes a path parameter."""
    return {"type": "string", "minLength": 1, "maxLength": MAX_REFERENCE_CHARS,
            "pattern": f"^[^/{_NOT_IN_A_LINE}]+$"}


class _Counted:
    """A container field of at most `max_items` items (the OpenAPI bound `_BOUND`), counted before any is read."""

    _BOUND = ""
    max_items: int

    def _bounded(self, max_items: int, kwargs: dict[str, Any]) -> dict[str, Any]:
        self.max_items = max_items
        return {**kwargs, "metadata": {**kwargs.get("metadata", {}), self._BOUND: max_items}}

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> Any:
        if isinstance(value, (list, dict)) and len(value) > self.max_items:
            raise ValidationError(TOO_MANY.format(most=self.max_items))
        return super()._deserialize(value, attr, data, **kwargs)  # type: ignore[misc]


class BoundedList(_Counted, fields.List):
    """A list of at most `max_items` items (`maxItems`)."""

    _BOUND = "maxItems"

    def __init__(self, cls_or_instance: Any, *, max_items: int = MAX_ITEMS, **kwargs: Any) -> None:
        super().__init__(cls_or_instance, **self._bounded(max_items, kwargs))


class BoundedDict(_Counted, fields.Dict):
    """A mapping of at most `max_items` entries (`maxProperties`)."""

    _BOUND = "maxProperties"

    def __init__(self, *, max_items: int = MAX_ITEMS, **kwargs: Any) -> None:
        super().__init__(**self._bounded(max_items, kwargs))
