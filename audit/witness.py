"""Witnesses: where each signed checkpoint is handed, outside the database, so that whoever can write the
database cannot make the log forget what it signed.

- a folder (`TRAMITA_WITNESS_DIR`, several separated by commas): one file per checkpoint, `<size>.checkpoint`,
  holding the signed note, written atomically (a temporary file linked into place), never overwritten; a
  temporary file left by a writer killed mid-write (its name carries the host and the process id) is removed
  by the next signing on that host once that process is gone;
- a URL (`TRAMITA_WITNESS_URL`, several separated by commas): the note POSTed as `text/plain; charset=utf-8`;
  any 2xx answer within TIMEOUT seconds is a delivery, however slowly the witness sends it (the webhook's
  exchange, cut by its watchdog); redirects are not followed (a 3xx is a failed delivery, tried again later).

Each delivery is recorded (`audit_witnessed`), so a checkpoint signed while a witness was unreachable, or just
before the process was killed, is handed over at the next signing or the scheduler's next start.

Those two only keep what they are handed. The witnesses that check and cosign (`TRAMITA_WITNESSES`, C2SP
tlog-witness) are audit/witness_cosign.py's, listed here with them.
"""

from __future__ import annotations

import os
import re
import socket
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from audit.witness_cosign import CosigningWitness, cosigning_witnesses_from
from domain.errors import InvalidActError
from domain.subscriptions import check_url
from infrastructure.webhook import DeliveryError, post_signed

#: Seconds a witness URL may take to answer, from connecting to the answer's status.
TIMEOUT = 10.0


#: A temporary file's name: `.<size>.<host>.<pid>.<random>.tmp`.
TEMPORARY = re.compile(r"\.[0-9]+\.(?P<host>[A-Za-z0-9-]+)\.(?P<pid>[0-9]+)\.[^/]*\.tmp")


def _host() -> str:
    return re.sub(r"[^A-Za-z0-9-]", "-", socket.gethostname()) or "host"


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, another account's
        return True
    return True


class WitnessError(Exception):
    """A witness did not take the checkpoint."""


@dataclass(frozen=True)
class DirectoryWitness:
    path: Path

    @property
    def name(self) -> str:
        return f"dir:{self.path}"

    def deliver(self, size: int, note: str) -> None:
        self.path.mkdir(parents=True, exist_ok=True)
        target = self.path / f"{size}.checkpoint"
        if target.exists():
            if target.read_text(encoding="utf-8") == note:
                return
            raise WitnessError(f"{target} already holds another checkpoint of size {size}: not overwritten")
        descriptor, temporary = tempfile.mkstemp(dir=self.path, prefix=f".{size}.{_host()}.{os.getpid()}.",
                                                   suffix=".tmp")
        try:
            with os.fdopen(descriptor, "w", encoding="utf-8") as file:
                file.write(note)
                file.flush()
                os.fsync(file.fileno())
            os.link(temporary, target)  # fails if another writer got there first: never overwrite
        except FileExistsError:
            if target.read_text(encoding="utf-8") != note:
                raise WitnessError(f"{target} already holds another checkpoint of size {size}") from None
        finally:
            os.unlink(temporary)

    def sweep(self) -> list[Path]:
        """Remove the temporary files that writers on this host left when killed mid-write; the removed."""
        removed, host = [], _host()
        for file in self.path.glob(".*.tmp"):
            match = TEMPORARY.fullmatch(file.name)
            if match and match["host"] == host and not _running(int(match["pid"])):
                file.unlink(missing_ok=True)
                removed.append(file)
        return removed

    def held(self) -> list[tuple[str, str]]:
        """(source, note) of every checkpoint file the folder holds (leftovers of killed writers swept first)."""
        if not self.path.is_dir():
            return []
        self.sweep()
        found = []
        for file in sorted(self.path.iterdir()):
            if re.fullmatch(r"[0-9]+\.checkpoint", file.name):
                found.append((f"in the witness folder {self.path} ({file.name})", file.read_text(encoding="utf-8")))
        return found


@dataclass(frozen=True)
class UrlWitness:
    url: str

    @property
    def name(self) -> str:
        return f"url:{self.url}"

    def deliver(self, size: int, note: str) -> None:
        """POST the note; anything but a 2xx answer within TIMEOUT seconds, however slowly the witness sends it
        (the webhook's exchange, cut by its watchdog: infrastructure/webhook.py), is a failed delivery."""
        try:
            post_signed(self.url, note.encode("utf-8"), {
                "Content-Type": "text/plain; charset=utf-8", "User-Agent": "tramita-checkpoints"}, timeout=TIMEOUT)
        except DeliveryError as error:
            raise WitnessError(str(error)) from None

    def held(self) -> list[tuple[str, str]]:
        return []


Witness = DirectoryWitness | UrlWitness | CosigningWitness


def witnesses_from(environ: Mapping[str, str]) -> list[Witness]:
    """The witnesses configured by TRAMITA_WITNESS_DIR and TRAMITA_WITNESS_URL (each a comma-separated list),
    and the cosigning ones of TRAMITA_WITNESSES."""
    found: list[Witness] = []
    for part in environ.get("TRAMITA_WITNESS_DIR", "").split(","):
        if part.strip():
            found.append(DirectoryWitness(Path(part.strip())))
    for part in environ.get("TRAMITA_WITNESS_URL", "").split(","):
        url = part.strip()
        if url:
            try:
                found.append(UrlWitness(check_url(url, private=True)))
            except InvalidActError as refused:
                raise ValueError(f"TRAMITA_WITNESS_URL: {url!r} is not an http:// or https:// URL: "
                                 f"{refused.message}") from None
    return [*found, *cosigning_witnesses_from(environ)]
