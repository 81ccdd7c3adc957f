"""README.md is a first page whose snippets work: each tour is run as a reader runs it after `make run`.

The snippets. Every fenced block of README.md whose language is `sh`, `bash`, `console` or `python` is a
snippet, run in order. A block preceded (on the line right before its fence) by `<!-- not run: REASON -->` is
skipped; every other snippet runs, and the tests below check that nothing else is skipped. A `console` block is
a terminal session: each `$ ` line (continued by a trailing backslash) is a command, the lines below it are what
it prints (stdout and stderr, as a terminal shows them); `...` within a line matches any text, a line of `...`
any number of lines. A `text` block right after a `python` block is what the Python snippet prints.

The tours. The blocks under "## Five-minute tours" before its first "### " heading are the set-up that every
tour starts with; each "### " heading below it is one tour (clerk, auditor, compliance). A snippet outside the
tours must be marked not run (`make run` blocks until Ctrl-C; `make test` is this very suite).

Each tour runs in a fresh temporary directory laid out as a checkout is after `make run`:
- `.venv/bin/tramita` is the console script that pyproject.toml declares, running this checkout's code;
  `.venv/bin/python` and `python3` are this interpreter; `.venv/bin/activate` puts them first on the PATH;
- `docs` is this checkout's `docs/`;
- `make run` itself is `tramita up` with the environment the Makefile's `run` target gives it (read from the
  Makefile), on a free port instead of 8000: `TRAMITA` holds its URL, which the set-up block keeps.
The tour starts once the API is ready, polled with a deadline (no fixed sleep): `/health` answers, the
scheduler has signed its first checkpoint (`/checkpoints/latest`), and every projection has read the whole log.

Shell snippets run with `bash -eo pipefail`; Python snippets with this interpreter. Each snippet sees the
variables the earlier ones of its tour exported, as in one terminal: every shell ends by saving its exported
environment for the next. Every snippet must exit 0 and print what the README shows it printing.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import time
import tomllib
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.servers import START_SECONDS, free_port, stop, wait_until_answers

REPO = Path(__file__).resolve().parent.parent
README = REPO / "README.md"
RUNNABLE = ("sh", "bash", "console", "python")
#: Languages a fenced block of the README may have besides the runnable ones (shown, never run).
SHOWN = ("text", "json", "toml")
NOT_RUN = re.compile(r"^<!--\s*not run:\s*(?P<reason>\S.*?)\s*-->$")
TOURS = "Five-minute tours"
#: Seconds one snippet (or one console command) may take.
SNIPPET_SECONDS = 180.0


@dataclass
class Block:
    """A fenced block of the README: its language, text, first line number, headings and not-run reason."""

    language: str
    text: str
    line: int
    section: str
    tour: str | None
    end: int = 0  # the line number of its closing fence
    not_run: str | None = None
    expected: str | None = None  # a python block's output, from the `text` block right after it

    @property
    def where(self) -> str:
        return f"README.md:{self.line} ({self.language}, {self.section}{' / ' + self.tour if self.tour else ''})"


def blocks(text: str) -> list[Block]:
    found: list[Block] = []
    lines = text.splitlines()
    section = tour = ""
    n = 0
    while n < len(lines):
        line = lines[n]
        if line.startswith("## "):
            section, tour = line[3:].strip(), ""
        elif line.startswith("### "):
            tour = line[4:].strip()
        elif line.startswith("```"):
            language, start, body = line[3:].strip(), n + 1, []
            n += 1
            while n < len(lines) and lines[n].rstrip() != "```":
                body.append(lines[n])
                n += 1
            assert n < len(lines), f"README.md:{start}: a fenced block is never closed"
            marker = NOT_RUN.match(lines[start - 2].strip()) if start >= 2 else None
            block = Block(language, "\n".join(body) + "\n", start, section, tour or None, n + 1,
                          marker["reason"] if marker else None)
            between = lines[found[-1].end:start - 1] if found else ["x"]
            if language == "text" and found and found[-1].language == "python" and not "".join(between).strip():
                found[-1].expected = block.text
            found.append(block)
        n += 1
    return found


def snippets() -> list[Block]:
    return [b for b in blocks(README.read_text(encoding="utf-8")) if b.language in RUNNABLE]


def tours() -> dict[str, list[Block]]:
    """Each tour's snippets, the set-up first."""
    inside = [b for b in snippets() if b.section == TOURS]
    setup = [b for b in inside if b.tour is None]
    named: dict[str, list[Block]] = {}
    for block in inside:
        if block.tour is not None:
            named.setdefault(block.tour, list(setup)).append(block)
    return named


# ------------------------------------------------------------------ what the README holds

def test_the_readme_is_a_first_page_under_160_lines():
    assert len(README.read_text(encoding="utf-8").splitlines()) < 160


def test_every_fenced_block_says_its_language_and_only_the_marked_snippets_are_skipped():
    every = blocks(README.read_text(encoding="utf-8"))
    unknown = [b.where for b in every if b.language not in RUNNABLE + SHOWN]
    assert unknown == [], f"fenced blocks in a language this test neither runs nor knows as shown: {unknown}"
    runnable = [b for b in every if b.language in RUNNABLE]
    in_tours = [b for blocks_ in tours().values() for b in blocks_]
    run = {b.line for b in in_tours if b.not_run is None}
    skipped = [b for b in runnable if b.line not in run]
    assert [b.where for b in skipped if b.not_run is None] == [], "snippets neither run by a tour nor marked not run"
    assert all(b.not_run.strip() for b in skipped), "a not-run marker gives its reason"
    assert len(run) + len(skipped) == len(runnable)
    assert [b.where for b in every if b.not_run is not None and b.language not in RUNNABLE] == [], \
        "a not-run marker stands before a snippet"


def test_there_is_a_tour_for_each_kind_of_user():
    names = " ".join(tours()).lower()
    assert all(kind in names for kind in ("clerk", "auditor", "compliance")), list(tours())


def test_a_console_block_is_read_as_commands_and_what_they_print():
    session = "$ echo a \\\n    b\na b\n$ true\n$ printf 'x\\ny\\n'\n...\n"
    assert console(session) == [("echo a \\\n    b", "a b\n"), ("true", ""), ("printf 'x\\ny\\n'", "...\n")]
    assert matches("...\n", "x\ny\n") and matches("a ... c\n", "a b c\n") and not matches("a\n", "b\n")
    assert matches("x\n...\nz\n", "x\nz\n") and not matches("x\n", "x\ny\n")


# ------------------------------------------------------------------ running them

def console(text: str) -> list[tuple[str, str]]:
    """A console block's commands, each with what it is shown to print."""
    session: list[tuple[str, str]] = []
    lines = text.splitlines()
    n = 0
    while n < len(lines):
        assert lines[n].startswith("$ "), f"a console block starts with a command: {lines[n]!r}"
        command = [lines[n][2:]]
        while command[-1].endswith("\\") and n + 1 < len(lines):
            n += 1
            command.append(lines[n])
        output = []
        while n + 1 < len(lines) and not lines[n + 1].startswith("$ "):
            n += 1
            output.append(lines[n] + "\n")
        session.append(("\n".join(command), "".join(output)))
        n += 1
    return session


def matches(expected: str, actual: str) -> bool:
    """Does `actual` read as `expected` shows it (`...` any text in a line, a line of `...` any lines)?"""
    pattern = "".join(r"(?:[^\n]*\n)*?" if line.strip() == "..." else
                      ".*".join(map(re.escape, line.rstrip().split("..."))) + r"[ \t\r]*\n"
                      for line in expected.splitlines())
    normal = "".join(line.rstrip() + "\n" for line in actual.splitlines())
    return re.fullmatch(pattern, normal) is not None


def console_script() -> str:
    """The `tramita` console script as pyproject.toml declares it, as a Python statement."""
    entry = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["scripts"]["tramita"]
    module, _, function = entry.partition(":")
    return f"import sys; from {module} import {function}; sys.exit({function}())"


def checkout(root: Path) -> None:
    """`root` laid out as a checkout after `make run`: .venv/bin (tramita, python, python3, activate), docs."""
    bin_dir = root / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    python = shlex.quote(sys.executable)
    scripts = {
        "tramita": f"#!/bin/sh\nexec {python} -c {shlex.quote(console_script())} \"$@\"\n",
        "python": f"#!/bin/sh\nexec {python} \"$@\"\n",
        "python3": f"#!/bin/sh\nexec {python} \"$@\"\n",
    }
    for name, script in scripts.items():
        (bin_dir / name).write_text(script, encoding="utf-8")
        (bin_dir / name).chmod(0o755)
    (bin_dir / "activate").write_text(f'VIRTUAL_ENV={shlex.quote(str(root / ".venv"))}\nexport VIRTUAL_ENV\n'
                                      'PATH="$VIRTUAL_ENV/bin:$PATH"\nexport PATH\n', encoding="utf-8")
    (root / "docs").symlink_to(REPO / "docs", target_is_directory=True)


def make_run_environment() -> dict[str, str]:
    """The variables the Makefile gives `tramita up` in `make run` (its exported defaults, the recipe's own)."""
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    variables = dict(re.findall(r"^export (TRAMITA_\w+) \?= (\S+)$", makefile, re.MULTILINE))
    recipe = makefile[makefile.index("\nrun:"):].split("\n\n", 1)[0]
    assert "tramita up" in recipe, "make run no longer runs `tramita up`: this test emulates it"
    variables.update(re.findall(r"(TRAMITA_\w+)=\$\$\{\1:-([^}]+)\}", recipe))
    return variables


def reader_environment(root: Path, url: str) -> dict[str, str]:
    """A reader's shell: this machine's environment without any TRAMITA_ setting, this checkout's code."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRAMITA") and k != "VIRTUAL_ENV"}
    return {**env, "PYTHONPATH": str(REPO), "TRAMITA": url, "HOME": str(root)}


def until_ready(url: str, process: subprocess.Popen, log: Path) -> None:
    """The API answers, the scheduler has signed its first checkpoint (after its first scan), and every
    projection has read the whole log."""
    wait_until_answers(f"{url}/health", process=process, log=log)
    wait_until_answers(f"{url}/checkpoints/latest", process=process, log=log)
    deadline = time.monotonic() + START_SECONDS
    while True:
        with urllib.request.urlopen(f"{url}/health", timeout=10) as answer:
            health = json.load(answer)
        if all(position >= health["notifications"] for position in health["projections"].values()):
            return
        assert time.monotonic() < deadline, f"the projections did not catch up: {health}"
        assert process.poll() is None, log.read_text(errors="replace")
        time.sleep(0.1)


class Terminal:
    """One reader's terminal in `root`: snippets run in turn, each seeing what the earlier ones exported."""

    def __init__(self, root: Path, env: dict[str, str]) -> None:
        self.root, self.env = root, env
        self.state = root / ".tour-state.sh"
        self.state.write_text("", encoding="utf-8")

    def shell(self, script: str, *, merge: bool = False) -> subprocess.CompletedProcess:
        saved = self.root / ".tour-env"
        wrapped = (f'set -eo pipefail\n. {shlex.quote(str(self.state))}\n{script}\n'
                   f'export -p > {shlex.quote(str(self.state))}\nenv -0 > {shlex.quote(str(saved))}\n')
        done = subprocess.run(["bash", "-c", wrapped], cwd=self.root, env=self.env, text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT if merge else subprocess.PIPE,
                              timeout=SNIPPET_SECONDS)
        return done

    def exported(self) -> dict[str, str]:
        saved = (self.root / ".tour-env").read_bytes().decode()
        return dict(item.split("=", 1) for item in saved.split("\0") if "=" in item)

    def run(self, block: Block, server_log: Path) -> None:
        def fail(what: str) -> str:
            return f"{block.where}: {what}\n--- make run's output ---\n{server_log.read_text(errors='replace')[-4000:]}"

        if block.language in ("sh", "bash"):
            done = self.shell(block.text)
            assert done.returncode == 0, fail(f"exit {done.returncode}\n{done.stdout}{done.stderr}")
            for name in re.findall(r"^export (\w+)=", block.text, re.MULTILINE):
                assert self.exported().get(name), fail(f"${name} is empty after the snippet\n{done.stderr}")
        elif block.language == "console":
            for command, expected in console(block.text):
                done = self.shell(command, merge=True)
                assert done.returncode == 0, fail(f"`{command}` exited {done.returncode}:\n{done.stdout}")
                assert matches(expected, done.stdout), fail(f"`{command}` printed\n{done.stdout}\n"
                                                            f"where the README shows\n{expected}")
        else:
            done = subprocess.run([sys.executable, "-c", block.text], cwd=self.root, env=self.exported(),
                                  capture_output=True, text=True, timeout=SNIPPET_SECONDS)
            assert done.returncode == 0, fail(f"exit {done.returncode}\n{done.stdout}{done.stderr}")
            if block.expected is not None:
                assert matches(block.expected, done.stdout), fail(f"printed\n{done.stdout}\nwhere the README "
                                                                  f"shows\n{block.expected}")


@pytest.mark.slow
@pytest.mark.parametrize("tour", list(tours()))
def test_the_tour_runs_as_printed_after_make_run(tour, tmp_path):
    root = tmp_path / "checkout"
    root.mkdir()
    checkout(root)
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = reader_environment(root, url)
    log = tmp_path / "make-run.log"
    (root / "var").mkdir()
    with open(log, "wb") as out:
        make_run = subprocess.Popen([str(root / ".venv" / "bin" / "tramita"), "up", "--bind", f"127.0.0.1:{port}"],
                                    cwd=root, env={**env, **make_run_environment()}, stdout=out,
                                    stderr=subprocess.STDOUT)
    try:
        until_ready(url, make_run, log)
        terminal = Terminal(root, env)
        for block in tours()[tour]:
            if block.not_run is None:
                terminal.run(block, log)
    finally:
        code = stop(make_run)
    assert code == 0, f"make run did not stop cleanly ({code}):\n{log.read_text(errors='replace')[-4000:]}"
