"""`tramita statute amend FILE` and `tramita statute show`: the statute's amendments, recorded from the command
line by the operating-system account that runs it (docs/law/amendments.md)."""

from __future__ import annotations

import argparse
import json
import tomllib
from datetime import date

from tramita.bootstrap import build_application
from tramita.cli.language import day, say


def cmd_statute_amend(args: argparse.Namespace) -> int:
    """Record the amendment a TOML file describes: `law`, `published_on`, optional `[sources]`, and one
    `[[parameter]]` table per new version, as in the shipped statute data."""
    from domain.acts import Actor
    from tramita.cli.access import os_account

    try:
        with open(args.file, "rb") as file:
            document = tomllib.load(file)
    except (OSError, tomllib.TOMLDecodeError) as error:
        raise ValueError(f"{args.file}: " + say("cannot read the amendment (%(error)s)", error=str(error))) from None
    published_on = document.get("published_on")
    if type(published_on) is not date:
        raise ValueError(f"{args.file}: " + say("published_on must be the law's publication day (YYYY-MM-DD, "
                                                "unquoted)"))
    unknown = sorted(set(document) - {"law", "published_on", "sources", "parameter"})
    if unknown:
        raise ValueError(f"{args.file}: " + say("unknown key(s) %(keys)s (an amendment has law, published_on, "
                                                "[sources] and [[parameter]] tables)", keys=", ".join(unknown)))
    app = build_application()
    acted = app.amend_statute(Actor(f"os:{os_account()}", "operator"), published_on, law=document.get("law"),
                              parameters=document.get("parameter"), sources=document.get("sources"))
    print(say("statute: amendment %(amendment)s recorded: %(versions)s", amendment=str(acted.result["amendment"]),
              versions=", ".join(acted.result["versions"])))
    return 0


def cmd_statute_show(args: argparse.Namespace) -> int:
    app = build_application(signing=False, read_only=True)
    on = date.fromisoformat(args.on) if args.on else app.today()
    document = app.statute_on(on, args.parameter)
    if args.json:
        print(json.dumps(document, default=str, ensure_ascii=False, indent=2))
        return 0
    print(say("statute %(shipped)s with %(count)s amendment(s), in force on %(day)s:", shipped=document["shipped"],
              count=len(document["amendments"]), day=day(on)))
    for row in document["parameters"]:
        current = row["in_force"]
        if current is None:
            print(f"  {row['id']:<48}  " + say("not in force"))
            continue
        introduced = current["introduced_by"]
        by = say("shipped") if introduced["act"] == "statute-data" else say(
            "amendment %(amendment)s", amendment=str(introduced["amendment"]))
        print(f"  {row['id']:<48}  {current['version'].split('@')[1]}  ({by})  "
              f"{json.dumps(current['value'], default=str, ensure_ascii=False)[:60]}")
    return 0
