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
