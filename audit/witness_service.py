"""The witness a Tribunal de Contas or a Ministério Público runs (`tramita witness serve`): C2SP tlog-witness's
add-checkpoint over its own SQLite file, nothing shared with the log.

For each log it is configured with (the log's verifier key, whose name is the log's origin) it keeps the latest
checkpoint it cosigned: size, root and the note. A request is checked (the log's signature, the old size against
the size it last cosigned, the RFC 9162 consistency proof from the root it stored), and the new size and root are
written in the same SQLite transaction as the check, begun IMMEDIATE so that a second request for the log waits
for the first, and committed before the cosignature is answered: whatever moment the process is killed at, it
has never cosigned a checkpoint that its file does not extend from, so it never cosigns two inconsistent ones.

Answers (tlog-witness): 200 with the cosignature line; 400 on a malformed request or an old size above the
checkpoint's; 403 without a valid signature of the log; 404 for a log it does not know; 409, body
`<latest size>\\n` as `text/x.tlog.size`, when the old size is not the one it last cosigned; 422 when the proof
does not verify or the same size comes with another root. Every refused checkpoint the log validly signed is kept
(`witness_refused`): a fork or a rollback, signed by the log itself, is the evidence of it.
"""

from __future__ import annotations

import hashlib
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from audit import merkle
from audit.cosign import AddCheckpoint, CosignError, Cosigner
from audit.notes import Checkpoint, NoteError, SignedNote, Verifier

#: The largest add-checkpoint body read (a checkpoint, its signatures and 63 proof lines fit many times over).
MAX_BODY = 64 * 1024
#: Seconds a request waits for another request's transaction on the same file.
BUSY_TIMEOUT = 30.0

SCHEMA = [
    "CREATE TABLE IF NOT EXISTS witness_logs (origin TEXT PRIMARY KEY, size INTEGER NOT NULL, root BLOB NOT NULL, "
    "note TEXT NOT NULL, cosigned_at INTEGER NOT NULL)",
    "CREATE TABLE IF NOT EXISTS witness_refused (id INTEGER PRIMARY KEY AUTOINCREMENT, origin TEXT NOT NULL, "
    "received_at INTEGER NOT NULL, status INTEGER NOT NULL, reason TEXT NOT NULL, request TEXT NOT NULL)",
]


@dataclass(frozen=True)
class Answer:
    status: int
    body: str
    content_type: str = "text/plain; charset=utf-8"


@dataclass(frozen=True)
class Refusal:
    origin: str
    received_at: int
    status: int
    reason: str
    request: str


def sqlite_path(url: str) -> Path:
    """The file of a `sqlite:///path` URL (the witness keeps its state in SQLite only)."""
    if not url.startswith("sqlite:///") or len(url) == len("sqlite:///"):
        raise ValueError(f"TRAMITA_WITNESS_DATABASE_URL: {url!r} is not sqlite:///<path> (the witness keeps its "
                         "state in a SQLite file of its own)")
    return Path(url[len("sqlite:///"):])


class WitnessStore:
    """The witness's SQLite file: the latest cosigned checkpoint of each log, and the refused ones."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.transaction() as db:
            for statement in SCHEMA:
                db.execute(statement)

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One IMMEDIATE transaction (the write lock taken first: requests for a log are serialised), committed
        durably (synchronous FULL) when the block ends, rolled back when it raises."""
        db = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT, isolation_level=None)
        try:
            db.execute("PRAGMA synchronous = FULL")
            db.execute("BEGIN IMMEDIATE")
            try:
                yield db
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")
        finally:
            db.close()

    def latest(self, origin: str) -> tuple[int, bytes, str] | None:
        with self.transaction() as db:
            row = db.execute("SELECT size, root, note FROM witness_logs WHERE origin = ?", (origin,)).fetchone()
        return (int(row[0]), bytes(row[1]), str(row[2])) if row else None

    def refused(self) -> list[Refusal]:
        with self.transaction() as db:
            rows = db.execute("SELECT origin, received_at, status, reason, request FROM witness_refused "
                              "ORDER BY id").fetchall()
        return [Refusal(*row) for row in rows]


class Witness:
    """add-checkpoint's rules over a store, a cosigning key and the logs' keys (by origin)."""

    def __init__(self, store: WitnessStore, cosigner: Cosigner, logs: Iterable[Verifier],
                 clock: Callable[[], float] = time.time) -> None:
        self.store, self.cosigner, self.clock = store, cosigner, clock
        self.logs: Mapping[str, Verifier] = {log.name: log for log in logs}

    def add_checkpoint(self, body: bytes) -> Answer:
        try:
            request = AddCheckpoint.parse(body)
            note = SignedNote.parse(request.note)
            checkpoint = Checkpoint.parse(note.text)
        except (CosignError, NoteError) as error:
            return Answer(400, f"pedido malformado: {error}\n")
        log = self.logs.get(checkpoint.origin)
        if log is None:
            return Answer(404, f"esta testemunha não acompanha o registro {checkpoint.origin}\n")
        if not note.verified_by(log):
            return Answer(403, f"o checkpoint não traz assinatura válida da chave do registro {log.name}\n")
        if request.old_size > checkpoint.size:
            return Answer(400, f"o tamanho anterior {request.old_size} é maior que o do checkpoint "
                               f"({checkpoint.size})\n")
        with self.store.transaction() as db:
            row = db.execute("SELECT size, root FROM witness_logs WHERE origin = ?", (log.name,)).fetchone()
            size, root = (int(row[0]), bytes(row[1])) if row else (0, merkle.EMPTY_ROOT)
            if request.old_size != size:
                self._refuse(db, log.name, 409, _conflict(size, root, checkpoint), body)
                return Answer(409, f"{size}\n", "text/x.tlog.size")
            problem = _inconsistency(request, checkpoint, size, root)
            if problem:
                self._refuse(db, log.name, 422, problem, body)
                return Answer(422, problem + "\n")
            now = int(self.clock())
            line = self.cosigner.cosign(note.text, now)
            db.execute("INSERT INTO witness_logs (origin, size, root, note, cosigned_at) VALUES (?, ?, ?, ?, ?) "
                       "ON CONFLICT (origin) DO UPDATE SET size = excluded.size, root = excluded.root, "
                       "note = excluded.note, cosigned_at = excluded.cosigned_at",
                       (log.name, checkpoint.size, checkpoint.root, request.note + line, now))
        return Answer(200, line)  # committed above: stored before it is answered

    def _refuse(self, db: sqlite3.Connection, origin: str, status: int, reason: str, body: bytes) -> None:
        db.execute("INSERT INTO witness_refused (origin, received_at, status, reason, request) VALUES (?, ?, ?, ?, ?)",
                   (origin, int(self.clock()), status, reason, body.decode("utf-8")))

    def latest_note(self, origin_hash: str) -> str | None:
        """The latest cosigned checkpoint of the log whose origin's SHA-256 is `origin_hash` (lowercase hex)."""
        for origin in self.logs:
            if hashlib.sha256(origin.encode("utf-8")).hexdigest() == origin_hash:
                found = self.store.latest(origin)
                return found[2] if found else None
        return None


def _conflict(size: int, root: bytes, checkpoint: Checkpoint) -> str:
    if checkpoint.size < size:
        return (f"checkpoint de tamanho {checkpoint.size}, menor que o {size} já cossinado: o registro voltou "
                "atrás (banco restaurado de cópia antiga?)")
    if checkpoint.size == size and checkpoint.root != root:
        return f"checkpoint de tamanho {size} com outra raiz que a já cossinada: uma bifurcação do registro"
    return f"o pedido parte de outro tamanho que o {size} já cossinado"


def _inconsistency(request: AddCheckpoint, checkpoint: Checkpoint, size: int, root: bytes) -> str | None:
    """Why the checkpoint does not extend the one cosigned (size, root); None when it does."""
    if checkpoint.size == 0 and checkpoint.root != merkle.EMPTY_ROOT:
        return "um checkpoint de tamanho 0 tem a raiz da árvore vazia"
    if size == 0:
        return "do tamanho 0 a prova de consistência é vazia" if request.proof else None
    if size == checkpoint.size:
        return None if root == checkpoint.root else \
            f"checkpoint de tamanho {size} com outra raiz que a já cossinada: uma bifurcação do registro"
    try:
        merkle.verify_consistency(size, checkpoint.size, root, checkpoint.root, request.proof)
    except merkle.ProofError as error:
        return f"a prova de consistência de {size} a {checkpoint.size} não confere ({error}): uma bifurcação"
    return None


def wsgi_app(witness: Witness) -> Callable:
    """The witness over HTTP (WSGI): POST /add-checkpoint, and GET /<origin hash>/checkpoint for monitors."""

    def app(environ: dict, start_response: Callable) -> list[bytes]:
        method, path = environ.get("REQUEST_METHOD", "GET"), environ.get("PATH_INFO", "/")
        if path == "/add-checkpoint" and method == "POST":
            try:
                length = int(environ.get("CONTENT_LENGTH") or 0)
            except ValueError:
                length = -1
            if not 0 <= length <= MAX_BODY:
                answer = Answer(413 if length > MAX_BODY else 411, "o corpo do pedido tem de 1 a 65536 bytes\n")
            else:
                answer = witness.add_checkpoint(environ["wsgi.input"].read(length))
        elif path.endswith("/checkpoint") and path.count("/") == 2 and method == "GET":
            note = witness.latest_note(path.split("/")[1])
            answer = Answer(200, note) if note else Answer(404, "nenhum checkpoint cossinado deste registro\n")
        elif path == "/" and method == "GET":
            answer = Answer(200, f"testemunha {witness.cosigner.verifier}: POST /add-checkpoint (C2SP tlog-witness)\n")
        else:
            answer = Answer(404, "não há nada aqui: POST /add-checkpoint\n")
        data = answer.body.encode("utf-8")
        start_response(f"{answer.status} {_REASONS.get(answer.status, 'Error')}",
                       [("Content-Type", answer.content_type), ("Content-Length", str(len(data)))])
        return [data]

    return app


_REASONS = {200: "OK", 400: "Bad Request", 403: "Forbidden", 404: "Not Found", 409: "Conflict",
            411: "Length Required", 413: "Content Too Large", 422: "Unprocessable Entity"}
