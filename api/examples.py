"""The request examples of the OpenAPI document, taken from the demo's own acts, so that a clerk trying an act in
Swagger UI starts from one that was recorded, valid, by its competent body, and the examples cannot drift from what
the domain accepts.

The demo (`domain/demo.py`, then `domain/demo_further.py` for the acts its four cases do not reach) is recorded
once per process on an in-memory store, with the application standing in for the API: each write it makes that
is recorded (not those the demo expects refused) is kept as the HTTP request that would make it, the body a view
parses into that method's keyword arguments. The first request of each operation is its example: the body
(`requestBody` `example`) and the path parameter it names (the case number or IBGE code, as parameter `example`).

The demo's acts that attach a document (audit/demo_files.py: its illustrative PDFs, rendered the same in every process)
are kept with their `attachments`, each preceded by the upload (`document-uploaded`, the file's bytes) that
stores it, by the body that records the act: replayed in order, every attachment names a stored document.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import uuid
from dataclasses import dataclass
from datetime import date, datetime, timezone
from decimal import Decimal
from typing import Any

from apispec import BasePlugin

from domain.acts import Actor

#: When the demo is recorded for its examples: after its last legal date, so that no act of it is in the future.
RECORDED_AT = datetime(2026, 11, 30, 15, 0, tzinfo=timezone.utc)
#: The application's writes that are not acts on a case: (method, operationId, path parameter, legal date's field).
OTHER_WRITES = {"open_case": ("petition-filed", None, "occurred_on"),
                "record_figure": ("figure-recorded", "ibge_code", "occurred_on"),
                "amend_statute": ("statute-amended", None, "published_on"),
                "add_toponym": ("toponym-added", None, "occurred_on")}
#: The application's writes of subscriptions (api/subscriptions.py): a webhook or a feed made, one removed.
SUBSCRIPTION_WRITES = ("subscribe", "remove_subscription")
#: The subscription key of the application that records the examples (an in-memory store of this process only).
EXAMPLES_SUBSCRIPTION_KEY = b"tramita-examples-subscription-key"
#: The fields of a version of an amendment (api/statute.py); the parameter's other fields go under `extra`.
VERSION_FIELDS = ("id", "article", "effective_from", "effective_until", "value", "comparison", "source")


@dataclass(frozen=True)
class DemoRequest:
    """One write of the demo as the HTTP request that records it: the operation, its path parameters, its body,
    and who recorded it (the token's role and municipality)."""

    operation: str
    path: dict[str, str]
    body: dict[str, Any]
    actor: Actor
    #: The id the write gave what it made (a subscription's), which later requests name in their path.
    made: str | None = None
    #: An upload's body (`document-uploaded`): the file's bytes, sent with `media_type` (the body is then empty).
    content: bytes | None = None
    media_type: str | None = None


def plain(value: Any) -> Any:
    """The JSON a client sends for a keyword argument: dates as YYYY-MM-DD, decimals as text."""
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items() if v is not None}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, Decimal):
        return str(value)
    return value


def _version(entry: dict[str, Any]) -> dict[str, Any]:
    extra = {k: v for k, v in entry.items() if k not in VERSION_FIELDS}
    return {**{k: v for k, v in entry.items() if k in VERSION_FIELDS}, **({"extra": extra} if extra else {})}


class _Recording:
    """The application as the demo sees it: every write that returns is noted as its HTTP request."""

    def __init__(self, app: Any, case_acts: dict[str, str], files: dict[str, bytes] | None = None) -> None:
        self._app, self._case_acts, self.requests = app, case_acts, []
        #: Who seeded the IBGE registry, and on which legal date (a replay seeds it alike before the requests).
        self.seeded: tuple[Actor, date] | None = None
        #: sha256 -> the bytes of each document the demo may attach (uploaded before the act citing it).
        self._files = {hashlib.sha256(content).hexdigest(): content for content in (files or {}).values()}

    def idempotently(self, request: Any, record: Any, attachments: Any = None) -> Any:
        """An act with its attachments: the uploads of its documents, then the act with `attachments` in its body
        (each by its SHA-256 and the name the act gives it, as a client sends them)."""
        before = len(self.requests)
        acted = self._app.idempotently(request, record, attachments)
        if attachments is not None and attachments.documents and len(self.requests) == before + 1:
            act = self.requests.pop()
            uploads = [DemoRequest("document-uploaded", {}, {}, act.actor, content=self._files[d["sha256"]],
                                   media_type=d["type"]) for d in attachments.documents]
            body = {**act.body, "attachments": [{"sha256": d["sha256"], "name": d["name"]}
                                                for d in attachments.documents]}
            self.requests.extend([*uploads, dataclasses.replace(act, body=body)])
        return acted

    def seed_registry(self, actor: Actor, occurred_on: date) -> Any:
        self.seeded = (actor, occurred_on)
        return self._app.seed_registry(actor, occurred_on)

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self._app, name)
        if name not in self._case_acts and name not in OTHER_WRITES and name not in SUBSCRIPTION_WRITES:
            return attribute

        @functools.wraps(attribute)
        def write(*args: Any, **kwargs: Any) -> Any:
            acted = attribute(*args, **kwargs)
            if name in SUBSCRIPTION_WRITES:
                self.requests.append(self._subscription_request(name, args, kwargs, acted))
            else:
                self.requests.append(self._request(name, args, kwargs))
            return acted

        return write

    @staticmethod
    def _subscription_request(method: str, args: tuple[Any, ...], kwargs: dict[str, Any], done: Any) -> DemoRequest:
        """A subscription's request: its body (a webhook's or a feed's filters), or the removal's path (the id the
        subscription was given) and its `reason`, sent as the query the API reads."""
        (actor, *rest), kwargs = args, dict(kwargs)
        if method == "remove_subscription":
            return DemoRequest("subscription-removed", {"subscription_id": rest[0]}, {"reason": kwargs["reason"]},
                               actor)
        operation = "feed-opened" if kwargs.pop("channel", "webhook") == "calendar" else "subscription-created"
        body = plain({k: v for k, v in kwargs.items() if k not in ("token_id", "private_urls")})
        return DemoRequest(operation, {}, body, actor, made=str(done.subscription.id))

    def _request(self, method: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> DemoRequest:
        if method in self._case_acts:
            case, actor, occurred_on = args
            return DemoRequest(self._case_acts[method], {"case_ref": case},
                               plain({"occurred_on": occurred_on, **kwargs}), actor)
        operation, parameter, legal_date = OTHER_WRITES[method]
        *path, actor, occurred_on = args
        if method == "amend_statute":
            kwargs = {**kwargs, "parameters": [_version(entry) for entry in kwargs["parameters"]]}
        return DemoRequest(operation, dict(zip([parameter], path)) if parameter else {},
                           plain({legal_date: occurred_on, **kwargs}), actor)


def demo_requests() -> tuple[DemoRequest, ...]:
    """Every write of the demo and of its further acts, in the order they were recorded (once per process)."""
    return demo_recording()[0]


def demo_seeded() -> tuple[Actor, date]:
    """Who seeded the IBGE registry before the demo's first write, and on which legal date."""
    seeded = demo_recording()[1]
    assert seeded is not None, "the demo seeds the registry"
    return seeded


@functools.cache
def demo_recording() -> tuple[tuple[DemoRequest, ...], tuple[Actor, date] | None]:
    """The demo's writes and its registry seed, recorded once per process on an in-memory store."""
    from api.acts import ACTS
    from domain.application import Tramita
    from domain.demo import seed_demo
    from domain.demo_further import further_acts
    from domain.subscriptions import SubscriptionKeys
    from audit.demo_files import demo_files, described
    from infrastructure.persistence import persistence_env

    app = Tramita(persistence_env("memory://"), clock=lambda: RECORDED_AT)
    app.subscription_keys = SubscriptionKeys(EXAMPLES_SUBSCRIPTION_KEY)
    try:
        recording = _Recording(app, {act.method: act.name for act in ACTS}, demo_files())
        seed_demo(recording, say=lambda _: None, documents=described(demo_files()))
        further_acts(recording, say=lambda _: None)
        return named_alike(recording.requests), recording.seeded
    finally:
        app.close()


def stand_in(made: int) -> str:
    """The id shown for the `made`-th thing the demo makes under a random id (a subscription): the same in every
    process, so that the document is too."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"urn:tramita:example:{made}"))


def named_alike(requests: list[DemoRequest]) -> tuple[DemoRequest, ...]:
    """The requests with each random id the demo made (and the paths naming it) given its stand-in, in order."""
    named: dict[str, str] = {}
    for request in requests:
        if request.made is not None:
            named[request.made] = stand_in(len(named) + 1)
    return tuple(dataclasses.replace(request, made=named.get(request.made, request.made),
                                     path={k: named.get(v, v) for k, v in request.path.items()})
                 for request in requests)


def examples() -> dict[str, DemoRequest]:
    """operationId -> the demo's first request of that operation."""
    first: dict[str, DemoRequest] = {}
    for request in demo_requests():
        first.setdefault(request.operation, request)
    return first


def read_examples() -> dict[str, str]:
    """The path parameters of a read (a case, a municipality): the demo's first case and first municipality."""
    found: dict[str, str] = {}
    for request in demo_requests():
        for name, value in request.path.items():
            found.setdefault(name, value)
    return found


class ExamplesPlugin(BasePlugin):
    """Puts each write's example in the document: the request body's `example`, and its path parameter's (the
    case or municipality the act was recorded on); a read's path parameter gets the demo's first case or
    municipality."""

    def path_helper(self, path: str | None = None, operations: dict[str, Any] | None = None,
                    parameters: list[dict[str, Any]] | None = None, **kwargs: Any) -> None:
        named = dict(read_examples())
        for operation in (operations or {}).values():
            example = examples().get(operation.get("operationId"))
            if example is None:
                continue
            content = operation.get("requestBody", {}).get("content", {}).get("application/json")
            if content is not None:
                content["example"] = example.body
            named.update(example.path)
        for parameter in parameters or []:
            if parameter.get("in") == "path" and parameter.get("name") in named:
                parameter["example"] = named[parameter["name"]]
        return None

    def operation_helper(self, path: str | None = None, operations: dict[str, Any] | None = None,
                         **kwargs: Any) -> None:
        """A write without a body (a removal) shows its fields' example as its query parameters' (once the schema
        plugin has spread its query schema into them)."""
        for operation in (operations or {}).values():
            example = examples().get(operation.get("operationId"))
            if example is None or "requestBody" in operation:
                continue
            for parameter in operation.get("parameters", []):
                if (isinstance(parameter, dict) and parameter.get("in") == "query"
                        and parameter.get("name") in example.body):
                    parameter["example"] = example.body[parameter["name"]]
