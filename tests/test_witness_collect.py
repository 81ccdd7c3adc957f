"""The log's side of the witness protocol (`audit.witness_cosign`), on SQLite and PostgreSQL, against a witness
served in this process: cosignatures are stored and served by `GET /checkpoints/latest`; a cosignature lost with a
witness killed after its commit is fetched again from the size it answers (409); an unreachable witness is no
alarm and gets the checkpoint at the next signing."""

from __future__ import annotations

import threading
from wsgiref.simple_server import WSGIRequestHandler, make_server

import pytest

from audit.cosign import AddCheckpoint, Cosigner, cosignatures
from audit.notes import Signer
from audit.witness_cosign import CosigningWitness, cosignature_lines
from audit.witness_service import Witness, WitnessStore, wsgi_app
from domain.acts import Actor
from tests.api_client import ApiHarness
from tests.conftest import BACKENDS
from tests.servers import free_port

ORIGIN = "tramita.test/acre"
ADMIN = Actor("admin", "token-administrator")


class Quiet(WSGIRequestHandler):
    def log_message(self, *args: object) -> None:
        pass


class ServedWitness:
    """A witness answering on loopback from a thread of this process."""

    def __init__(self, tmp_path, log_key) -> None:  # noqa: ANN001
        self.cosigner = Cosigner.generate("tce.ac.gov.br/testemunha")
        self.store = WitnessStore(tmp_path / "witness.sqlite")
        self.server = make_server("127.0.0.1", 0, wsgi_app(Witness(self.store, self.cosigner, [log_key])),
                                  handler_class=Quiet)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.server.server_port}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(params=BACKENDS)
def api(request, new_database_url, tmp_path):  # noqa: ANN001, ANN201
    harness = ApiHarness(new_database_url(request.param), signer=Signer.generate(ORIGIN))
    witness = ServedWitness(tmp_path, harness.flask.extensions["tramita.audit"].signer.verifier)
    harness.witness = witness
    harness.audit = harness.flask.extensions["tramita.audit"]
    harness.audit.witnesses.append(CosigningWitness(witness.cosigner.verifier, witness.url))
    yield harness
    witness.close()
    harness.close()


def test_the_latest_checkpoint_is_served_with_the_witness_cosignature(api):
    signed = api.audit.sign_checkpoint().checkpoint
    served = api.client.get("/checkpoints/latest").get_data(as_text=True)
    assert served.startswith(signed.note) and served != signed.note
    assert cosignatures(served, [api.witness.cosigner.verifier])
    assert api.client.get(f"/checkpoints/{signed.size}").get_data(as_text=True) == served


def test_a_cosignature_lost_after_the_witness_committed_is_fetched_again_from_the_size_it_answers(api):
    first = api.audit.sign_checkpoint().checkpoint
    api.app.issue_token(ADMIN, name="clerk", role="tre")
    second = api.audit.log.sign_checkpoint(api.audit.signer, signed_at=api.app.clock(),
                                           legal_date=api.app.today()).checkpoint  # signed, not yet sent
    proof = api.audit.log.consistency(first.size, second.size)
    witness = api.audit.witnesses[-1]
    assert witness.add_checkpoint(AddCheckpoint(first.size, tuple(proof), second.note))[0] == 200  # answer lost
    refusals: list[str] = []
    assert api.audit.deliver_to_witnesses(refusals=refusals) == 1 and refusals == []
    [line] = cosignature_lines(api.audit.log.store, second.size)
    assert cosignatures(second.note + line, [api.witness.cosigner.verifier])
    assert [r.status for r in api.witness.store.refused()] == [409]  # the first try, from the size it had lost


def test_an_unreachable_witness_is_no_alarm_and_gets_the_checkpoint_at_the_next_signing(api):
    api.witness.close()
    reachable = api.audit.witnesses.pop()
    port = free_port()  # nothing listens there
    api.audit.witnesses.append(CosigningWitness(reachable.verifier, f"http://127.0.0.1:{port}"))
    lines: list[tuple] = []
    signed = api.audit.sign_checkpoint(lambda event, **fields: lines.append((event, fields))).checkpoint
    assert [event for event, _ in lines] == ["witness-failed"] and not cosignature_lines(api.audit.log.store,
                                                                                         signed.size)
    again = ServedWitness(api.witness.store.path.parent / "again", api.audit.signer.verifier)
    try:
        api.audit.witnesses[-1] = CosigningWitness(again.cosigner.verifier, again.url)
        api.audit.sign_checkpoint()  # the tree has not grown: the unwitnessed checkpoint is sent now
        assert cosignatures(api.audit.latest_checkpoint().note, [again.cosigner.verifier])
        assert again.store.latest(ORIGIN)[:2] == (signed.size, api.audit.log.root(signed.size))
    finally:
        again.close()


def test_a_witness_added_to_a_log_with_history_is_sent_only_its_latest_checkpoint(api):
    added = api.audit.witnesses.pop()
    sizes = []
    for n in range(3):
        api.app.issue_token(ADMIN, name=f"clerk {n}", role="tre")
        sizes.append(api.audit.sign_checkpoint().checkpoint.size)
    api.audit.witnesses.append(added)
    refusals: list[str] = []
    assert api.audit.deliver_to_witnesses(refusals=refusals) == 1 and refusals == []
    assert [bool(cosignature_lines(api.audit.log.store, size)) for size in sizes] == [False, False, True]
    assert api.witness.store.latest(ORIGIN)[0] == sizes[-1] and api.witness.store.refused() == []
    assert api.audit.deliver_to_witnesses() == 0  # nothing above what it cosigned: nothing sent
