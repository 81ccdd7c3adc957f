"""How an event's state becomes the bytes stored: the library's JSON, written by orjson when that is the same.

The library's `JSONTranscoder` writes a stored event's state with the standard `json` module (`,` and `:` as
separators, UTF-8 not ASCII-escaped), each value JSON lacks as `{"_type_": <transcoding>, "_data_": ...}`. That
encoding was a tenth of an act's cost. `StoredJSONTranscoder` writes the very same bytes with orjson, which
serializes the same JSON several times faster, whenever every value of the state is of a type both encode
alike: `str`, `int`, `bool`, None, a dict with `str` keys, a list or tuple of these, and the registered
transcodings' dates, timestamps and decimals (each handed back to Python: a date or a timestamp whose
transcoding writes its ISO text, the library's and `DateAsISO`, is written here as that transcoding writes it;
any other value goes to the library's own `_encode_obj`). Anything else (a UUID,
which orjson would write as a bare string; a float, which it writes differently; a subclass; an integer beyond
64 bits; a string that is not valid UTF-8; nesting deeper than orjson allows) is written by the library's encoder,
as before, error included. Reading is the library's, unchanged: old and new rows are alike.
tests/test_stored_json.py compares the two byte for byte.
"""

from __future__ import annotations

from datetime import date, datetime
from decimal import Decimal
from typing import Any

import orjson
from eventsourcing.persistence import DatetimeAsISO, JSONTranscoder, Transcoding

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
    """Whether orjson writes `value` as the library's encoder does (see the module's docstring)."""
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
    """The library's JSON transcoder, whose bytes orjson writes when they are the same (the module's docstring)."""

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

    def _transcoded(self, value: Any) -> Any:
        """What the library's `_encode_obj` makes of `value`, made without its calls for a date or a timestamp."""
        transcoding = self.types.get(type(value))
        if type(transcoding) in _ISO_TRANSCODINGS:  # by exact class: a subclass may write something else
            return {"_type_": transcoding.name, "_data_": value.isoformat()}
        return self._encode_obj(value)
