"""The per-aggregate hash chain: a SHA-256 over a canonical encoding of each event and its predecessor's hash.

Recipe (documented in the README so that an auditor can check an export offline):
1. take every stored field of the event except `hash`, `originator_topic`, `signature` (the application's
   signature over the event's log entry, added when it is stored: docs/audit.md) and `class_version` (the
   library's record of the event class's version), plus `type` (the event class's qualified name, e.g.
   `Case.PetitionFiled`); `prev_hash` is one of the fields;
2. encode it as JSON with sorted keys (a key that is not text as JSON writes it: `true`, `null`, a number's
   digits), no spaces (`,` and `:`), UTF-8 (not ASCII-escaped), where a date is
   `{"$date": "YYYY-MM-DD"}`, a timestamp `{"$datetime": ISO-8601}`, a decimal `{"$decimal": "1.5"}`,
   a UUID `{"$uuid": "…"}`; floats are never stored;
3. `hash = sha256(those bytes).hexdigest()`; the first event's `prev_hash` is 64 zeros.

An event is hashed as it was recorded. When an event class gains a field, its `class_version` grows and an
upcast fills the field in events stored before (`upcast_v1_v2`, run by the library as it reads them); the upcast
names the fields it added (`added_by_upcast`), and the hash of such an event is taken without them, so that it
is still the hash recorded, and an export shows the event as it was recorded.
"""

from __future__ import annotations

import hashlib
import json
from datetime import date, datetime, timezone
from decimal import Decimal
from typing import Any
from uuid import UUID

import orjson

GENESIS = "0" * 64
EXCLUDED_FIELDS = ("hash", "originator_topic", "signature", "class_version")
#: The member an upcast sets on an event read from an older class version: the names of the fields it added.
UPCAST_MARK = "added_by_upcast"
_EXCLUDED = frozenset({*EXCLUDED_FIELDS, UPCAST_MARK})


def added_by_upcast(state: dict[str, Any], **fields: Any) -> None:
    """In an `upcast_vN_vN+1`: give the stored event's state the new fields, and note them as not recorded."""
    state.update(fields)
    state[UPCAST_MARK] = sorted({*state.get(UPCAST_MARK, ()), *fields})


#: The types JSON has, taken as they are (by exact type: a subclass goes through `_tagged`).
_PLAIN = frozenset({str, int, bool, type(None)})


def canonical_value(value: Any) -> Any:
    """Map a stored value onto plain JSON, tagging the types JSON lacks."""
    return _canonical(value, True)


def _canonical(value: Any, as_text: bool) -> Any:
    """`canonical_value`; with `as_text` False, a date, a UUID and a UTC timestamp stay objects inside their tags,
    for orjson to write as `isoformat()` and `str()` write them (`canonical_bytes`; a timestamp in another zone
    is always written as text here, since orjson drops the seconds of an offset that has them)."""
    kind = type(value)
    if kind in _PLAIN:  # the common cases first, by exact type
        return value
    if kind is dict:
        return {key if type(key) is str else json_key(key): item if type(item) in _PLAIN else _canonical(item, as_text)
                for key, item in value.items()}
    if kind is date:
        return {"$date": value.isoformat() if as_text else value}
    if kind is list:
        return [item if type(item) in _PLAIN else _canonical(item, as_text) for item in value]
    if kind is datetime:  # every event's timestamp
        return {"$datetime": value.isoformat() if as_text or value.tzinfo is not timezone.utc else value}
    if kind is UUID:
        return {"$uuid": str(value) if as_text else value}
    return _tagged(value)


def _tagged(value: Any) -> Any:
    """`canonical_value` for every other type, subclasses included."""
    if isinstance(value, bool) or value is None or isinstance(value, (str, int)):
        return value
    if isinstance(value, datetime):
        return {"$datetime": value.isoformat()}
    if isinstance(value, date):
        return {"$date": value.isoformat()}
    if isinstance(value, Decimal):
        return {"$decimal": str(value)}
    if isinstance(value, UUID):
        return {"$uuid": str(value)}
    if isinstance(value, dict):
        return {json_key(key): canonical_value(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [canonical_value(item) for item in value]
    raise TypeError(f"cannot hash a value of type {type(value).__name__}: {value!r}")


def json_key(key: Any) -> str:
    """A dict's key as JSON writes it, as the stored event's JSON holds it (`True` as "true", `None` as "null", a
    number as its text), so that an event hashes alike when recorded and when read back; a key of any other type
    is refused, as JSON refuses it."""
    if isinstance(key, str):
        return str.__str__(key)  # a subclass's text as JSON writes it, whatever its own `__str__`
    if key is True or key is False or key is None:
        return _JSON_CONSTANTS[key]
    if isinstance(key, int):
        return int.__repr__(key)
    if isinstance(key, float):
        return _ENCODER.encode(key)
    raise TypeError(f"cannot hash a key of type {type(key).__name__}: {key!r}")


_JSON_CONSTANTS = {True: "true", False: "false", None: "null"}


def canonical_document(event_type: str, fields: dict[str, Any], *, as_text: bool = True) -> dict[str, Any]:
    """Step 1 of the recipe: the fields hashed, with the types JSON lacks tagged, and the event's `type`
    (`as_text`: see `_canonical`)."""
    added = fields.get(UPCAST_MARK)
    excluded = {*_EXCLUDED, *(name for name in added if isinstance(name, str))} \
        if isinstance(added, (list, tuple)) else _EXCLUDED  # a mark that names no fields (an edited row) hides none
    document = {key: item if type(item) in _PLAIN else _canonical(item, as_text) for key, item in fields.items()
                if key not in excluded}
    document["type"] = event_type
    return document


def canonical_bytes(event_type: str, fields: dict[str, Any]) -> bytes:
    """The canonical encoding of one event (step 1 and 2 of the recipe).

    orjson encodes the document with sorted keys byte for byte as the recipe's `json.dumps` does (every character
    escaped alike, keys in code point order: tests/test_chain_encoding.py), several times faster. The document it
    is given leaves the text of a date, a UUID and a UTC timestamp inside their tags to orjson, which writes the
    same text (`_canonical`). What orjson refuses (an integer beyond 64 bits) is encoded by `json` itself, which
    the recipe names."""
    try:
        return _dumps(canonical_document(event_type, fields, as_text=False), option=_SORTED)
    except orjson.JSONEncodeError:
        return recipe_bytes(canonical_document(event_type, fields))


def recipe_bytes(document: dict[str, Any]) -> bytes:
    """Step 2 exactly as the recipe states it: `json.dumps(sort_keys=True, separators=(",", ":"),
    ensure_ascii=False)`, UTF-8."""
    return _ENCODER.encode(document).encode("utf-8")


#: Step 2's encoder, built once (`json.dumps` builds one per call): it keeps nothing between two encodings.
_ENCODER = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)
_dumps, _SORTED = orjson.dumps, orjson.OPT_SORT_KEYS


def event_hash(event_type: str, fields: dict[str, Any]) -> str:
    return hashlib.sha256(canonical_bytes(event_type, fields)).hexdigest()


def hash_of(event: Any) -> str:
    """Recompute the hash of a (decoded) event object."""
    return event_hash(type(event).__qualname__, vars(event))


def recomputed_hash(event: Any) -> str | None:
    """The hash of a stored event, recomputed to check it; None (equal to no stored hash) when the recipe cannot
    encode its content: a lone surrogate that an edit of the stored JSON put in its text is no UTF-8, and no act
    ever recorded one (its fields refuse them), so no hash was ever taken over it."""
    try:
        return hash_of(event)
    except UnicodeEncodeError:
        return None


#: The members of an export line that its hash does not cover.
UNHASHED_MEMBERS = ("hash", "signature", "proof")


def export_document(event: Any) -> dict[str, Any]:
    """One line of an export: the canonical document the hash is taken over (recipe step 1), plus `hash` and,
    when the event was signed, `signature`.

    Offline check: drop the unhashed members (`hash`, `signature`, `proof`), encode the rest as in step 2,
    SHA-256 it and compare; each line's `prev_hash` is the previous line's `hash` (the first line's is 64 zeros).
    """
    document = {**canonical_document(type(event).__qualname__, vars(event)), "hash": event.hash}
    signature = getattr(event, "signature", None)
    if signature is not None:
        document["signature"] = signature
    return document
