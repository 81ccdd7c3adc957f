"""A test client for the HTTP API: a seeded application on a SQLite file, a movable clock, and tokens by role.

Tokens are issued in-process (what `tramita token create` does); every act goes through HTTP.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import Any

import pytest

from flask.testing import FlaskClient

from tramita.web import create_app
from audit.notes import Signer
from domain.acts import Actor
from domain.application import Tramita
from infrastructure.persistence import persistence_env
from projections.projector import Projector
from infrastructure.store import open_store
from tests.stores import NOW, SEEDED_ON

ADMIN = Actor("test-admin@cli", "token-administrator")


@dataclass
class Clock:
    now: datetime = NOW

    def __call__(self) -> datetime:
        return self.now


@dataclass
class ApiHarness:
    url: str
    #: More `TRAMITA_*` settings for the app factory (the database URL is `url`).
    config: dict[str, str] = field(default_factory=dict)
    clock: Clock = field(default_factory=Clock)
    #: The deployment's signing key (None: an unsigned log, no receipts, no checkpoints).
    signer: Signer | None = None

    def __post_init__(self) -> None:
        self.app = Tramita(persistence_env(self.url), clock=self.clock, signer=self.signer)
        self.store = open_store(self.url)
        self.projector = Projector(self.app, self.store)
        self.projector.migrate()
        self.app.seed_registry(Actor("ibge-seed", "ibge"), SEEDED_ON)
        self.flask = create_app({**self.config, "TRAMITA_DATABASE_URL": self.url}, application=self.app)
        self.client: FlaskClient = self.flask.test_client()
        self._tokens: dict[tuple[str, str | None], str] = {}

    def close(self) -> None:
        self.flask.extensions["tramita.store"].close()
        self.flask.extensions["tramita.documents"].store.close()
        self.store.close()
        self.app.close()

    def token(self, role: str, municipality: str | None = None) -> str:
        key = (role, municipality)
        if key not in self._tokens:
            name = f"{role}-{municipality}" if municipality else role
            self._tokens[key] = self.app.issue_token(ADMIN, name=f"test-{name}", role=role,
                                                     municipality=municipality).token
        return self._tokens[key]

    def headers(self, role: str, municipality: str | None = None, **extra: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token(role, municipality)}", **extra}

    def get(self, path: str, role: str = "auditor", **kwargs: Any):  # noqa: ANN201
        return self.client.get(path, headers=self.headers(role), **kwargs)

    def etag(self, case: str) -> str:
        response = self.get(f"/cases/{case}")
        assert response.status_code == 200, response.get_json()
        return response.headers["ETag"]

    def act(self, case: str, act: str, role: str, on: date, municipality: str | None = None,
            expect: int = 200, **body: Any) -> dict[str, Any]:
        """Record one act over HTTP with the case's current ETag; the response body (checked for `expect`)."""
        response = self.client.post(
            f"/cases/{case}/acts/{act}", json={"occurred_on": on.isoformat(), **body},
            headers=self.headers(role, municipality, **{"If-Match": self.etag(case)}))
        assert response.status_code == expect, response.get_json()
        return response.get_json()

    def open_case(self, role: str, on: date, expect: int = 201, **body: Any) -> dict[str, Any]:
        response = self.client.post("/cases", json={"occurred_on": on.isoformat(), **body},
                                    headers=self.headers(role))
        assert response.status_code == expect, response.get_json()
        return response.get_json()

    def notifications(self) -> int:
        return self.app.recorder.max_notification_id() or 0


@contextmanager
def harness_on(backend: str, request: pytest.FixtureRequest, folder: Path) -> Iterator[ApiHarness]:
    """A harness on a fresh store of its own ("sqlite": a file in `folder`; "postgres": a new database on the
    session's throwaway cluster), for a fixture wider than one test; closed, and its database dropped, after."""
    if backend == "sqlite":
        harness = ApiHarness(f"sqlite:///{folder / 'api.sqlite'}")
        try:
            yield harness
        finally:
            harness.close()
        return
    cluster = request.getfixturevalue("postgres_cluster")
    name = cluster.create_database()
    harness = ApiHarness(cluster.url(name, pool_size=1))
    try:
        yield harness
    finally:
        harness.close()
        cluster.drop_database(name)
