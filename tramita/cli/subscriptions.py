"""`tramita subscription add|list|remove`: an operator's subscriptions of a body to its alerts (a webhook) or its
deadlines (a calendar feed), made, listed and ended from the command line (domain/subscriptions.py).

An operator may subscribe any body, to any filter, at any address (one of the deployment's own network
included); the subscription is recorded as the operator's act, like a token (`tramita token create`), and lives
until removed (no token ends it).
"""

from __future__ import annotations

import argparse

from domain.subscriptions import CALENDAR, WEBHOOK
from tramita.bootstrap import build_application
from tramita.cli.access import cli_actor
from tramita.cli.language import day, say


def cmd_subscription_add(args: argparse.Namespace) -> int:
    channel = CALENDAR if args.calendar else WEBHOOK
    if (args.url is None) == (channel == WEBHOOK):
        raise ValueError("--url: " + say("a webhook needs its address; a calendar (--calendar) takes none"))
    subscribed = build_application().subscribe(
        cli_actor(args.issuer), token_id=None, channel=channel, url=args.url, role=args.role,
        municipality=args.municipality, case=args.case, kinds=args.kind or None, private_urls=True)
    subscription = subscribed.subscription
    print(say("subscription %(id)s (%(channel)s: %(filters)s); shown this once:", id=str(subscription.id),
              channel=channel, filters=_filters(subscription)))
    if channel == WEBHOOK:
        print(subscribed.secret)
    else:
        print(f"/feeds/{subscription.id}/{subscribed.secret}.ics")
    return 0


def cmd_subscription_list(args: argparse.Namespace) -> int:
    app = build_application(signing=False, read_only=True)
    for s in app.all_subscriptions():
        state = (say("removed %(day)s", day=day(s.removed_on)) if s.removed_on else say("active") if app.in_force(s)
                 else say("token ended"))
        by = s.created_by.get("principal", "")
        print(f"{s.id}  {s.channel:<8}  {state:<18}  {_filters(s):<40}  {s.url or ''}  ({by})")
    return 0


def cmd_subscription_remove(args: argparse.Namespace) -> int:
    subscription = build_application().remove_subscription(cli_actor(args.issuer), args.subscription_id,
                                                           reason=args.reason, operator=True)
    print(say("subscription %(id)s (%(channel)s) removed", id=str(subscription.id), channel=subscription.channel))
    return 0


def _filters(subscription) -> str:  # noqa: ANN001
    named = {"role": subscription.role, "municipality": subscription.municipality, "case": subscription.case_id,
             "kinds": ",".join(subscription.kinds) or None}
    return " ".join(f"{k}={v}" for k, v in named.items() if v) or say("everything")
