"""`tramita token create|revoke|list`: the API's bearer tokens, issued by an operating-system account."""

from __future__ import annotations

import argparse
import os
from datetime import date

from domain.acts import Actor
from tramita.bootstrap import build_application
from tramita.cli.language import day, named_body, say


def os_account() -> str:
    """The operating-system account this process runs as, from the system's user database (never $USER or
    $LOGNAME, which whoever starts the process sets as they like)."""
    import pwd

    uid = os.geteuid()
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:  # an account without a passwd entry (a container's arbitrary uid)
        return f"uid {uid}"


def cli_actor(issuer: str | None = None) -> Actor:
    """Who runs an administrative command, recorded on the token's events: the operating-system account
    (`os:<account>`), or the person named with --issuer beside it (`<issuer> (os:<account>)`)."""
    import unicodedata

    account = f"os:{os_account()}"
    if issuer is None:
        return Actor(account, "token-administrator")
    name = issuer.strip()
    if not name or any(unicodedata.category(c).startswith("C") for c in name):
        raise ValueError("--issuer: " + say("the name of the person issuing, without control or format characters"))
    return Actor(f"{name} ({account})", "token-administrator")


def cmd_token_create(args: argparse.Namespace) -> int:
    expires_on = _day("--expires", args.expires) if args.expires else None
    app = build_application()
    issued = app.issue_token(cli_actor(args.issuer), name=args.name, role=args.role,
                             municipality=args.municipality, expires_on=expires_on)
    code = issued.actor.municipality
    body = named_body(issued.actor.role, code, app.municipality(code).name if code else None)
    if expires_on:
        body += ", " + say("valid through %(day)s", day=day(expires_on))
    print(say("token %(id)s for %(principal)s (%(body)s); shown this once:", id=str(issued.id),
              principal=issued.actor.principal, body=body))
    print(issued.token)
    return 0


def _day(option: str, text: str) -> date:
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise ValueError(f"{option}: " + say("%(text)s is not a day (YYYY-MM-DD)", text=repr(text))) from None


def cmd_token_revoke(args: argparse.Namespace) -> int:
    token = build_application().revoke_token(cli_actor(args.issuer), args.token_id, reason=args.reason)
    print(say("token %(id)s (%(name)s, %(role)s) revoked", id=str(token.id), name=token.name, role=token.role))
    return 0


def cmd_token_list(args: argparse.Namespace) -> int:
    app = build_application(signing=False, read_only=True)
    for token in app.tokens():
        state = (say("revoked %(day)s", day=day(token.revoked_on)) if token.revoked_on else
                 say("expired %(day)s", day=day(token.expires_on)) if token.expired_on(app.today()) else
                 say("active to %(day)s", day=day(token.expires_on)) if token.expires_on else say("active"))
        print(f"{token.id}  {token.role:<18}  {token.municipality or '':<7}  {state:<21}  {token.name}")
    return 0
