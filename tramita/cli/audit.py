"""`tramita verify`, `keys init|show`, `checkpoint`, `rebuild-tree`: the audit log (audit/)."""

from __future__ import annotations

import argparse
import json
import os
import sys

from tramita.bootstrap import build_application, build_audit, database_url


def cmd_verify(args: argparse.Namespace) -> int:
    """Verify the store (read only): chains, the tree against every checkpoint, signatures; exit 1 on tampering."""
    from audit import report
    from infrastructure.store import open_store

    url = database_url()
    app = build_application(url, signing=False, read_only=True)
    audit = build_audit(app, open_store(url), key=args.key)
    if args.receipt:
        problems = audit.check_receipt(report.read_receipt(args.receipt))
        print(report.receipt_verdict(args.receipt, problems))
        return 1 if problems else 0
    if args.case:
        checked = audit.verify_case(args.case)
        print(report.case_verdict(checked))
        return 0 if checked["ok"] else 1
    verdict = audit.verify(external=report.read_checkpoints(args.checkpoint or []),
                           all_signatures=args.all_signatures)
    print(json.dumps(verdict.as_dict(), ensure_ascii=False, indent=2) if args.json else report.store_verdict(verdict))
    return 0 if verdict.ok else 1


def cmd_keys_init(args: argparse.Namespace) -> int:
    """Make the deployment's Ed25519 signing key (0600), named after the log's origin."""
    from audit.keys import create_signing_key, origin_from

    path = os.environ.get("TRAMITA_SIGNING_KEY", "").strip()
    if not path:
        raise ValueError("TRAMITA_SIGNING_KEY: set it to the path of the key file to create (outside the database)")
    signer = create_signing_key(path, args.origin or origin_from(os.environ))
    print(f"signing key written to {path} (mode 0600). The verifier key, for auditors and witnesses:")
    print(signer.verifier)
    return 0


def cmd_keys_show(args: argparse.Namespace) -> int:
    """Print the verifier key of the deployment's signing key."""
    from audit.keys import signer_from

    signer = signer_from(os.environ)
    if signer is None:
        raise ValueError("TRAMITA_SIGNING_KEY is not set: there is no signing key to show")
    print(signer.verifier)
    return 0


def cmd_rebuild_tree(args: argparse.Namespace) -> int:
    """Rebuild the audit log's stored tree from the events (after a TREE finding), keeping the checkpoints."""
    from audit.log import AuditLog
    from infrastructure.store import open_store

    url = database_url()
    app = build_application(url, signing=False, read_only=True)
    appended = AuditLog(app, open_store(url)).rebuild_tree()
    print(f"the audit log's tree was rebuilt from the {appended} stored events; the checkpoints are kept (the next "
          "`tramita checkpoint` checks the tree against them)")
    return 0


def cmd_checkpoint(args: argparse.Namespace) -> int:
    """Sign a checkpoint of the log as it now stands and print it; refuse (exit 1) when it contradicts one
    signed before."""
    from audit.log import TamperAlarm
    from infrastructure.store import open_store

    url = database_url()
    app = build_application(url, read_only=True)
    audit = build_audit(app, open_store(url))
    try:
        signed = audit.sign_checkpoint(lambda event, **fields: print(json.dumps({"event": event, **fields}),
                                                                     file=sys.stderr))
    except TamperAlarm as alarm:
        print("tramita: TAMPER ALARM: the log refuses to sign a checkpoint:", file=sys.stderr)
        for finding in alarm.findings:
            print(f"  - {finding}", file=sys.stderr)
        return 1
    if not signed.new:
        print(f"the log has not grown since the checkpoint of size {signed.checkpoint.size} "
              f"(signed {signed.checkpoint.signed_at}):", file=sys.stderr)
    print(signed.checkpoint.note, end="")
    return 0
