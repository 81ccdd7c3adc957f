"""Reading what a stored event holds for the audit record: its chain hash, its link, its signature, and whether
its content still gives its hash, straight from the stored bytes (shared by the log's writer, its signer and the
verification)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

import orjson
from eventsourcing.utils import resolve_topic

from domain import chain, domain_topic


def stored_chain_hash(app: Any, state: bytes) -> str:
    """The chain hash an event's stored state holds ("" when the state does not decode or holds none)."""
    try:
        mapper = app.mapper
        if mapper.cipher:
            state = mapper.cipher.decrypt(state)
        if mapper.compressor:
            state = mapper.compressor.decompress(state)
        value = orjson.loads(state).get("hash")
    except Exception:  # undecodable bytes: the leaf commits to a zero hash; verify names the event
        return ""
    return value if isinstance(value, str) else ""


@dataclass(slots=True)
class StoredRead:
    """What verification needs of one stored event, read straight from its stored JSON."""

    event_type: str
    hash: str
    prev_hash: str | None
    signature: str | None
    name: str | None
    content_ok: bool
    decodes: bool = True


#: The library's typed JSON values, as they appear in a stored event, and the recipe's tags for them. Inside a JSON
#: string a quote is escaped, so these byte sequences only ever occur as the typed values themselves.
_DATE, _DATE_TAG = b'{"_type_":"date_iso","_data_":', b'{"$date":'
_DATETIME, _DATETIME_TAG = b'{"_type_":"datetime_iso","_data_":', b'{"$datetime":'
_DECIMAL, _DECIMAL_TAG = b'{"_type_":"decimal_str","_data_":', b'{"$decimal":'
_loads, _dumps, _SORTED, _sha256 = orjson.loads, orjson.dumps, orjson.OPT_SORT_KEYS, hashlib.sha256


def topic_problem(topic: Any, originator_topic: Any) -> str | None:
    """What is wrong with an event's stored topics, which its chain hash does not cover (None: nothing).

    The hash covers the event class's qualified name (`type`), not the module the topic names, and not the
    `originator_topic` of an aggregate's first event (recipe step 1, as stored events have always been hashed).
    So the topic must still name a class of that qualified name, and a first event's `originator_topic` must name
    the aggregate its event class belongs to (the topic without the event class's own name): either rewritten
    would silently change what the stored events decode as.
    """
    if not isinstance(topic, str):
        return "its topic is not text"
    found = _RESOLVED.get(topic)
    if found is None and not domain_topic(topic):  # its module is not imported to find out
        found = _RESOLVED[topic] = ""
    if found is None:
        try:
            found = _RESOLVED[topic] = getattr(resolve_topic(topic), "__qualname__", "")
        except Exception:  # a module or class that no longer exists: the event no longer decodes
            found = _RESOLVED[topic] = ""
    if found != topic.rpartition(":")[2]:
        return f"its topic {topic[:80]!r} names no event class of this application"
    if originator_topic is not None and originator_topic != topic.rpartition(".")[0]:
        return f"its originator_topic {str(originator_topic)[:80]!r} is not the aggregate of {topic[:80]!r}"
    return None


_RESOLVED: dict[str, str] = {}


def recipe_fields(state: bytes, event_type: str, id_text: str, version: Any) -> tuple[Any, ...] | None:
    """`read_stored`'s fast path on an event's plain stored JSON: (hash, prev_hash, signature, originator_topic,
    name) when the recipe's document built from it gives the hash it stores; None otherwise (not decided: the
    event is then read through the library). `id_text` is the event's aggregate id as `str(UUID)` writes it."""
    try:
        state = state.replace(_DATE, _DATE_TAG).replace(_DATETIME, _DATETIME_TAG)
        if b'"_type_"' in state:  # no "_type_" left: no decimal to map either (the replace would copy nothing)
            state = state.replace(_DECIMAL, _DECIMAL_TAG)
            if b'"_type_"' in state:  # a typed value the recipe maps otherwise (a UUID in the payload)
                return None
        document = _loads(state)
        pop = document.pop
        stored_hash, signature = pop("hash", None), pop("signature", None)
        originator_topic = pop("originator_topic", None)  # left out by the recipe (chain.EXCLUDED_FIELDS)
        pop("class_version", None)  # so is the library's record of the class version
        document["originator_id"] = {"$uuid": id_text}
        document["originator_version"] = version
        document["type"] = event_type
        if _sha256(_dumps(document, option=_SORTED)).hexdigest() != stored_hash:
            return None
        get = document.get
        return stored_hash, get("prev_hash"), signature, originator_topic, get("number") or get("key")
    except Exception:  # not JSON, not an object, a value orjson does not encode: the library's decoding judges it
        return None


def read_stored(app: Any, notification: Any) -> StoredRead:
    """The event's chain fields and whether its content matches its hash (and its topics are its own).

    Fast path: the recipe's document is built from the stored JSON itself (its typed values mapped onto the
    recipe's tags, orjson encoding it with sorted keys exactly as the recipe's `json.dumps` does), which is what
    decoding the event and encoding it again gives. Whenever that does not give the stored hash (an upcast event,
    a class moved to another topic, a UUID or an unusual value in the payload, or an altered event), the event is
    decoded by the library and hashed from its object, as `domain.chain.hash_of` does: the fast path only ever
    saves time, it never decides that an event is altered.
    """
    topic = notification.topic
    event_type = topic.rpartition(":")[2] if isinstance(topic, str) else repr(topic)[:80]
    try:
        state = notification.state
        mapper = app.mapper
        if mapper.cipher or mapper.compressor:
            if mapper.cipher:
                state = mapper.cipher.decrypt(state)
            if mapper.compressor:
                state = mapper.compressor.decompress(state)
        fields = recipe_fields(state, event_type, str(notification.originator_id), notification.originator_version)
        if fields is not None and topic_problem(topic, fields[3]) is None:
            stored_hash, prev_hash, signature, _, name = fields
            return StoredRead(event_type, stored_hash, prev_hash, signature, name, True)
    except Exception:  # noqa: S110 - judged below through the library's decoding, which names the problem
        pass
    try:
        if topic_problem(topic, None) is not None:
            raise ValueError(topic_problem(topic, None))
        event = app.mapper.to_domain_event(notification)
    except Exception:  # undecodable stored bytes or topic: that is the finding
        return StoredRead(event_type, stored_chain_hash(app, notification.state), None, None, None, False, False)
    chain_hash = event.hash if isinstance(getattr(event, "hash", None), str) else ""
    content_ok = chain.recomputed_hash(event) == chain_hash and \
        topic_problem(topic, getattr(event, "originator_topic", None)) is None
    return StoredRead(type(event).__qualname__, chain_hash, getattr(event, "prev_hash", None),
                      getattr(event, "signature", None), getattr(event, "number", None) or getattr(event, "key", None),
                      content_ok)
