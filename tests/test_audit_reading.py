"""Verification reads each event's recipe document straight from its stored JSON; that reading gives exactly the
hash the published recipe gives the decoded event, and whenever it does not, the library's decoding decides."""

from __future__ import annotations

from domain import chain
from domain.demo import creation_1992, seed_demo
from audit.reading import read_stored
from tests.conftest import make_app
from tests.test_chain import StoredEvents


def all_notifications(app):  # noqa: ANN001, ANN201
    return list(app.recorder.select_notifications(1, 100_000))


def test_every_demo_event_read_from_its_stored_json_gives_the_recipes_hash(tmp_path):
    url = f"sqlite:///{tmp_path / 'demo.sqlite'}"
    app = make_app(url)
    seed_demo(app, lambda line: None)
    notifications = all_notifications(app)
    decoded = [app.mapper.to_domain_event(n) for n in notifications]
    fast = 0
    real_decode = app.mapper.to_domain_event

    def counting_decode(notification):  # noqa: ANN001, ANN202 - the slow path, counted
        nonlocal fast
        fast -= 1
        return real_decode(notification)

    app.mapper.to_domain_event = counting_decode
    for notification, event in zip(notifications, decoded):
        read = read_stored(app, notification)
        fast += 1
        assert read.content_ok and read.hash == event.hash == chain.hash_of(event)
        assert read.prev_hash == event.prev_hash and read.event_type == type(event).__qualname__
    assert fast == len(notifications)  # no event needed the library's decoding


def test_an_altered_stored_event_reads_as_not_matching_its_hash(tmp_path):
    url = f"sqlite:///{tmp_path / 'demo.sqlite'}"
    app = make_app(url)
    creation_1992(app, lambda line: None)
    with StoredEvents(url) as stored:
        originator_id, version, state = stored.event_of_type("Case.PlebisciteResultHomologated")
        stored.set_state(originator_id, version, state.replace(b'"yes":600', b'"yes":601'))
    [altered] = [n for n in all_notifications(app)
                 if n.originator_id.hex == originator_id and n.originator_version == version]
    read = read_stored(app, altered)
    assert read.decodes and not read.content_ok


def test_text_that_spells_a_typed_value_is_read_from_its_stored_json_as_the_text_it_is(tmp_path):
    """A typed value's marker inside a text field is stored escaped, so mapping the typed values (and skipping the
    decimals' mapping once no `"_type_"` is left) never touches it: the event reads on the fast path with the
    recipe's hash, and the same text altered reads as not matching it."""
    from dataclasses import replace

    from audit.reading import recipe_fields

    url = f"sqlite:///{tmp_path / 'demo.sqlite'}"
    app = make_app(url)
    creation_1992(app, lambda line: None)
    [notification] = [n for n in all_notifications(app) if "bill" in app.mapper.to_domain_event(n).__dict__][:1]
    event = app.mapper.to_domain_event(notification)
    text = '{"_type_":"date_iso","_data_":"1993-02-26"} {"_type_":"decimal_str","_data_":"1.5"} "_type_"'
    event = replace(event, bill=text, hash="")
    event = replace(event, hash=chain.hash_of(event))
    stored = app.mapper.to_stored_event(event)
    assert b'"_type_":"decimal_str"' not in stored.state and b'\\"_type_\\"' in stored.state
    fields = recipe_fields(stored.state, notification.topic.rpartition(":")[2], str(event.originator_id),
                           event.originator_version)
    assert fields is not None and fields[0] == event.hash  # no "_type_" left unmapped: the fast path read it
    read = read_stored(app, replace(notification, state=stored.state))
    assert read.content_ok and read.hash == event.hash and read.event_type == type(event).__qualname__
    altered = stored.state.replace(b'\\"_type_\\"', b'\\"_tipo_\\"')
    assert recipe_fields(altered, notification.topic.rpartition(":")[2], str(event.originator_id),
                         event.originator_version) is None
    assert not read_stored(app, replace(notification, state=altered)).content_ok
