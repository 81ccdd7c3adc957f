"""The log's side of C2SP tlog-witness: each checkpoint the log signs is sent to the cosigning witnesses
(`TRAMITA_WITNESSES`, comma-separated `VKEY@URL`), with the consistency proof from the size each last cosigned;
their cosignatures are stored (`audit_cosignatures`) and served after the log's own signature line.

A witness that answers 409 names the size it last cosigned: the log sends the checkpoint again once, with the proof
from that size, when its tree has it (a cosignature lost when the witness was killed after storing, or a copy of
the database that forgot it). Any other refusal (a 409 above the checkpoint's size: the log rolled back; a 422: a
fork) is a finding of the tamper alarm, with the witness's answer. An unreachable witness is tried again at the
next signing, as the folder and URL witnesses are (audit/witness.py).
"""

from __future__ import annotations

import base64
import http.client
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

from audit.cosign import AddCheckpoint, CosignError, CosignVerifier, parse_cosignature_lines, with_cosignatures
from audit.notes import SIGNATURE_PREFIX, NoteError, SignedNote
from domain.errors import InvalidActError
from domain.subscriptions import check_url
from infrastructure.store import Store

#: Seconds a witness may take to answer add-checkpoint.
TIMEOUT = 10.0
#: The most bytes of a witness's answer read.
MAX_ANSWER = 64 * 1024
DDL = {
    "sqlite": "CREATE TABLE IF NOT EXISTS audit_cosignatures (size INTEGER NOT NULL, witness TEXT NOT NULL, "
              "line TEXT NOT NULL, cosigned_at TEXT NOT NULL, PRIMARY KEY (size, witness))",
    "postgresql": "CREATE TABLE IF NOT EXISTS audit_cosignatures (size BIGINT NOT NULL, witness TEXT NOT NULL, "
                  "line TEXT NOT NULL, cosigned_at TEXT NOT NULL, PRIMARY KEY (size, witness))",
}


class WitnessUnreachable(Exception):
    """A cosigning witness could not be reached or did not answer in time: tried again at the next signing."""


@dataclass(frozen=True)
class CosigningWitness:
    verifier: CosignVerifier
    url: str

    @property
    def name(self) -> str:
        return f"cosign:{self.verifier}"

    def held(self) -> list[tuple[str, str]]:
        return []

    def add_checkpoint(self, request: AddCheckpoint) -> tuple[int, str]:
        """POST the request to `<url>/add-checkpoint`: (status, answer); WitnessUnreachable when it cannot be reached
        or does not answer within TIMEOUT seconds (redirects are not followed)."""
        parts = urlsplit(self.url.rstrip("/") + "/add-checkpoint")
        kind = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
        connection = kind(parts.hostname or "", parts.port, timeout=TIMEOUT)
        try:
            connection.request("POST", parts.path, body=request.encode(), headers={
                "Content-Type": "text/plain; charset=utf-8", "User-Agent": "tramita-checkpoints"})
            answer = connection.getresponse()
            return answer.status, answer.read(MAX_ANSWER).decode("utf-8", "replace")
        except (OSError, http.client.HTTPException) as error:
            raise WitnessUnreachable(f"{self.url}: {type(error).__name__}: {error}") from None
        finally:
            connection.close()


def cosigning_witnesses_from(environ: Mapping[str, str]) -> list[CosigningWitness]:
    """The witnesses of TRAMITA_WITNESSES: comma-separated `VKEY@URL` (the vkey holds no '@')."""
    found = []
    for part in environ.get("TRAMITA_WITNESSES", "").split(","):
        if not part.strip():
            continue
        vkey, at, url = part.strip().partition("@")
        try:
            verifier = CosignVerifier.parse(vkey)
            if not at:
                raise CosignError("no @URL after the witness's key")
            found.append(CosigningWitness(verifier, check_url(url.strip(), private=True)))
        except CosignError as error:
            raise ValueError(f"TRAMITA_WITNESSES: {part.strip()[:60]!r} is not VKEY@URL: {error}") from None
        except InvalidActError as refused:
            raise ValueError(f"TRAMITA_WITNESSES: {url!r} is not an http:// or https:// URL: {refused.message}"
                             ) from None
    return found


def cosignature_lines(store: Store, size: int) -> list[str]:
    """The cosignature lines stored for the checkpoint of `size` (none when the table was never made)."""
    if not store.table_exists("audit_cosignatures"):
        return []
    rows = store.query("SELECT line FROM audit_cosignatures WHERE size = ? ORDER BY witness", (size,))
    return [str(row[0]) for row in rows]


def cosigned(store: Store, checkpoint: Any) -> Any:
    """A stored checkpoint (audit.log.StoredCheckpoint) whose note carries its stored cosignatures."""
    lines = cosignature_lines(store, checkpoint.size)
    return replace(checkpoint, note=with_cosignatures(checkpoint.note, lines)) if lines else checkpoint


def last_cosigned_size(store: Store, witness: CosigningWitness, below: int) -> int:
    """The largest size up to `below` the log holds a cosignature of `witness` for (0: none)."""
    if not store.table_exists("audit_cosignatures"):
        return 0
    rows = store.query("SELECT MAX(size) FROM audit_cosignatures WHERE witness = ? AND size <= ?",
                       (str(witness.verifier), below))
    return int(rows[0][0] or 0)


def record_cosignature(store: Store, size: int, witness: CosigningWitness, line: str, at: datetime) -> None:
    with store.transaction() as tx:
        tx.execute(DDL[store.dialect])
        tx.execute("DELETE FROM audit_cosignatures WHERE size = ? AND witness = ?", (size, str(witness.verifier)))
        tx.execute("INSERT INTO audit_cosignatures (size, witness, line, cosigned_at) VALUES (?, ?, ?, ?)",
                   (size, str(witness.verifier), line, at.isoformat()))


def collect(log: Any, witness: CosigningWitness, clock: Callable[[], datetime],
            log_line: Callable[..., None] | None = None) -> tuple[int, list[str]]:
    """Send `witness` the log's latest checkpoint above the size it last cosigned, storing its cosignature: (how
    many it cosigned, 0 or 1; the findings of its refusal). A witness keeps only the latest checkpoint of a log, so
    the older ones it never saw (signed while it was unreachable, or before it was configured) are not sent: a
    witness added to a log of years of hourly checkpoints gets one request, not thousands."""
    cosigned_count = 0
    above = last_cosigned_size(log.store, witness, 2 ** 63 - 1)
    for checkpoint in [c for c in log.unwitnessed(witness.name) if c.size > above][-1:]:
        old = last_cosigned_size(log.store, witness, checkpoint.size)
        try:
            status, answer = _send(log, witness, old, checkpoint)
            if status == 409 and answer.strip().isdigit() and int(answer) != old and int(answer) <= checkpoint.size:
                status, answer = _send(log, witness, int(answer), checkpoint)  # from the size it holds
        except WitnessUnreachable as error:
            if log_line:
                log_line("witness-failed", witness=witness.name, size=checkpoint.size, error=str(error))
            return cosigned_count, []
        line = _valid_line(witness, checkpoint.note, answer) if status == 200 else None
        if line is None:
            what = "uma cossinatura inválida" if status == 200 else f"{status}: {answer.strip()[:300]}"
            if log_line:
                log_line("witness-refused", witness=witness.name, size=checkpoint.size, status=status,
                         answer=answer[:300])
            return cosigned_count, [f"a testemunha {witness.verifier.name} recusou o checkpoint de tamanho "
                                    f"{checkpoint.size} ({what}): o registro não estende o que ela já cossinou"]
        record_cosignature(log.store, checkpoint.size, witness, line, clock())
        log.record_witnessed(checkpoint.size, witness.name, clock())
        cosigned_count += 1
        if log_line:
            log_line("cosigned", witness=witness.name, size=checkpoint.size)
    return cosigned_count, []


def _send(log: Any, witness: CosigningWitness, old: int, checkpoint: Any) -> tuple[int, str]:
    proof = log.consistency(old, checkpoint.size) if 0 < old < checkpoint.size else []
    return witness.add_checkpoint(AddCheckpoint(old, tuple(proof), checkpoint.note))


def _valid_line(witness: CosigningWitness, note: str, answer: str) -> str | None:
    """The witness's cosignature line in a 200 answer, when it verifies over the checkpoint."""
    try:
        text = SignedNote.parse(note).text
        lines = parse_cosignature_lines(answer)
    except (CosignError, NoteError):
        return None
    for name, raw in lines:
        if name == witness.verifier.name and witness.verifier.timestamp_of(text, raw) is not None:
            return f"{SIGNATURE_PREFIX}{name} {base64.b64encode(raw).decode('ascii')}\n"
    return None
