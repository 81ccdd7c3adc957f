"""The deployment's signing key on disk, and the verifier keys an auditor trusts.

The signing key is a file outside the database (`TRAMITA_SIGNING_KEY`), created 0600 by `tramita keys init`,
holding one line in the note package's signer format, `PRIVATE+KEY+<origin>+<hash>+<base64>`. The key's name is
the log's origin (`TRAMITA_LOG_ORIGIN` when the key is made). A key file readable by others is refused, as ssh
refuses one: whoever reads it can sign checkpoints.

Verification never trusts a key found in the database (whoever can write the database could put their own
there): the verifier key comes from `--key`, `TRAMITA_VERIFIER_KEY`, or the signing key file.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from pathlib import Path

from audit.notes import NoteError, Signer, Verifier

DEFAULT_ORIGIN = "localhost/tramita"


class SigningKeyError(Exception):
    """The signing key is missing, unreadable, malformed or too widely readable."""


def write_private(path: Path, text: str) -> None:
    """Write a secret to a new file created 0600 (FileExistsError when it exists: a key is never overwritten)."""
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "w", encoding="ascii") as file:
        file.write(text)
        file.flush()
        os.fsync(file.fileno())


def read_private(path: Path, setting: str, error: type[Exception]) -> str:
    """A secret file's text, refused (`error`, naming `setting`) when it cannot be read or others may read it, as
    ssh refuses a key file. FileNotFoundError is left to the caller, which knows how the file is made."""
    try:
        mode = path.stat().st_mode
        text = path.read_text(encoding="ascii")
    except FileNotFoundError:
        raise
    except (OSError, UnicodeDecodeError) as failure:
        raise error(f"{setting}: cannot read {path}: {failure}") from None
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise error(f"{setting}: {path} is readable by others (mode {stat.S_IMODE(mode):04o}); "
                    f"run `chmod 600 {path}`")
    return text


def origin_from(environ: Mapping[str, str]) -> str:
    return environ.get("TRAMITA_LOG_ORIGIN", "").strip() or DEFAULT_ORIGIN


def write_new_key(path: Path, key: object, never_overwritten: str) -> None:
    """A new key file holding `key`'s one line, created 0600 (its folder 0700 when created); an existing file is
    refused (`never_overwritten` says why), never replaced."""
    if not path.parent.exists():
        path.parent.mkdir(parents=True, mode=0o700)
    try:
        write_private(path, f"{key}\n")
    except FileExistsError:
        raise SigningKeyError(f"{path} already exists: {never_overwritten}; move it away first to make a new one"
                              ) from None


def create_signing_key(path: str | Path, origin: str) -> Signer:
    """Make a new Ed25519 key named `origin` in a new file created 0600 (its folder 0700 when created)."""
    path = Path(path)
    try:
        signer = Signer.generate(origin)
    except NoteError as error:
        raise SigningKeyError(f"TRAMITA_LOG_ORIGIN: {error}") from None
    write_new_key(path, signer, "a signing key is never overwritten (the log's checkpoints and events are signed "
                                "with it)")
    return signer


def load_signing_key(path: str | Path) -> Signer:
    """The signer in the key file; refused when the file is missing, malformed, or readable by others."""
    path = Path(path)
    try:
        text = read_private(path, "TRAMITA_SIGNING_KEY", SigningKeyError)
    except FileNotFoundError:
        raise SigningKeyError(f"TRAMITA_SIGNING_KEY: no key at {path} (make one with `tramita keys init`)") from None
    try:
        return Signer.parse(text)
    except NoteError as error:
        raise SigningKeyError(f"TRAMITA_SIGNING_KEY: {path} is not a signing key: {error}") from None


def signer_from(environ: Mapping[str, str]) -> Signer | None:
    """The deployment's signer when `TRAMITA_SIGNING_KEY` is set (its origin checked against
    `TRAMITA_LOG_ORIGIN` when that is set too); None when it is not set."""
    path = environ.get("TRAMITA_SIGNING_KEY", "").strip()
    if not path:
        return None
    signer = load_signing_key(path)
    configured = environ.get("TRAMITA_LOG_ORIGIN", "").strip()
    if configured and configured != signer.name:
        raise SigningKeyError(f"TRAMITA_LOG_ORIGIN is {configured!r} but the signing key {path} is named "
                        f"{signer.name!r}: the log's origin is its key's name")
    return signer


def parse_verifier(value: str, source: str) -> Verifier:
    """A verifier key given as the key itself or as the path of a file holding it."""
    text = value.strip()
    candidate = Path(text)
    if "+" not in text or candidate.is_file():
        try:
            text = candidate.read_text(encoding="utf-8").strip()
        except OSError as error:
            raise SigningKeyError(f"{source}: {value!r} is neither a verifier key nor a readable file: "
                                  f"{error}") from None
    try:
        return Verifier.parse(text)
    except NoteError as error:
        raise SigningKeyError(f"{source}: {error}") from None


def trusted_verifier(environ: Mapping[str, str], given: str | None = None,
                     signer: Signer | None = None) -> Verifier | None:
    """The key verification trusts: `given` (--key), else TRAMITA_VERIFIER_KEY, else the signing key's public
    half (`signer`, or the key file TRAMITA_SIGNING_KEY names)."""
    if given:
        return parse_verifier(given, "--key")
    if environ.get("TRAMITA_VERIFIER_KEY", "").strip():
        return parse_verifier(environ["TRAMITA_VERIFIER_KEY"], "TRAMITA_VERIFIER_KEY")
    signer = signer or signer_from(environ)
    return signer.verifier if signer else None
