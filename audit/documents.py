"""The documents acts cite (the decree, the law, the TRE's resolution): their bytes, addressed by SHA-256.

Where they are kept: in the database, beside the events (table `documents`: the hex digest, the media type, the
size, the bytes, when first stored), not in files. The events are the record and they cite a document by its
digest; kept in the same database, the bytes go wherever the events go: one backup (SQLite's online backup,
`pg_dump`) holds both, a restore never brings back events whose documents are missing, and the API workers, which
on PostgreSQL may run on several machines, all reach them with no shared file system.

Content-addressed: a document is stored once however often it is uploaded (by anyone), and never changed or
removed by tramita. Who uploaded it is kept beside it (`document_uploads`: the digest, the token's id, when).
Every read hashes the bytes again: a stored document whose bytes no longer give its digest (or whose recorded size
or type no longer matches them, or whose stored value is no longer bytes: text, a number) is `DocumentAlteredError`,
raised as a system alert (`document-altered`), and never served as if intact; a correct upload of the same bytes
writes them back, as bytes, and the alert stays.

Who may read one: every token reads every case (domain/access.py), so a document cited by an act of any case is
readable by every valid token, the auditors' included. One that no act cites yet is readable only by the tokens
that uploaded it (so that the store is no drop box between bodies, and does not tell who uploaded what): for any
other token it does not exist (404). Which documents are cited is read from the `attachments` projection.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from audit.tables import DOCUMENT_DDL, count_of, read_text, text_of
from domain.acts import Actor
from infrastructure.store import Store, open_store

PDF, PNG, JPEG = "application/pdf", "image/png", "image/jpeg"
#: The media types a document may have, each with the bytes every file of that type starts with (its magic).
MAGIC: dict[str, bytes] = {PDF: b"%PDF-", PNG: b"\x89PNG\r\n\x1a\n", JPEG: b"\xff\xd8\xff"}
DOCUMENT_TYPES = tuple(MAGIC)
#: The file extension a download is named with.
EXTENSIONS = {PDF: "pdf", PNG: "png", JPEG: "jpg"}
#: Who records the alerts of the document store (the system's role).
DOCUMENTS_ACTOR = Actor("tramita-documents", "scheduler")
ALTERED = "document-altered"


def _row_sql(dialect: str) -> str:
    """A stored document's row as a read must take it whatever an administrator wrote in it: the type as text, the
    size as an integer (NULL when it is not one), the value's bytes and the SQL type it is stored as. SQLite's
    columns take any value (text that is not UTF-8 would make its driver raise): its bytes are read with its type;
    PostgreSQL's `bytea` holds bytes only."""
    if dialect == "sqlite":
        return (f"SELECT {text_of(dialect, 'media_type')}, {count_of(dialect, 'size')}, CAST(content AS BLOB), "
                "typeof(content) FROM documents WHERE sha256 = ?")
    return "SELECT media_type, size, content, 'blob' FROM documents WHERE sha256 = ?"


def media_type_of(content: bytes) -> str | None:
    """The document type the bytes are, by their magic (None: not a PDF, PNG or JPEG)."""
    return next((kind for kind, magic in MAGIC.items() if content.startswith(magic)), None)


@dataclass(frozen=True)
class StoredDocument:
    sha256: str
    type: str
    size: int

    def as_dict(self) -> dict[str, Any]:
        return {"sha256": self.sha256, "type": self.type, "size": self.size}


class DocumentNotFoundError(Exception):
    """No document with that digest that this token may read."""


class DocumentAlteredError(Exception):
    """The stored bytes no longer give the document's digest (or its recorded size or type)."""

    def __init__(self, sha256: str, found: str, why: str) -> None:
        super().__init__(f"document {sha256}: {why}")
        self.sha256, self.found, self.why = sha256, found, why


class DocumentStore:
    """The `documents` tables, reached through connections of its own (one per thread at a time, kept for reuse;
    the read models' connection of an API worker is shared by its threads for reads only). With the in-memory
    event store, one in-memory database, used by one thread at a time."""

    def __init__(self, database_url: str) -> None:
        self.database_url = database_url
        self.memory = database_url in ("memory://", "memory:")
        self._lock = threading.Lock()
        self._idle: list[Store] = []
        self._opened: list[Store] = []
        self._memory_lock = threading.Lock()
        if self.memory:
            with self._connection() as store:
                self.migrate(store)

    @staticmethod
    def migrate(store: Store) -> None:
        """Create the tables (once): `tramita migrate` creates them with the audit log's (audit/tables.py)."""
        with store.transaction() as tx:
            for statement in DOCUMENT_DDL[store.dialect]:
                tx.execute(statement)

    @contextmanager
    def _connection(self) -> Iterator[Store]:
        if self.memory:
            with self._memory_lock:
                if not self._opened:
                    self._opened.append(open_store(self.database_url))
                yield self._opened[0]
            return
        with self._lock:
            store = self._idle.pop() if self._idle else None
        if store is None:
            store = open_store(self.database_url)
            with self._lock:
                self._opened.append(store)
        try:
            yield store
        finally:
            with self._lock:
                self._idle.append(store)

    def put(self, content: bytes, media_type: str, token_id: str, now: datetime,
            restored: Callable[[StoredDocument, str], None] | None = None) -> tuple[StoredDocument, bool]:
        """Store the bytes under their digest (once) and note the uploader; (the document, whether it is new).

        When the stored copy was altered, these bytes (which give the digest) are written back, and `restored`
        is told (the document and the digest the altered copy gave)."""
        digest = hashlib.sha256(content).hexdigest()
        document = StoredDocument(digest, media_type, len(content))
        at, found = now.isoformat(), None
        with self._connection() as store, store.transaction() as tx:
            rows = tx.execute(_row_sql(store.dialect), (digest,)).fetchall()
            if not rows:
                tx.execute("INSERT INTO documents (sha256, media_type, size, content, stored_at) "
                           "VALUES (?, ?, ?, ?, ?)", (digest, media_type, len(content), content, at))
            elif (found := _altered(document, rows[0])) is not None:
                tx.execute("UPDATE documents SET media_type = ?, size = ?, content = ? WHERE sha256 = ?",
                           (media_type, len(content), content, digest))
            tx.execute("INSERT INTO document_uploads (sha256, token_id, uploaded_at) VALUES (?, ?, ?) "
                       "ON CONFLICT (sha256, token_id) DO NOTHING", (digest, token_id, at))
        if found is not None and restored is not None:  # after the commit: an alert is saved in the event store
            restored(document, found)
        return document, not rows

    def describe(self, digests: list[str]) -> dict[str, StoredDocument]:
        """The stored documents among these digests, as recorded (type and size; the bytes are not read)."""
        if not digests:
            return {}
        with self._connection() as store:
            rows = store.query(f"SELECT sha256, media_type, size FROM documents WHERE sha256 IN "
                               f"({', '.join('?' * len(digests))})", list(digests))
        return {row[0]: StoredDocument(row[0], row[1], int(row[2])) for row in rows}

    def read(self, digest: str) -> tuple[StoredDocument, bytes] | None:
        """The document and its bytes, checked: DocumentAlteredError when they no longer match; None if absent."""
        with self._connection() as store:
            rows = store.query(_row_sql(store.dialect), (digest,))
        if not rows:
            return None
        media_type, size, content, stored_as = _fields(rows[0])
        document = StoredDocument(digest, media_type or "", size if size is not None else -1)
        found = _altered(document, rows[0])
        if found is not None:
            raise DocumentAlteredError(digest, found, _why(document, content, found, stored_as))
        return document, content

    def uploaded_by(self, digest: str, token_id: str) -> bool:
        with self._connection() as store:
            return bool(store.query("SELECT 1 FROM document_uploads WHERE sha256 = ? AND token_id = ?",
                                    (digest, token_id)))

    def close(self) -> None:
        with self._lock:
            for store in self._opened:
                store.close()
            self._opened, self._idle = [], []


def _fields(row: tuple[Any, ...]) -> tuple[str | None, int | None, bytes, str]:
    """A row `_row_sql` read: its type (None: not text), size (None: not an integer), bytes and SQL type."""
    size = row[1] if isinstance(row[1], int) and not isinstance(row[1], bool) else None
    return read_text(row[0]), size, bytes(row[2]) if row[2] is not None else b"", str(row[3])


def _altered(document: StoredDocument, row: tuple[Any, ...]) -> str | None:
    """The digest the stored row's bytes give, when the row no longer is `document` (None: it is intact): a value
    stored as anything but bytes is altered even when its bytes would give the digest."""
    media_type, size, content, stored_as = _fields(row)
    found = hashlib.sha256(content).hexdigest()
    if stored_as != "blob" or found != document.sha256 or size != len(content) or media_type_of(content) != media_type:
        return found
    return None


def _why(document: StoredDocument, content: bytes, found: str, stored_as: str = "blob") -> str:
    if stored_as != "blob":
        return f"its stored value is {stored_as}, not bytes"
    if found != document.sha256:
        return f"its stored bytes give SHA-256 {found}, not the digest it was stored under"
    if document.size != len(content):
        return f"its recorded size is {document.size} bytes, its stored bytes are {len(content)}"
    return f"its recorded type is {document.type!r}, its stored bytes are {media_type_of(content) or 'no such type'}"


@dataclass
class Documents:
    """What the API asks of the documents, one call each: upload, describe (for an act's attachments), read."""

    app: Any
    store: DocumentStore
    #: Is the digest cited by an act of some case (the `attachments` projection)?
    cited: Callable[[str], bool]

    def upload(self, content: bytes, media_type: str, token_id: str) -> tuple[StoredDocument, bool]:
        return self.store.put(content, media_type, token_id, self.app.clock(), restored=self._restored)

    def describe(self, digests: list[str]) -> dict[str, StoredDocument]:
        return self.store.describe(digests)

    def read(self, digest: str, token_id: str) -> tuple[StoredDocument, bytes]:
        """The document for this token, checked; DocumentNotFoundError unless it is cited by an act or the token
        uploaded it; DocumentAlteredError (and a system alert) when its stored bytes were changed."""
        if not (self.cited(digest) or self.store.uploaded_by(digest, token_id)):
            raise DocumentNotFoundError(digest)
        try:
            found = self.store.read(digest)
            if found is None:  # cited (an upload is never removed by tramita): its row was deleted
                raise DocumentNotFoundError(digest)
        except DocumentAlteredError as altered:
            self._alert(digest, altered.found, altered.why)
            raise
        except DocumentNotFoundError:
            self._alert(digest, "missing", "it is cited by an act and no longer stored")
            raise DocumentAlteredError(digest, "missing", "it is cited by an act and no longer stored") from None
        return found

    def _alert(self, digest: str, found: str, why: str) -> None:
        self.app.raise_system_alert(DOCUMENTS_ACTOR, kind=ALTERED, subject=f"document:{digest}:{found}",
                                    message=f"documento alterado: {digest}: {why}")

    def _restored(self, document: StoredDocument, found: str) -> None:
        self._alert(document.sha256, found, f"its stored bytes gave SHA-256 {found}; an upload of the original "
                                            "bytes wrote them back")
