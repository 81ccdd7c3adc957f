"""The one bootstrap: every process (the API's workers, the CLI, the projector, the scheduler) builds its
application, its audit service and its projector here, from the environment, with the wall clock read at this
edge and passed in.

Settings read: TRAMITA_DATABASE_URL (infrastructure/persistence.py), TRAMITA_SIGNING_KEY and TRAMITA_LOG_ORIGIN
(audit/keys.py), TRAMITA_VERIFIER_KEY, TRAMITA_WITNESS_DIR and TRAMITA_WITNESS_URL (audit/witness.py),
TRAMITA_PROJECTOR_CACHE_BYTES (projections/cache.py), TRAMITA_SUBSCRIPTION_KEY (domain/subscriptions.py).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING

from infrastructure.persistence import MEMORY_FACTORY, persistence_env

if TYPE_CHECKING:
    from audit.documents import Documents
    from audit.service import Audit
    from domain.application import Tramita
    from projections.projector import Projector
    from infrastructure.store import Store

DEFAULT_DATABASE_URL = "sqlite:///var/tramita.sqlite"
#: What tramita's processes create is their owner's only: files 0600 (the SQLite database and its -wal and -shm,
#: the scheduler's lock file, any key or secret file), directories 0700.
PRIVATE_UMASK = 0o077


def system_clock() -> datetime:
    """The wall clock, read at the edge and passed into the application."""
    return datetime.now(timezone.utc)


def private_files() -> None:
    """From now on this process creates files 0600 and directories 0700 (its umask; existing files keep theirs)."""
    os.umask(PRIVATE_UMASK)


def database_url() -> str:
    return os.environ.get("TRAMITA_DATABASE_URL", DEFAULT_DATABASE_URL)


def build_application(url: str | None = None, *, create_table: bool | None = None,
                      clock: Callable[[], datetime] = system_clock, signing: bool = True,
                      read_only: bool = False) -> Tramita:
    """The one place where the store, the clock, the statute and the signing key are wired together.

    Event tables are created by `tramita migrate`; on PostgreSQL no other command creates them (concurrent
    workers creating them race), on SQLite and in memory every command may (one file, one writer). With
    `read_only` nothing is created: a SQLite file that does not exist is refused (StoreMissingError). With
    `signing`, the key `TRAMITA_SIGNING_KEY` names (if set) signs every event stored.
    """
    from audit.keys import signer_from
    from domain.application import Tramita

    url = url or database_url()
    if create_table is None:
        create_table = not url.startswith(("postgresql://", "postgres://")) and not read_only
    env = persistence_env(url, create_table=create_table)
    if "SQLITE_DBNAME" in env:
        path = Path(env["SQLITE_DBNAME"])
        if read_only and not path.is_file():
            raise StoreMissingError(f"TRAMITA_DATABASE_URL: there is no database at {path} (nothing was created)")
        if not read_only:
            path.parent.mkdir(parents=True, exist_ok=True)
    elif read_only and env["PERSISTENCE_MODULE"] == MEMORY_FACTORY:
        raise StoreMissingError("TRAMITA_DATABASE_URL: memory:// holds nothing outside the process that made it")
    from domain.subscriptions import parse_key

    app = Tramita(env, clock=clock, signer=signer_from(os.environ) if signing else None)
    app.subscription_keys = parse_key(os.environ.get("TRAMITA_SUBSCRIPTION_KEY"))
    return app


class StoreMissingError(Exception):
    """A read-only command was pointed at a store that does not exist."""


def build_audit(app: Tramita, store: Store, *, key: str | None = None) -> Audit:
    """The audit service over an application and its database: the tree, the signer, the trusted verifier key
    (`key`, else TRAMITA_VERIFIER_KEY, else the signing key's), the witnesses (TRAMITA_WITNESS_DIR/_URL). From
    then on the application checks every aggregate an act reads against that tree's leaves (audit/logged.py)."""
    from audit.keys import trusted_verifier
    from audit.log import AuditLog
    from audit.logged import LoggedHashes
    from audit.service import Audit
    from audit.witness import witnesses_from

    app.check_against(LoggedHashes(store, app.recorder))
    return Audit(app, AuditLog(app, store), app.signer, trusted_verifier(os.environ, key, app.signer),
                 witnesses_from(os.environ))


def build_projector(app: Tramita, names: Sequence[str] | None = None, **options: object) -> Projector:
    """The projector over `app`'s events and the projections' database (the same TRAMITA_DATABASE_URL), its
    aggregate cache within TRAMITA_PROJECTOR_CACHE_BYTES."""
    from projections.cache import cache_bytes
    from projections.projector import Projector
    from infrastructure.store import open_store

    options.setdefault("cache_bytes", cache_bytes(os.environ))
    return Projector(app, open_store(database_url()), names=names, **options)


def build_documents(app: Tramita, store: Store, url: str | None = None) -> Documents:
    """The documents acts cite (audit/documents.py), kept in the database of `url` (default
    TRAMITA_DATABASE_URL); whether one is cited is read from the `attachments` projection of `store`. Their tables
    are made by `tramita migrate`; on SQLite (one file, one writer), as the event tables, by any command too."""
    from audit.documents import Documents, DocumentStore
    from projections.queries import document_cited

    url = url or database_url()
    documents = DocumentStore(url)
    if not url.startswith(("postgresql://", "postgres://")) and not documents.memory:
        DocumentStore.migrate(store)
    return Documents(app, documents, cited=lambda sha256: document_cited(store, sha256))
