"""The documents acts cite (the decree, the law, the TRE's resolution): their bytes, addressed by SHA-256.

Where they are kept: in the database, beside the events (table `documents`: the hex digest, the media type, the
size, the bytes, when first stored), not in files. The events are the record and they cite a document by its
digest; kept in the same database, the bytes go wherever the events go: one backup (SQLite's online backup,
`pg_dump`) holds both, a restore never brings back events whose documents are missing, and the API workers, which
on PostgreSQL may run on several machines, all reach them with no shared file system.

Content-addressed: a document is stored once however often it is uploaded (by anyone), and never changed by
tramita. Who uploaded it is kept beside it (`document_uploads`: the digest, the token's id, when it last did), and
the body whose upload added it (`document_additions`: the body, the size, the legal day), which its quota counts
(audit/document_limits.py). One that no act cites is removed TRAMITA_DOCUMENT_EXPIRY_DAYS after its last upload
(`Documents.expire`, run by the scheduler and `tramita documents expire`): each removal is recorded in the event log
as a system alert (`document-expired`), noted first in `document_removals` in the delete's own transaction so
that a crash before the alert is saved leaves it to the next run; a cited document is never removed.
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
from datetime import date, datetime, timedelta, timezone
from typing import Any

from audit.document_limits import Quota, legal_day, quota_lock_key
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
EXPIRED = "document-expired"


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
            restored: Callable[[StoredDocument, str], None] | None = None, *, body: str | None = None,
            quota: Quota | None = None) -> tuple[StoredDocument, bool]:
        """Store the bytes under their digest (once) and note the uploader; (the document, whether it is new).

        New bytes count for `body` (the uploader's) and must fit its `quota` (QuotaExceededError, nothing stored):
        the check and the insert are one transaction, which on SQLite holds the write lock from its start and on
        PostgreSQL takes the body's advisory lock first, so two uploads of one body are counted one after the other.
        When the stored copy was altered, these bytes (which give the digest) are written back, and `restored`
        is told (the document and the digest the altered copy gave)."""
        digest = hashlib.sha256(content).hexdigest()
        document = StoredDocument(digest, media_type, len(content))
        at, found, new = now.isoformat(), None, False
        with self._connection() as store, store.transaction() as tx:
            if body is not None and store.dialect == "postgresql":
                tx.execute("SELECT pg_advisory_xact_lock(?)", (quota_lock_key(body),))
            rows = tx.execute(_row_sql(store.dialect), (digest,)).fetchall()
            if not rows:
                if body is not None and quota is not None:
                    quota.check(len(content), *_used(tx, store.dialect, body, legal_day(now)), now)
                new = tx.execute("INSERT INTO documents (sha256, media_type, size, content, stored_at) VALUES "
                                 "(?, ?, ?, ?, ?) ON CONFLICT (sha256) DO NOTHING",
                                 (digest, media_type, len(content), content, at)).rowcount == 1
                if new and body is not None:
                    tx.execute("INSERT INTO document_additions (sha256, body, size, added_on) VALUES (?, ?, ?, ?) "
                               "ON CONFLICT (sha256) DO UPDATE SET body = excluded.body, size = excluded.size, "
                               "added_on = excluded.added_on", (digest, body, len(content),
                                                                legal_day(now).isoformat()))
            elif (found := _altered(document, rows[0])) is not None:
                tx.execute("UPDATE documents SET media_type = ?, size = ?, content = ? WHERE sha256 = ?",
                           (media_type, len(content), content, digest))
            tx.execute("INSERT INTO document_uploads (sha256, token_id, uploaded_at) VALUES (?, ?, ?) "
                       "ON CONFLICT (sha256, token_id) DO UPDATE SET uploaded_at = excluded.uploaded_at",
                       (digest, token_id, at))
        if found is not None and restored is not None:  # after the commit: an alert is saved in the event store
            restored(document, found)
        return document, new

    def describe(self, digests: list[str]) -> dict[str, StoredDocument]:
        """The stored documents among these digests, as recorded (type and size; the bytes are not read). A row
        whose type is not one of DOCUMENT_TYPES or whose size is not a positive integer (an administrator's edit:
        SQLite's columns take any value) is read whole, and so raised as DocumentAlteredError, never described."""
        if not digests:
            return {}
        with self._connection() as store:
            dialect = store.dialect
            rows = store.query(f"SELECT sha256, {text_of(dialect, 'media_type')}, {count_of(dialect, 'size')} "
                               f"FROM documents WHERE sha256 IN ({', '.join('?' * len(digests))})", list(digests))
        described = {}
        for digest, media_type, size in rows:
            kind = read_text(media_type)
            if kind not in DOCUMENT_TYPES or not isinstance(size, int) or isinstance(size, bool) or size < 1:
                self.read(digest)  # raises DocumentAlteredError, naming what the row's bytes give
                raise DocumentAlteredError(digest, "record", "its recorded type or size is not a document's")
            described[digest] = StoredDocument(digest, kind, size)
        return described

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

    def expire(self, now: datetime, days: int, cited: Callable[[str], bool], say: Callable[[Removal], str]
               ) -> list[Removal]:
        """Remove every document no act cites whose last upload (or, without one, whose storing) is `days` or more
        before `now`, with its uploads and its count for its body; each removal is noted in `document_removals`
        (`say` writes its message) in the same transaction, for `Documents.expire` to record as an event.

        Which documents are cited is the `attachments` projection, in the same database (the caller catches it up
        first): each delete is conditional on it, in SQL, and on the last upload still being the one judged old,
        so an act projected or an upload made since the judgement keeps the document. In memory (no projection in
        the documents' database), `cited` is asked instead, under the one connection's lock."""
        cutoff = now - timedelta(days=days)
        removed: list[Removal] = []
        with self._connection() as store:
            dialect = store.dialect
            uncited = "" if self.memory else \
                " AND NOT EXISTS (SELECT 1 FROM case_attachments a WHERE a.sha256 = d.sha256)"
            last = (f"(SELECT MAX({text_of(dialect, 'u.uploaded_at')}) FROM document_uploads u "
                    "WHERE u.sha256 = d.sha256)")
            found = store.query(f"SELECT d.sha256, {text_of(dialect, 'd.stored_at')}, {last}, "
                                f"{count_of(dialect, 'd.size')}, {text_of(dialect, 'd.media_type')}, "
                                f"(SELECT {text_of(dialect, 'b.body')} FROM document_additions b "
                                f"WHERE b.sha256 = d.sha256) FROM documents d WHERE 1 = 1{uncited}")
            for digest, stored_at, last_upload, size, media_type, body in found:
                since = _moment(last_upload if last_upload is not None else stored_at)
                if since is None or since > cutoff or (self.memory and cited(digest)):
                    continue  # not yet old, or undated (an edited row: kept, as nothing says it is old)
                removal = Removal(digest, read_text(stored_at) or "", now.isoformat(), size, read_text(media_type),
                                  read_text(body), since.isoformat(), days)
                same = "IS" if dialect == "sqlite" else "IS NOT DISTINCT FROM"
                with store.transaction() as tx:
                    gone = tx.execute(f"DELETE FROM documents WHERE sha256 = ? AND {text_of(dialect, 'stored_at')} "
                                      f"{same} ? AND {last.replace('d.sha256', '?')} {same} ?"
                                      f"{uncited.replace('d.sha256', '?')}",
                                      (digest, stored_at, digest, last_upload,
                                       *([digest] if uncited else []))).rowcount == 1
                    if gone:
                        tx.execute("DELETE FROM document_uploads WHERE sha256 = ?", (digest,))
                        tx.execute("DELETE FROM document_additions WHERE sha256 = ?", (digest,))
                        tx.execute("INSERT INTO document_removals (sha256, stored_at, removed_at, message, recorded) "
                                   "VALUES (?, ?, ?, ?, 0) ON CONFLICT (sha256, stored_at) DO NOTHING",
                                   (digest, removal.stored_at, removal.removed_at, say(removal)))
                if gone:
                    removed.append(removal)
        return removed

    def unrecorded_removals(self) -> list[tuple[str, str, str]]:
        """The removals not yet recorded as events: (digest, when it was stored, the message)."""
        with self._connection() as store:
            return [tuple(row) for row in store.query(  # type: ignore[misc]
                "SELECT sha256, stored_at, message FROM document_removals WHERE recorded = 0 ORDER BY removed_at")]

    def removal_recorded(self, digest: str, stored_at: str) -> None:
        with self._connection() as store, store.transaction() as tx:
            tx.execute("UPDATE document_removals SET recorded = 1 WHERE sha256 = ? AND stored_at = ?",
                       (digest, stored_at))

    def usage(self, cited: Callable[[str], bool]) -> dict[str, int]:
        """What the documents take: how many, their bytes, and the bytes of those no act cites (awaiting expiry);
        sizes as recorded (an edited size that is no integer counts 0). Cheap aggregates, for `/health`."""
        with self._connection() as store:
            size = count_of(store.dialect, "d.size")
            if not store.table_exists("documents"):  # PostgreSQL before `tramita migrate`
                return {"count": 0, "bytes": 0, "uncited_bytes": 0}
            if self.memory:
                rows = store.query(f"SELECT d.sha256, {size} FROM documents d")
                return {"count": len(rows), "bytes": sum(n or 0 for _, n in rows),
                        "uncited_bytes": sum(n or 0 for digest, n in rows if not cited(digest))}
            uncited = "NOT EXISTS (SELECT 1 FROM case_attachments a WHERE a.sha256 = d.sha256)" \
                if store.table_exists("case_attachments") else "1 = 1"
            count, total, waiting = store.query(
                f"SELECT COUNT(*), COALESCE(SUM({size}), 0), COALESCE(SUM(CASE WHEN {uncited} THEN {size} END), 0) "
                "FROM documents d")[0]
        return {"count": int(count), "bytes": int(total), "uncited_bytes": int(waiting)}

    def uploaded_by(self, digest: str, token_id: str) -> bool:
        with self._connection() as store:
            return bool(store.query("SELECT 1 FROM document_uploads WHERE sha256 = ? AND token_id = ?",
                                    (digest, token_id)))

    def close(self) -> None:
        with self._lock:
            for store in self._opened:
                store.close()
            self._opened, self._idle = [], []


@dataclass(frozen=True)
class Removal:
    """A document removed because no act cited it in time: what it was, when it was stored and removed, and why."""

    sha256: str
    stored_at: str
    removed_at: str
    size: int | None
    type: str | None
    body: str | None
    last_upload: str
    days: int


def _used(tx: Any, dialect: str, body: str, day: date) -> tuple[int, int, int]:
    """The bytes of the documents `body` added that are still stored, on the legal day `day` and in all, and how
    many it added on `day`."""
    size = count_of(dialect, "a.size")
    today, in_all, added = tx.execute(
        f"SELECT COALESCE(SUM(CASE WHEN a.added_on = ? THEN {size} END), 0), COALESCE(SUM({size}), 0), "
        "COUNT(CASE WHEN a.added_on = ? THEN 1 END) "
        "FROM document_additions a JOIN documents d ON d.sha256 = a.sha256 WHERE a.body = ?",
        (day.isoformat(), day.isoformat(), body)).fetchall()[0]
    return int(today), int(in_all), int(added)


def _moment(value: object) -> datetime | None:
    """A stored timestamp (as `text_of` read it), aware (UTC when it names no zone); None when it is none."""
    try:
        moment = datetime.fromisoformat(read_text(value) or "")
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=timezone.utc)


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

    def upload(self, content: bytes, media_type: str, token_id: str, *, body: str | None = None,
               quota: Quota | None = None) -> tuple[StoredDocument, bool]:
        """Store an upload; new bytes count for `body` within `quota` (QuotaExceededError: nothing stored)."""
        return self.store.put(content, media_type, token_id, self.app.clock(), restored=self._restored, body=body,
                              quota=quota)

    def describe(self, digests: list[str]) -> dict[str, StoredDocument]:
        """The stored documents an act cites; a row an edit left unreadable raises the alarm (and the act is refused
        with DocumentAlteredError)."""
        try:
            return self.store.describe(digests)
        except DocumentAlteredError as altered:
            self._alert(altered.sha256, altered.found, altered.why)
            raise

    def expire(self, days: int, catch_up: Callable[[], object] | None = None) -> list[Removal]:
        """Remove the documents no act cited within `days` of their last upload, each removal recorded in the event
        log as a system alert (kind `document-expired`, subject `document:<sha256>:<when it was stored>`).
        `catch_up` brings the `attachments` projection up to date first (an act recorded but not yet projected
        would otherwise not protect what it cites). A removal whose alert could not be saved (a crash between the
        two) is recorded by the next run: it is kept in `document_removals` until then."""
        if catch_up is not None:
            catch_up()
        removed = self.store.expire(self.app.clock(), days, self.cited, _removal_message)
        for digest, stored_at, message in self.store.unrecorded_removals():
            self.app.raise_system_alert(DOCUMENTS_ACTOR, kind=EXPIRED, subject=f"document:{digest}:{stored_at}",
                                        message=message)
            self.store.removal_recorded(digest, stored_at)
        return removed

    def usage(self) -> dict[str, int]:
        return self.store.usage(self.cited)

    def read(self, digest: str, token_id: str) -> tuple[StoredDocument, bytes]:
        """The document for this token, checked; DocumentNotFoundError unless it is cited by an act or the token
        uploaded it; DocumentAlteredError (and a system alert) when its stored bytes were changed."""
        if not (self.cited(digest) or self.store.uploaded_by(digest, token_id)):
            raise DocumentNotFoundError(digest)
        try:
            found = self.store.read(digest)
            if found is None:  # cited (expiry removes an uncited one, with its uploads): its row was deleted
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


def _removal_message(removal: Removal) -> str:
    """What the removal's alert says, in Portuguese as every alert: what was removed, when and why."""
    what = f"{removal.type or 'tipo ilegível'}, {removal.size if removal.size is not None else '?'} bytes"
    who = f", acrescentado por {removal.body}" if removal.body else ""
    return (f"documento removido: {removal.sha256} ({what}{who}), guardado em {removal.stored_at}, último envio em "
            f"{removal.last_upload}: nenhum ato o citou em {removal.days} dias (TRAMITA_DOCUMENT_EXPIRY_DAYS); "
            f"removido em {removal.removed_at}")
