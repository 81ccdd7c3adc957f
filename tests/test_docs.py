"""The README and docs/ stand alone: every link inside the repository leads to a file and a heading that exist,
and nothing sends the reader to files outside the repository.

Links: every relative Markdown link of README.md and docs/**/*.md, and every `docs/…` reference in a `source` of
the statute data (domain/statute/*.toml), must name an existing file and, with a `#anchor`, a heading of that
file (GitHub's slugs: lower case, punctuation dropped, spaces as hyphens, `-1`, `-2` for repeats).
`docs/law/lifecycles.md` is written on another branch: until it exists, links to it may use only the anchors
agreed with its author.
"""

from __future__ import annotations

import os
import re
import tomllib
from collections import Counter
from pathlib import Path


REPO = Path(__file__).resolve().parent.parent
#: Files being written elsewhere, with the anchors agreed for them; checked like any other once they exist.
PENDING = {
    "docs/law/lifecycles.md": {"creation", "incorporation", "fusion", "dismemberment",
                               "district-creation-and-suppression", "extinction"},
}
#: What the repository must not point to: the folder beside the checkout, and the reading of the law that
#: lived there (now docs/law/). Spelt in pieces so that this file does not name them itself.
OUTSIDE = re.compile("|".join((re.escape(".." + "/shared"), re.escape("/work" + "/shared"), r"\bRU" r"LES\b")))
SKIPPED_DIRS = {".git", ".venv", "__pycache__", ".pytest_cache", ".hypothesis", "build"}
LINK = re.compile(r"(?<!!)\[[^\]\n]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```[ \t]*$", re.MULTILINE | re.DOTALL)
CODE = re.compile(r"`[^`\n]*`")


def pages() -> list[Path]:
    return [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]


def slug(heading: str) -> str:
    """GitHub's anchor for a heading's text."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading.strip())  # a link's text
    text = re.sub(r"[^\w\- ]", "", text.replace("`", "").lower())
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    seen: Counter[str] = Counter()
    found = set()
    for line in FENCE.sub("", path.read_text(encoding="utf-8")).splitlines():
        match = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if match:
            base = slug(match[1])
            found.add(base if not seen[base] else f"{base}-{seen[base]}")
            seen[base] += 1
    return found


def links(path: Path) -> list[str]:
    text = CODE.sub("", FENCE.sub("", path.read_text(encoding="utf-8")))
    return [target for target in LINK.findall(text) if not re.match(r"^[a-z][a-z0-9+.-]*:", target)]


def source_references() -> list[tuple[str, str]]:
    """(where, `docs/…` reference) for every reference in a `source` of the statute data."""
    found = []
    for toml in sorted((REPO / "domain" / "statute").glob("*.toml")):
        document = tomllib.loads(toml.read_text(encoding="utf-8"))
        sources = [document.get("source"), *document.get("sources", {}).values()]
        for table in ("parameter", "add", "remove"):
            sources += [entry.get("source") for entry in document.get(table, [])]
        sources += [column.get("source") for column in document.get("columns", {}).values()]
        for source in filter(None, sources):
            found += [(toml.name, ref) for ref in re.findall(r"(?<![\w/])docs/[\w./-]+(?:#[\w-]+)?", source)]
    return found


def problem(target: Path, anchor: str | None) -> str | None:
    """Why a link to `target#anchor` does not resolve, or None."""
    relative = target.relative_to(REPO).as_posix() if target.is_relative_to(REPO) else str(target)
    if not target.exists():
        if relative in PENDING and (anchor is None or anchor in PENDING[relative]):
            return None
        return f"no file {relative}"
    if anchor is None:
        return None
    if target.is_dir() or target.suffix != ".md":
        return f"{relative} has no headings for #{anchor}"
    return None if anchor in anchors(target) else f"no heading #{anchor} in {relative}"


def test_every_link_of_the_readme_and_the_docs_leads_to_a_file_and_a_heading_that_exist():
    broken = []
    for page in pages():
        for target in links(page):
            path, _, anchor = target.partition("#")
            resolved = (page.parent / path).resolve() if path else page
            why = problem(resolved, anchor or None)
            if why:
                broken.append(f"{page.relative_to(REPO)}: ({target}): {why}")
    assert broken == []


def test_the_statute_data_cites_readings_that_exist():
    references = source_references()
    assert len(references) >= 10, "the statute data's sources link to the readings of docs/law"
    broken = []
    for where, reference in references:
        path, _, anchor = reference.partition("#")
        why = problem((REPO / path.rstrip(".")).resolve(), anchor or None)
        if why:
            broken.append(f"{where}: {reference}: {why}")
    assert broken == []


def test_the_slugs_are_github_s():
    assert slug("Art. 1-I: dispensation") == "art-1-i-dispensation"
    assert slug("Art. 17 par. ún.: the name") == "art-17-par-ún-the-name"
    assert slug("The names of Brazil's municipalities") == "the-names-of-brazils-municipalities"
    assert slug("9. `tramita verify`") == "9-tramita-verify"


def repository_files() -> list[Path]:
    found = []
    for root, dirs, files in os.walk(REPO):
        here = Path(root)
        dirs[:] = [d for d in dirs if d not in SKIPPED_DIRS and not d.endswith(".egg-info")
                   and (here / d) != REPO / "tests" / "fixtures"]
        found += [here / name for name in files]
    return sorted(found)


def mentions_outside(files: list[Path]) -> list[str]:
    found = []
    for path in files:
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue  # not text
        found += [f"{path.relative_to(REPO)}:{n}: {line.strip()}"
                  for n, line in enumerate(text.splitlines(), start=1) if OUTSIDE.search(line)]
    return found


def test_no_file_but_python_sends_the_reader_outside_the_repository():
    assert mentions_outside([p for p in repository_files() if p.suffix != ".py"]) == []


def test_no_python_file_sends_the_reader_outside_the_repository():
    assert mentions_outside([p for p in repository_files() if p.suffix == ".py"]) == []
