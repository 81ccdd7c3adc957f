"""`tramita witness keys init|show` and `tramita witness serve`: the witness service a Tribunal de Contas or a
Ministério Público runs beside (never inside) the log's deployment (audit/witness_service.py), served by gunicorn
through its documented Custom Application, as `tramita serve` is (tramita/serve.py)."""

from __future__ import annotations

import argparse
import os
import sys

DEFAULT_DATABASE_URL = "sqlite:///var/witness.sqlite"


def cmd_witness_keys_init(args: argparse.Namespace) -> int:
    """Make the witness's Ed25519 key (0600) and print its verifier key."""
    from audit.witness_keys import DEFAULT_NAME, create_witness_key, witness_key_path

    path = witness_key_path(os.environ)
    cosigner = create_witness_key(path, args.name or os.environ.get("TRAMITA_WITNESS_NAME", "") or DEFAULT_NAME)
    print(f"chave da testemunha gravada em {path} (modo 0600). Chave de verificação, para o registro "
          "(TRAMITA_WITNESSES) e para os auditores (--witness-key):")
    print(cosigner.verifier)
    return 0


def cmd_witness_keys_show(args: argparse.Namespace) -> int:
    """Print the witness's verifier key (C2SP vkey, type 0x04)."""
    from audit.witness_keys import load_witness_key, witness_key_path

    print(load_witness_key(witness_key_path(os.environ)).verifier)
    return 0


def build_witness(log_keys: list[str]):  # noqa: ANN201
    """The witness from the environment (its key, its store) and the logs' keys given by --log-key."""
    from audit.keys import parse_verifier
    from audit.witness_keys import load_witness_key, witness_key_path
    from audit.witness_service import Witness, WitnessStore, sqlite_path

    url = os.environ.get("TRAMITA_WITNESS_DATABASE_URL", "").strip() or DEFAULT_DATABASE_URL
    logs = [parse_verifier(key, "--log-key") for key in log_keys]
    return Witness(WitnessStore(sqlite_path(url)), load_witness_key(witness_key_path(os.environ)), logs)


def cmd_witness_serve(args: argparse.Namespace) -> int:
    """Check the configuration (key, store, log keys) now, then serve until SIGTERM / Ctrl-C."""
    from gunicorn.app.base import BaseApplication

    from tramita.serve import OPTIONAL

    witness = build_witness(args.log_key)  # refuse a bad configuration before forking
    print(f"testemunha {witness.cosigner.verifier} acompanhando: {', '.join(witness.logs)}", file=sys.stderr)

    class WitnessServer(BaseApplication):
        def load_config(self) -> None:
            settings = {"bind": args.bind, "workers": 1, "worker_class": "gthread", "threads": 4, "timeout": 30,
                        "accesslog": "-", "proc_name": "tramita-witness", "preload_app": False, **OPTIONAL}
            for key, value in settings.items():
                if key in self.cfg.settings:
                    self.cfg.set(key, value)

        def load(self):  # noqa: ANN202 - gunicorn's hook, in the worker after the fork
            from audit.witness_service import wsgi_app

            return wsgi_app(build_witness(args.log_key))

    WitnessServer().run()
    return 0


def check_quorum(audit, keys: list[str] | None, quorum: int | None) -> dict | None:  # noqa: ANN001
    """`tramita verify --witness-key K ... --quorum N`: whether the log's latest checkpoint carries N valid
    cosignatures from those witnesses (default N: all of them); None when no witness key was given."""
    from audit.cosign import CosignError, CosignVerifier, cosignatures, quorum_problem
    from audit.service import NotSignedError

    if not keys:
        if quorum:
            raise ValueError("--quorum: give the witnesses' keys with --witness-key")
        return None
    try:
        verifiers = [CosignVerifier.parse(_key_text(key)) for key in keys]
    except CosignError as error:
        raise ValueError(f"--witness-key: {error}") from None
    needed = len(verifiers) if quorum is None else quorum
    if not 1 <= needed <= len(verifiers):
        raise ValueError(f"--quorum: between 1 and the {len(verifiers)} witness keys given")
    try:
        latest = audit.latest_checkpoint()
    except NotSignedError:
        return {"ok": False, "quorum": needed, "size": None, "cosigned_by": [],
                "problem": "o registro não tem checkpoint assinado: nenhuma testemunha o cossinou"}
    found = cosignatures(latest.note, verifiers)
    problem = quorum_problem(latest.note, verifiers, needed)
    if problem:
        problem = (f"o checkpoint mais recente (tamanho {latest.size}) não tem o quórum de testemunhas: {problem}; "
                   "elas o recusaram ou nunca o viram (o registro voltou atrás ou se bifurcou?)")
    return {"ok": problem is None, "quorum": needed, "size": latest.size,
            "cosigned_by": [CosignVerifier.parse(k).name for k in found], "problem": problem}


def quorum_lines(checked: dict) -> list[str]:
    if checked["ok"]:
        return [f"testemunhas: o checkpoint de tamanho {checked['size']} tem {len(checked['cosigned_by'])} "
                f"cossinaturas válidas (quórum {checked['quorum']}): {', '.join(checked['cosigned_by'])}"]
    return [f"testemunhas: {checked['problem']}"]


def _key_text(value: str) -> str:
    """A witness key given as the key itself or as the path of a file holding it."""
    from pathlib import Path

    path = Path(value.strip())
    if "+" not in value and path.is_file():
        return path.read_text(encoding="utf-8").strip()
    return value


def cmd_witness_refused(args: argparse.Namespace) -> int:
    """Print the checkpoints the witness refused, one JSON object a line, oldest first: each request whole, the
    log's own signature on it, so that a fork or a rollback can be shown to anyone."""
    import json

    from audit.witness_service import WitnessStore, sqlite_path

    url = os.environ.get("TRAMITA_WITNESS_DATABASE_URL", "").strip() or DEFAULT_DATABASE_URL
    path = sqlite_path(url)
    if not path.exists():
        raise ValueError(f"TRAMITA_WITNESS_DATABASE_URL: não há base da testemunha em {path}")
    for refusal in WitnessStore(path).refused():
        print(json.dumps({"origin": refusal.origin, "received_at": refusal.received_at, "status": refusal.status,
                          "reason": refusal.reason, "request": refusal.request}, ensure_ascii=False))
    return 0
