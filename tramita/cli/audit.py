"""`tramita verify`, `keys init|show`, `checkpoint`, `rebuild-tree`: the audit log (audit/); `verify` also checks
the read models against the events (projections/check.py)."""

from __future__ import annotations

import argparse
import json
import os
import sys

from tramita.bootstrap import build_application, build_audit, database_url, system_clock
from tramita.cli.language import language, say


def cmd_verify(args: argparse.Namespace) -> int:
    """Verify the store (read only): chains, the tree against every checkpoint, signatures; exit 1 on tampering.
    The whole store's verification also checks every read model against the events (exit 1 when a row differs)
    and keeps that result for `/health` and the pages."""
    from audit import report
    from infrastructure.store import open_store

    url = database_url()
    app = build_application(url, signing=False, read_only=True)
    store = open_store(url)
    audit = build_audit(app, store, key=args.key)
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
    from tramita.cli.witness import check_quorum, quorum_lines

    witnessed = check_quorum(audit, args.witness_key, args.quorum)  # None without --witness-key
    checked = None if args.no_read_models else check_and_keep(app, store)
    if args.json:
        print(json.dumps({**verdict.as_dict(), **({"read_models": checked} if checked else {}),
                          **({"witnesses": witnessed} if witnessed else {})}, ensure_ascii=False, indent=2))
    else:
        if checked is not None:  # first: the audit log's own report ends with its VERDICT line
            print("\n".join(read_model_lines(checked)))
        if witnessed:
            print("\n".join(quorum_lines(witnessed)))
        print(report.store_verdict(verdict))
        if checked is not None and not checked["ok"] and verdict.ok:
            print(say("VERDICT: the events are intact, but read models differ from them (above): `tramita rebuild` "
                      "repairs them"))
    return 0 if verdict.ok and (checked is None or checked["ok"]) and (witnessed is None or witnessed["ok"]) else 1


def check_and_keep(app, store) -> dict:  # noqa: ANN001
    """Check the read models against the events (projections/check.py) and keep the result for `/health` and the
    pages; a database this command may only read keeps none (stderr says so)."""
    from projections import checked
    from projections.check import check_read_models

    result = check_read_models(app, store, system_clock()).as_dict()
    if not result["positions"]:  # no read model yet: nothing to keep
        return result
    try:
        checked.save(store, result)
    except store.database_errors as error:
        print("tramita: " + say("the read models' check was not kept for /health (%(kind)s: %(error)s)",
                                kind=type(error).__name__, error=str(error)), file=sys.stderr)
    return result


def read_model_lines(result: dict) -> list[str]:
    """The read-model check in the user's language (`language`): each differing row by table and key."""
    _ = language().gettext
    if not result["positions"]:
        return [_("read models: not created yet (run `tramita migrate`)")]
    lines = []
    if result["skipped"]:
        lines.append(_("read models not checked, not created or built by another version (`tramita migrate` creates "
                       "or rebuilds them): %(names)s") % {"names": ", ".join(result["skipped"])})
    behind = result["notifications"] - min(result["positions"].values())
    if behind > 0:
        lines.append(_("read models: the projector has not read the last %(count)s events yet; they are compared "
                       "where it is") % {"count": behind})
    if result["ok"]:
        position = max(result["positions"].values())
        return [*lines, _("read models: every row checked against the events up to notification %(position)s: "
                          "no difference") % {"position": position}]
    total = sum(found["rows"] for found in result["differing"].values())
    lines.append(_("read models: %(count)s rows DIFFER FROM THE EVENTS:") % {"count": total})
    for table, found in result["differing"].items():
        for row in found["sample"]:
            key = ", ".join(f"{column}={value}" for column, value in row["key"].items())
            where = f"{table} ({key})" if key else table
            if row["kind"] == "changed":
                lines.append("  - " + _("%(where)s: columns %(columns)s differ") % {
                    "where": where, "columns": ", ".join(row["columns"])})
            elif row["kind"] == "missing":
                lines.append("  - " + (_("%(where)s: row missing (the events give it)") if key
                                       else _("%(where)s: table missing")) % {"where": where})
            elif row["kind"] == "extra":
                lines.append("  - " + _("%(where)s: extra row (no event gives it)") % {"where": where})
            else:
                lines.append("  - " + _("%(where)s: position beyond the last event (%(last)s)") % {
                    "where": where, "last": result["notifications"]})
        if found["rows"] > len(found["sample"]):
            lines.append("  - " + _("… and %(count)s more rows of %(table)s") % {
                "count": found["rows"] - len(found["sample"]), "table": table})
    lines.append(_("Run `tramita rebuild`: it rebuilds the read models from the events."))
    return lines


def cmd_keys_init(args: argparse.Namespace) -> int:
    """Make the deployment's Ed25519 signing key (0600), named after the log's origin."""
    from audit.keys import create_signing_key, origin_from

    path = os.environ.get("TRAMITA_SIGNING_KEY", "").strip()
    if not path:
        raise ValueError(say("TRAMITA_SIGNING_KEY: set it to the path of the key file to create (outside the "
                             "database)"))
    signer = create_signing_key(path, args.origin or origin_from(os.environ))
    print(say("signing key written to %(path)s (mode 0600). The verifier key, for auditors and witnesses:", path=path))
    print(signer.verifier)
    return 0


def cmd_keys_show(args: argparse.Namespace) -> int:
    """Print the verifier key of the deployment's signing key."""
    from audit.keys import signer_from

    signer = signer_from(os.environ)
    if signer is None:
        raise ValueError(say("TRAMITA_SIGNING_KEY is not set: there is no signing key to show"))
    print(signer.verifier)
    return 0


def cmd_rebuild_tree(args: argparse.Namespace) -> int:
    """Rebuild the audit log's stored tree from the events (after a TREE finding), keeping the checkpoints."""
    from audit.log import AuditLog
    from infrastructure.store import open_store

    url = database_url()
    app = build_application(url, signing=False, read_only=True)
    appended = AuditLog(app, open_store(url)).rebuild_tree()
    print(say("the audit log's tree was rebuilt from the %(count)s stored events; the checkpoints are kept (the next "
              "`tramita checkpoint` checks the tree against them)", count=appended))
    return 0


def cmd_checkpoint(args: argparse.Namespace) -> int:
    """Sign a checkpoint of the log as it now stands, collect the cosigning witnesses' cosignatures and print it
    with them; refuse (exit 1) when it contradicts one signed before or a witness refuses it."""
    from audit.log import TamperAlarm
    from infrastructure.store import open_store

    url = database_url()
    app = build_application(url, read_only=True)
    audit = build_audit(app, open_store(url))
    try:
        signed = audit.sign_checkpoint(lambda event, **fields: print(json.dumps({"event": event, **fields}),
                                                                     file=sys.stderr))
    except TamperAlarm as alarm:
        print("tramita: " + (say("TAMPER ALARM: the cosigning witnesses refused the checkpoint the log signed:")
                             if alarm.by_witnesses else say("TAMPER ALARM: the log refuses to sign a checkpoint:")),
              file=sys.stderr)
        for finding in alarm.findings:
            print(f"  - {finding}", file=sys.stderr)
        return 1
    if not signed.new:
        print(say("the log has not grown since the checkpoint of size %(size)s (signed %(signed)s):",
                  size=signed.checkpoint.size, signed=signed.checkpoint.signed_at), file=sys.stderr)
    print(audit.checkpoint(signed.checkpoint.size).note, end="")  # with the witnesses' cosignatures
    return 0
