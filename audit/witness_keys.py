"""The witness's own Ed25519 key on disk (`TRAMITA_WITNESS_KEY`), created 0600 by `tramita witness keys init`, one
line `PRIVATE+KEY+<name>+<key ID>+<base64(0x04 ‖ seed)>` (audit/cosign.py); refused when others may read it, as
the log's signing key is (audit/keys.py). Its verifier key is what auditors pass to `--witness-key`."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from audit.cosign import CosignError, Cosigner
from audit.keys import SigningKeyError, read_private, write_new_key

DEFAULT_NAME = "localhost/tramita-witness"


def witness_key_path(environ: Mapping[str, str]) -> Path:
    path = environ.get("TRAMITA_WITNESS_KEY", "").strip()
    if not path:
        raise SigningKeyError("TRAMITA_WITNESS_KEY: set it to the path of the witness's key file")
    return Path(path)


def create_witness_key(path: Path, name: str) -> Cosigner:
    """A new witness key named `name` in a new file created 0600 (never overwritten)."""
    try:
        cosigner = Cosigner.generate(name)
    except CosignError as error:
        raise SigningKeyError(f"--name: {error}") from None
    write_new_key(path, cosigner, "a witness key is never overwritten (auditors trust its verifier key)")
    return cosigner


def load_witness_key(path: Path) -> Cosigner:
    try:
        text = read_private(path, "TRAMITA_WITNESS_KEY", SigningKeyError)
    except FileNotFoundError:
        raise SigningKeyError(f"TRAMITA_WITNESS_KEY: no key at {path} (make one with `tramita witness keys init`)"
                              ) from None
    try:
        return Cosigner.parse(text)
    except CosignError as error:
        raise SigningKeyError(f"TRAMITA_WITNESS_KEY: {path} is not a witness key: {error}") from None
