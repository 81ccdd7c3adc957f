"""How an event's state becomes the bytes stored and back: the library's JSON, written and read by orjson when
that gives the same.

Stored events are kept forever and hashed, so the bytes must stay what the library's `JSONTranscoder` writes.
orjson writes and parses the same JSON several times faster; `StoredJSONTranscoder` uses it only for values the
two treat alike (`written_alike`, `_decoded`) and leaves everything else, errors included, to the library's own
encoder and decoder. It stands on the library's public transcoder: `types`, `names`, `Transcoding.encode`/`decode`.
tests/test_stored_json.py compares the two byte for byte; the measurements are in docs/benchmarks.md.
"""

from __future__ import annotations

from datetime import date, datetime
from decimal import Decimal
from typing import Any

import orjson
from eventsourcing.persistence import DatetimeAsISO, JSONTranscoder, Mapper, StoredEvent, Transcoding
from eventsourcing.utils import TopicError

from domain import domain_topic

#: The types orjson and the library's encoder write alike, by exact type (dates, timestamps and decimals through
#: the library's transcodings, which orjson hands back to it).
_ALIKE = frozenset({str, int, bool, type(None), date, datetime, Decimal})
_OPTIONS = orjson.OPT_PASSTHROUGH_DATETIME  # dates and timestamps to the transcodings, not orjson's own ISO text


class DateAsISO(Transcoding):
    """Stores a `datetime.date` (legal dates) as ISO text."""

    type = date
    name = "date_iso"

    def encode(self, obj: date) -> str:
        return obj.isoformat()

    def decode(self, data: str) -> date:
        return date.fromisoformat(data)


#: The transcodings that write a value as its `isoformat()`: the library's for timestamps, ours for dates.
_ISO_TRANSCODINGS = (DatetimeAsISO, DateAsISO)


def written_alike(value: Any) -> bool:
    """Whether orjson writes `value` as the library's encoder does, judged by exact type: text, integers, booleans,
    None, dicts with text keys, lists and tuples of these, and dates, timestamps and decimals (handed back to their
    transcodings). Not alike: a UUID (orjson writes bare text), a float (written otherwise), any subclass. An
    integer beyond 64 bits, a lone surrogate or deep nesting makes orjson raise, and the library's encoder decides."""
    kind = type(value)
    if kind in _ALIKE:
        return True
    if kind is dict:
        for key, item in value.items():
            if type(key) is not str or (type(item) not in _ALIKE and not written_alike(item)):
                return False
        return True
    if kind is list or kind is tuple:
        for item in value:
            if type(item) not in _ALIKE and not written_alike(item):
                return False
        return True
    return False


class StoredJSONTranscoder(JSONTranscoder):
    """The library's JSON transcoder, whose bytes orjson writes, and reads, when that is the same (the module's
    docstring).

    Reading: orjson refuses NaN, infinities, lone surrogates and deep nesting, and reads an integer beyond 64 bits
    as a float; so a row it refuses, a row holding a float (tramita stores none), a value a transcoding refuses,
    or anything but `bytes` is read by the library's decoder, which decides, error included."""

    def encode(self, obj: Any) -> bytes:
        try:
            alike = written_alike(obj)
        except RecursionError:
            alike = False
        if alike:
            try:
                return orjson.dumps(obj, default=self._transcoded, option=_OPTIONS)
            except orjson.JSONEncodeError:
                pass  # an integer beyond 64 bits, a surrogate, deep nesting: the library's encoder decides
        return super().encode(obj)

    def _transcoded(self, value: Any) -> dict[str, Any]:
        """`value` as the library's encoder writes a registered type: `{"_type_": <name>, "_data_": <encoded>}`.
        A type with no transcoding raises, and orjson's error sends the whole state to the library's encoder."""
        transcoding = self.types[type(value)]
        if type(transcoding) in _ISO_TRANSCODINGS:  # by exact class: a subclass may write something else
            return {"_type_": transcoding.name, "_data_": value.isoformat()}
        return {"_type_": transcoding.name, "_data_": transcoding.encode(value)}

    def decode(self, data: bytes) -> Any:
        if type(data) is bytes:
            try:
                return _decoded(orjson.loads(data), self.names)
            except Exception:  # noqa: BLE001 - whatever went otherwise, the library's decoder decides
                pass
        return super().decode(data)


#: What orjson may put in a list that `_decoded` must look at.
_NESTED = frozenset({dict, list, float})


class _NotAlike(Exception):
    """orjson read a value the library's decoder may read otherwise (a float: see `StoredJSONTranscoder`)."""


def _decoded(value: Any, names: dict[str, Transcoding]) -> Any:
    """`value` as parsed by orjson, with the library's decoding rule applied to every object, innermost first, as
    its decoder's object hook applies it: an object of exactly the members `_type_` and `_data_` becomes what the
    transcoding of that name decodes. Raises on a float, and where the library's rule raises.

    A member whose value is text, a number or null is passed over; a transcoded value whose `_data_` is text (a
    date, a timestamp, a decimal: nothing inside it to decode first) is decoded where it is found."""
    kind = type(value)
    if kind is dict:
        for key, item in value.items():
            kind = type(item)
            if kind is str or item is None or kind is int or kind is bool:
                continue
            if kind is dict:
                if len(item) == 2 and "_type_" in item and "_data_" in item and type(item["_data_"]) is str:
                    value[key] = names[item["_type_"]].decode(item["_data_"])
                else:
                    value[key] = _decoded(item, names)
            elif kind is list:
                value[key] = _decoded(item, names)
            else:  # a float
                raise _NotAlike
        if len(value) == 2 and "_type_" in value and "_data_" in value:
            return names[value["_type_"]].decode(value["_data_"])
        return value
    if kind is list:
        if not _NESTED.isdisjoint(map(type, value)):
            for index, item in enumerate(value):
                kind = type(item)
                if kind is dict or kind is list:
                    value[index] = _decoded(item, names)
                elif kind is float:
                    raise _NotAlike
        return value
    if kind is float:
        raise _NotAlike
    return value


class DomainMapper(Mapper):
    """The library's mapper, reading only events whose topic names a class of the `domain` package.

    The library resolves a stored event's topic by importing the module it names, which runs that module's code,
    and a database administrator can write any topic (`domain.domain_topic`). Any other topic is refused with the
    library's `TopicError`, as a topic of no class is, before anything is imported."""

    def to_domain_event(self, stored_event: StoredEvent) -> Any:
        if not domain_topic(stored_event.topic):
            raise TopicError(f"Failed to resolve topic {stored_event.topic!r:.200}: not an event class of the domain "
                             "package")
        return super().to_domain_event(stored_event)
