"""The API's wiring: one application, its read store, its audit service and its documents for a process, then
the Flask app over them (api/app.py). Servers and tests call `create_app`; the API package never builds these."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from flask import Flask

from api.app import create_app as api_app
from api.app import settings_from
from audit.documents import DocumentStore, Documents
from infrastructure.store import open_store
from projections.queries import document_cited
from tramita.bootstrap import build_application, build_audit, private_files, system_clock


def create_app(config: Mapping[str, str] | None = None, *, clock: Callable[[], datetime] | None = None,
               application: Any = None) -> Flask:
    """The API. `config` defaults to the `TRAMITA_*` environment; tests pass a clock or a built application."""
    private_files()  # the SQLite database, should this worker create it, is its owner's only
    config = {k: v for k, v in os.environ.items() if k.startswith("TRAMITA_")} if config is None else dict(config)
    url = settings_from(config)["database_url"]
    app = application or build_application(url, clock=clock or system_clock)
    store = open_store(url)
    documents = Documents(app, DocumentStore(url), cited=lambda sha256: document_cited(store, sha256))
    return api_app(config, application=app, store=store, audit=build_audit(app, store), documents=documents)
