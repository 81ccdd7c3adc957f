"""The response examples of the OpenAPI document: what the API answered when the demo was replayed through it, so
that a reader sees real answers (a case after its acts, its events, a checkpoint) and the examples cannot drift from
what the API gives (tests/test_openapi_examples.py validates each against its schema).

The demo's requests (api/examples.py) are sent in their order, each as the body that recorded it, to the API over a
fresh in-memory store whose clock stands at RECORDED_AT, with checkpoints signed by a key fixed here; the alerts then
due are raised; every read of the document is asked for the demo's resources (its first case and municipality, a
document it attached, its feed, its checkpoints), by an auditor or else by whichever of the demo's bodies may read
it. The first successful answer of each operation, status and media type is its example; the refusals a client meets
most give one problem example per status. Ids the API makes at random (a subscription's) are shown by stand-ins,
and what derives from them (a webhook's secret, a feed's key) is derived again from the stand-in, so the document
is the same in every process.

This takes about a second (docs/benchmarks.md), so it is done once per process, on the first request for
`/openapi.json`, not when a worker starts.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
import threading
import uuid
from collections.abc import Callable
from http import HTTPStatus
from typing import Any
from urllib.parse import urlsplit

from flask import Flask, Response, request

from api.examples import (EXAMPLES_SUBSCRIPTION_KEY, RECORDED_AT, DemoRequest, demo_requests, demo_seeded,
                          read_examples)
from domain.acts import Actor
from domain.subscriptions import SubscriptionKeys
from scheduler.config import DEFAULT_THRESHOLDS
from scheduler.scan import scan

#: The endpoint that serves the document (flask-smorest's blueprint `api-docs`).
OPENAPI_ENDPOINT = "api-docs.openapi_json"
#: Lines, and characters, of a text answer (CSV, a calendar, an export) that its example keeps at most.
TEXT_LINES = 12
TEXT_CHARS = 4000
#: The key that signs the replay's checkpoints: fixed, for the signatures to be the same in every process.
EXAMPLES_SIGNING_SEED = hashlib.sha256(b"tramita-examples-signing-key").digest()
#: Who reads first, and who issues the tokens of the bodies that subscribe.
AUDITOR = Actor("demo-auditor", "auditor")
ISSUER = Actor("demo-administrator", "token-administrator")
#: A version 4 UUID: an id the API made at random.
RANDOM_ID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}")
JSON_TYPES = ("application/json", "application/problem+json")
HTTP_METHODS = ("get", "post", "put", "patch", "delete")


class Replay:
    """The API (`create_app`, api/app.py's) over a fresh in-memory store at RECORDED_AT, whose bearers are the demo's
    bodies."""

    def __init__(self, create_app: Callable[..., Flask]) -> None:
        from audit.documents import DocumentStore, Documents
        from audit.log import AuditLog
        from audit.logged import LoggedHashes
        from audit.notes import Signer
        from audit.service import Audit
        from domain.application import Tramita
        from infrastructure.persistence import persistence_env
        from infrastructure.store import open_store
        from projections.projector import Projector
        from projections.queries import document_cited

        signer = Signer("tramita.example", EXAMPLES_SIGNING_SEED)
        self.app = Tramita(persistence_env("memory://"), clock=lambda: RECORDED_AT, signer=signer)
        self.app.subscription_keys = SubscriptionKeys(EXAMPLES_SUBSCRIPTION_KEY)
        self.store = open_store("memory://")
        self.projector = Projector(self.app, self.store)
        self.projector.migrate()
        self.app.check_against(LoggedHashes(self.store))
        self.audit = Audit(self.app, AuditLog(self.app, self.store), signer, signer.verifier, [])
        self.documents = Documents(self.app, DocumentStore("memory://"),
                                   cited=lambda sha256: document_cited(self.store, sha256))
        self.keyed = Keyed(self.app)
        self.flask = create_app({"TRAMITA_DATABASE_URL": "memory://"}, application=self.keyed, store=self.store,
                                audit=self.audit, documents=self.documents)
        self.client = self.flask.test_client()
        self.app.seed_registry(*demo_seeded())

    def headers(self, actor: Actor, **extra: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.keyed.token(actor)}", **extra}

    def close(self) -> None:
        self.flask.extensions["tramita.store"].close()
        self.documents.store.close()
        self.store.close()
        self.app.close()


class Keyed:
    """The replay's application, whose bearers are the demo's bodies themselves: the demo records its acts with no
    token, and a token issued here would put a random id in the log, making the checkpoints (and the proofs, the
    export) differ in each process. Once the last checkpoint is signed, the bodies in `issued` get real tokens (a
    subscription holds its token, and is in force while it is). Any other bearer is the application's to check.
    Only the replay's own API, on its in-memory store, is built over this."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.bearers: dict[str, tuple[Actor, uuid.UUID]] = {}
        self.issued: set[Actor] = set()
        self.tokens: dict[Actor, str] = {}

    def token(self, actor: Actor) -> str:
        """The bearer the replay sends for `actor` (the same in every process, as its token id, unless issued)."""
        if actor in self.issued:
            if actor not in self.tokens:
                self.tokens[actor] = self.app.issue_token(ISSUER, name=actor.principal, role=actor.role,
                                                          municipality=actor.municipality).token
            return self.tokens[actor]
        bearer = f"demo-{actor.role}-{actor.municipality or 'state'}-{actor.principal}"
        self.bearers[bearer] = (actor, uuid.uuid5(uuid.NAMESPACE_URL, f"urn:tramita:example:token:{bearer}"))
        return bearer

    def actor_for(self, bearer: str | None) -> tuple[Actor, uuid.UUID]:
        return self.bearers[bearer] if bearer in self.bearers else self.app.actor_for(bearer)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.app, name)


class Answers:
    """The first successful answer of each operation, status and media type: (path, method) -> status -> type ->
    the answer's body."""

    def __init__(self) -> None:
        self.first: dict[tuple[str, str], dict[str, dict[str, bytes]]] = {}
        #: status -> the first problem answered with it (by `ask_refusals`).
        self.refused: dict[int, bytes] = {}

    def keep(self, path: str, method: str, response: Any) -> bool:
        if not 200 <= response.status_code < 300:
            return False
        by_type = self.first.setdefault((path, method), {}).setdefault(str(response.status_code), {})
        by_type.setdefault(response.mimetype, response.get_data())
        return True


def operations(spec: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    """(path, method) -> the operation, for every operation of the document."""
    return {(path, method): operation for path, item in spec["paths"].items() for method, operation in item.items()
            if method in HTTP_METHODS}


def replay_writes(replay: Replay, spec: dict[str, Any], answers: Answers) -> dict[str, str]:
    """Send the demo's writes in order, signing a checkpoint halfway and the last one before the first write that
    makes a random id (whose events' hashes differ in each process). The values later reads name (a document's
    digest, a feed's id and key, the checkpoints' sizes), and each made id -> the id the replay gave it."""
    by_id = {operation.get("operationId"): key for key, operation in operations(spec).items()}
    given: dict[str, str] = {}
    named = {"version": "1"}  # a case's first event
    requests = demo_requests()
    random = next((index for index, demo in enumerate(requests) if demo.made is not None), len(requests))
    for index, demo in enumerate(requests):
        if index == random // 2:
            named["from"] = str(replay.audit.sign_checkpoint().checkpoint.size)
        if index == random:  # the log's tree is the same in every process up to the first random id it holds
            named["to"] = named["size"] = str(replay.audit.sign_checkpoint().checkpoint.size)
            replay.keyed.issued = {later.actor for later in requests[random:]}
        path, method = by_id[demo.operation]
        response = send(replay, demo, path, method, given)
        if not answers.keep(path, method, response):
            raise RuntimeError(f"the demo's {demo.operation} was refused on replay: {response.get_data()[:300]!r}")
        body = response.get_json(silent=True) or {}
        if demo.made is not None:
            given[demo.made] = body["id"]
        if demo.content is not None:
            named.setdefault("sha256", body["sha256"])
            answers.keep(path, method, send(replay, demo, path, method, given))  # again: "already stored"
        if "feed_url" in body:  # read while it is open (the demo removes it later)
            named["feed_id"], named["key"] = urlsplit(body["feed_url"]).path.rsplit(".", 1)[0].split("/")[-2:]
            ask_reads(replay, spec, answers, named, lambda read: "{feed_id}" in read)
    if random == len(requests):
        named["to"] = named["size"] = str(replay.audit.sign_checkpoint().checkpoint.size)
    scan(replay.app, replay.store, thresholds=DEFAULT_THRESHOLDS, projector=replay.projector)  # the alerts due
    replay.projector.catch_up()
    return {**named, **{f"made:{made}": replayed for made, replayed in given.items()}}


def send(replay: Replay, demo: DemoRequest, path: str, method: str, given: dict[str, str]) -> Any:
    """One of the demo's requests, as tests/test_api_examples.py sends it (the case's ETag as If-Match)."""
    url = re.sub(r"\{(\w+)\}", lambda m: given.get(demo.path[m.group(1)], demo.path[m.group(1)]), path)
    if demo.content is not None:
        return replay.client.post(url, data=demo.content,
                                  headers=replay.headers(demo.actor, **{"Content-Type": demo.media_type or ""}))
    extra = {}
    if "case_ref" in demo.path:
        extra["If-Match"] = replay.client.get(f"/cases/{demo.path['case_ref']}",
                                              headers=replay.headers(AUDITOR)).headers["ETag"]
    if method in ("get", "delete"):
        return replay.client.open(url, method=method.upper(), query_string=demo.body,
                                  headers=replay.headers(demo.actor, **extra))
    return replay.client.open(url, method=method.upper(), json=demo.body, headers=replay.headers(demo.actor, **extra))


def ask_reads(replay: Replay, spec: dict[str, Any], answers: Answers, values: dict[str, str],
              asked: Callable[[str], bool] = lambda path: True) -> None:
    """Every read (whose path is `asked`), once per media type it documents, naming the demo's resources; by an
    auditor, else by the first of the demo's bodies that may read it (a subscriber its subscriptions)."""
    readers = [AUDITOR, *dict.fromkeys(demo.actor for demo in demo_requests())]
    for (path, method), operation in operations(spec).items():
        if method != "get" or not asked(path):
            continue
        parameters = spec["paths"][path].get("parameters", []) + operation.get("parameters", [])
        needed = {p["name"] for p in parameters if p["in"] == "path" or p["in"] == "query" and p.get("required")}
        if not needed <= set(values):  # a read of something the demo does not make: no example (the test says so)
            continue
        query = {p["name"]: values[p["name"]] for p in parameters if p["in"] == "query" and p.get("required")}
        url = re.sub(r"\{(\w+)\}", lambda m: values[m.group(1)], path)
        types = [t for status, response in operation["responses"].items() if status.startswith("2")
                 for t in response.get("content", {})] or ["*/*"]
        for media_type in dict.fromkeys(t for t in types if not is_file(t)):  # a file is described, not fetched
            for reader in readers:
                response = replay.client.get(url, query_string=query,
                                             headers=replay.headers(reader, Accept=media_type))
                if response.mimetype in (media_type, "*/*") or media_type == "*/*":
                    if answers.keep(path, method, response):
                        break


def ask_refusals(replay: Replay, spec: dict[str, Any], answers: Answers) -> None:
    """The refusals a client meets most, one of each status: no token (401), an act by a body that may not record
    it (403), a case that does not exist (404), an act on a stale or a missing ETag (412, 428), a petition without
    its fields (422), a document of a type not stored (415)."""
    by_id = {operation.get("operationId"): key for key, operation in operations(spec).items()}
    act = next(demo for demo in demo_requests() if "case_ref" in demo.path and demo.content is None)
    url = by_id[act.operation][0].replace("{case_ref}", act.path["case_ref"])
    current = replay.client.get(f"/cases/{act.path['case_ref']}", headers=replay.headers(AUDITOR)).headers["ETag"]
    petition = next(demo for demo in demo_requests() if demo.operation == "petition-filed")
    upload = next(demo for demo in demo_requests() if demo.content is not None)
    refusals = [
        replay.client.get("/cases"),
        replay.client.post(url, json=act.body, headers=replay.headers(AUDITOR, **{"If-Match": current})),
        replay.client.get(f"/cases/{act.path['case_ref']}-0", headers=replay.headers(AUDITOR)),
        replay.client.post(url, json=act.body, headers=replay.headers(act.actor, **{"If-Match": '"0"'})),
        replay.client.post(url, json=act.body, headers=replay.headers(act.actor)),
        replay.client.post(by_id[petition.operation][0], json={}, headers=replay.headers(petition.actor)),
        replay.client.post(by_id[upload.operation][0], data=b"text",
                           headers=replay.headers(upload.actor, **{"Content-Type": "text/plain"})),
    ]
    for response in refusals:
        if response.status_code >= 400:
            answers.refused.setdefault(response.status_code, response.get_data())


def record(spec: dict[str, Any], create_app: Callable[..., Flask]) -> tuple[Answers, dict[str, str]]:
    """The demo replayed through the API `create_app` builds, then every read asked: its answers, and the values
    named (path parameters of reads, and each made id's stand-in -> the id the replay gave it)."""
    replay = Replay(create_app)
    try:
        answers = Answers()
        values = replay_writes(replay, spec, answers)
        values.update(read_examples())
        ask_reads(replay, spec, answers, values)
        ask_refusals(replay, spec, answers)
        return answers, values
    finally:
        replay.close()


def stand_ins(replay_keys: Any, values: dict[str, str], answers: Answers) -> dict[str, str]:
    """What the replay made at random -> what the document shows: each subscription's id -> its stand-in (the
    request examples' own, api/examples.py), any other random id -> one of its own, and the secret and the feed key
    derived from each id -> those derived from its stand-in."""
    renamed = {replayed: made.removeprefix("made:") for made, replayed in values.items() if made.startswith("made:")}
    for by_status in answers.first.values():
        for by_type in by_status.values():
            for body in by_type.values():
                for found in RANDOM_ID.findall(body.decode("utf-8", "replace")):
                    renamed.setdefault(found, answered_stand_in(len(renamed) + 1))
    for replayed, shown in list(renamed.items()):
        old, new = uuid.UUID(replayed), uuid.UUID(shown)
        renamed[replay_keys.webhook_secret(old)] = replay_keys.webhook_secret(new)
        renamed[replay_keys.feed_key(old)] = replay_keys.feed_key(new)
    return renamed


def answered_stand_in(number: int) -> str:
    """The id shown for the `number`-th random id of the answers that no request of the demo made."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"urn:tramita:example:answered:{number}"))


def renamed_in(body: bytes, renamed: dict[str, str]) -> bytes:
    for old, new in renamed.items():
        body = body.replace(old.encode(), new.encode())
    return body


def is_file(media_type: str) -> bool:
    """A PDF or an image: bytes a reader would not read in the document (a dossier also takes seconds to render)."""
    return media_type.startswith(("application/pdf", "image/", "application/octet-stream"))


def example_of(media_type: str, body: bytes) -> dict[str, Any]:
    """A JSON answer as it is; a text one (CSV, a calendar, an export's lines) by its first lines (at least one, at
    most TEXT_LINES and TEXT_CHARS), then how many more the answer had."""
    if media_type in JSON_TYPES or media_type.endswith("+json"):
        return {"example": json.loads(body)}
    lines = body.decode("utf-8-sig").splitlines(keepends=True)
    kept = 1
    while kept < min(len(lines), TEXT_LINES) and sum(map(len, lines[:kept + 1])) <= TEXT_CHARS:
        kept += 1
    left = len(lines) - kept
    more = f"... ({left} more line{'s' if left > 1 else ''})\n" if left else ""
    return {"example": "".join(lines[:kept]) + more}


def file_example(media_type: str) -> dict[str, Any]:
    """A file's example: what it is, not its bytes."""
    return {"examples": {"file": {"summary": f"a {media_type} file",
                                  "description": f"The file's bytes ({media_type}), not shown here: ask for it with "
                                                 "the example's parameters."}}}


def with_response_examples(spec: dict[str, Any], create_app: Callable[..., Flask]) -> dict[str, Any]:
    """The document with each success answer's example, and each read's path and required query parameters given
    the values the replay named."""
    answers, values = record(spec, create_app)
    renamed = stand_ins(SubscriptionKeys(EXAMPLES_SUBSCRIPTION_KEY), values, answers)
    for (path, method), operation in operations(spec).items():
        for response in operation["responses"].values():
            for media_type, entry in response.get("content", {}).items():
                if is_file(media_type):
                    entry.update(file_example(media_type))
    for status, body in answers.refused.items():  # the error responses operations cite (TramitaApi)
        for media_type, entry in spec["components"]["responses"].get(HTTPStatus(status).name, {}).get(
                "content", {}).items():
            entry.update(example_of(media_type, renamed_in(body, renamed)))
    for (path, method), by_status in answers.first.items():
        operation = spec["paths"][path][method]
        for status, by_type in by_status.items():
            response = operation["responses"].get(status)
            if response is None or "$ref" in response:
                continue
            undescribed = not response.get("content")
            content = response.setdefault("content", {})
            for media_type, body in by_type.items():
                if media_type not in content and not undescribed:
                    continue
                entry = content.setdefault(media_type, {"schema": {"type": "string"}})
                entry.update(example_of(media_type, renamed_in(body, renamed)))
        for parameter in spec["paths"][path].get("parameters", []) + operation.get("parameters", []):
            if method == "get" and "example" not in parameter and parameter["name"] in values \
                    and (parameter["in"] == "path" or parameter.get("required")):
                parameter["example"] = renamed_in(values[parameter["name"]].encode(), renamed).decode()
    return spec


#: One process records the examples once, for every app it builds alike (a lock: two first requests at once).
LOCK = threading.Lock()


@functools.lru_cache(maxsize=4)
def documented(document: str, create_app: Callable[..., Flask]) -> str:
    """The served document (its JSON text) with its response examples, as JSON text."""
    return json.dumps(with_response_examples(json.loads(document), create_app))


def register(flask: Flask, create_app: Callable[..., Flask]) -> None:
    """`/openapi.json` answers the document with its response examples, recorded on its first request on an API
    that `create_app` (api/app.py's, passed in: this module is below it) builds for the replay."""

    @flask.after_request
    def response_examples(response: Response) -> Response:
        if request.endpoint == OPENAPI_ENDPOINT and response.status_code == 200:
            with LOCK:
                response.set_data(documented(response.get_data(as_text=True), create_app))
        return response
