"""Art. 1, 8-40 drawn: a Mermaid flowchart of each case kind's lifecycle, generated from the statute data.

`python -m domain.lifecycle_diagrams [FILE] [--check]` rewrites, in FILE (default docs/law/lifecycles.md), the text
between each kind's marker comments (`<!-- lifecycle-diagram:<kind>:begin -->` ... `:end -->`) with the diagram of
every version of that kind's lifecycle; `--check` writes nothing and exits 1 when the file is stale. Each node is
an act (its article, its conditions, the deadlines it opens and closes); a solid arrow is "after", a dotted one
"after one of", a crossed one "no longer after".
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from domain.lifecycle import ActEntry, Lifecycle, Step, act_catalogue, lifecycle_kinds, lifecycle_versions
from domain.parameters import Statute, shipped_statute

DEFAULT_FILE = Path("docs/law/lifecycles.md")
MARKER = re.compile(r"(<!-- lifecycle-diagram:(?P<kind>[a-z_]+):begin -->\n)(?P<body>.*?)(<!-- lifecycle-diagram:"
                    r"(?P=kind):end -->)", re.DOTALL)


def _id(act: str) -> str:
    return act.replace("-", "_")


def _label(step: Step, entry: ActEntry) -> str:
    lines = [f"<b>{step.act}</b>", f"{entry.label} · {step.article}"]
    if step.by:
        lines.append(f"by each {step.by}" if step.per_municipality else f"by the {step.by}")
    if step.when:
        lines.append(f"when: {', '.join(step.when)}")
    if step.unless:
        lines.append(f"unless: {', '.join(step.unless)}")
    if step.once:
        lines.append("once" + (f" per {step.by}" if step.per_municipality else ""))
    if step.opens:
        lines.append(f"opens: {', '.join(step.opens)}")
    if step.closes:
        lines.append(f"closes: {', '.join(step.closes)}")
    return "<br/>".join(line.replace('"', "'") for line in lines)


def mermaid(lifecycle: Lifecycle, catalogue: dict[str, ActEntry]) -> str:
    """The flowchart of one lifecycle version, as Mermaid text."""
    out = ["flowchart TD"]
    for step in lifecycle.steps:
        out.append(f'    {_id(step.act)}["{_label(step, catalogue[step.act])}"]')
    for step in lifecycle.steps:
        out += [f"    {_id(a)} --> {_id(step.act)}" for a in step.after]
        out += [f"    {_id(a)} -.->|or| {_id(step.act)}" for a in step.after_any]
        out += [f"    {_id(a)} --x {_id(step.act)}" for a in step.until if a != step.act]
    if lifecycle.ends or lifecycle.ends_when:
        ended = ", ".join([*lifecycle.ends, *lifecycle.ends_when])
        out.append(f'    ended((("no further act<br/>after {ended}")))')
        out += [f"    {_id(a)} --> ended" for a in lifecycle.ends]
    return "\n".join(out) + "\n"


def section(statute: Statute, kind: str) -> str:
    """What goes between a kind's markers: every version of its lifecycle, oldest first."""
    parts = []
    for lifecycle in lifecycle_versions(statute, kind):
        catalogue = act_catalogue(statute, lifecycle.effective_from)
        parts.append(f"`{lifecycle.version}` — in force from {lifecycle.effective_from.isoformat()}:\n\n"
                     f"```mermaid\n{mermaid(lifecycle, catalogue)}```\n")
    return "\n".join(parts)


def render(text: str, statute: Statute) -> str:
    """`text` with every kind's markers filled from the data; a kind without markers is an error."""
    kinds = set(lifecycle_kinds(statute))
    found = {m.group("kind") for m in MARKER.finditer(text)}
    if kinds - found:
        raise ValueError(f"no diagram markers for: {', '.join(sorted(kinds - found))}")
    if found - kinds:
        raise ValueError(f"markers for kinds without a lifecycle: {', '.join(sorted(found - kinds))}")
    return MARKER.sub(lambda m: m.group(1) + section(statute, m.group("kind")) + m.group(4), text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m domain.lifecycle_diagrams", description=__doc__.split("\n")[0])
    parser.add_argument("file", nargs="?", type=Path, default=DEFAULT_FILE, help=f"default {DEFAULT_FILE}")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 when the file is stale")
    args = parser.parse_args(argv)
    text = args.file.read_text(encoding="utf-8")
    fresh = render(text, shipped_statute())
    if args.check:
        if fresh != text:
            print(f"{args.file}: the lifecycle diagrams are stale; run python -m domain.lifecycle_diagrams")
            return 1
        print(f"{args.file}: the lifecycle diagrams match the data")
        return 0
    if fresh != text:
        args.file.write_text(fresh, encoding="utf-8")
        print(f"{args.file}: lifecycle diagrams written")
    else:
        print(f"{args.file}: already up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main())
