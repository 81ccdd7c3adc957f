"""Every template of the refusals the API may give, collected from the source and the statute data: the sentences
of the domain (`Sentence("...")`, `Term("...")` and the plain messages of its errors), the words it makes terms of
at run time (case kinds, comparisons, initiators, the lifecycles' conditions and exclusions), and the field
messages (marshmallow's and api/fields.py's)."""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
#: Calls whose argument at that position is a message for people.
MESSAGE_ARGUMENT = {"InvalidActError": 1, "IncompetentBodyError": 1, "ActOutOfOrderError": 1,
                    "RuleNotInForceError": 1, "LegalRuleError": 1, "refuse": 1, "Verdict": 1, "TitleCheck": 3,
                    "AuthenticationError": 0, "MunicipalityNotFoundError": 0, "ConcurrentActError": 0,
                    "Sentence": 0, "Term": 0}
#: `list.append` on these names collects messages for people (a judgement's reasons, an amendment's problems).
MESSAGE_LISTS = {"said", "found"}
#: Words that become terms at run time, beyond the case kinds and the statute's comparison words.
INITIATORS = ("governor", "deputy", "voters")


def _calls(tree: ast.AST) -> list[tuple[str, ast.expr]]:
    found = []
    for call in ast.walk(tree):
        if not isinstance(call, ast.Call):
            continue
        func = call.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
        if name == "append" and isinstance(func, ast.Attribute):
            owner = func.value
            owner_name = owner.attr if isinstance(owner, ast.Attribute) else getattr(owner, "id", None)
            if owner_name in MESSAGE_LISTS and call.args:
                found.append((f"{owner_name}.append", call.args[0]))
        elif name in MESSAGE_ARGUMENT and len(call.args) > MESSAGE_ARGUMENT[name]:
            found.append((name, call.args[MESSAGE_ARGUMENT[name]]))
    return found


def message_arguments() -> list[tuple[str, int, str, ast.expr]]:
    """(file, line, call, argument) for every message argument of the domain."""
    found = []
    for path in sorted((REPO / "domain").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for name, argument in _calls(tree):
            found.append((str(path.relative_to(REPO)), argument.lineno, name, argument))
    return found


def domain_templates() -> set[str]:
    """Every literal template of the domain's messages."""
    templates = set()
    for _, _, _, argument in message_arguments():
        if isinstance(argument, ast.Constant) and isinstance(argument.value, str):
            templates.add(argument.value)
    return templates


def run_time_terms() -> set[str]:
    """The words the domain makes terms of at run time, and the lifecycles' wordings of conditions and exclusions."""
    from domain.case import KINDS
    from domain.parameters import COMPARISON_WORDS

    terms = set(KINDS) | set(COMPARISON_WORDS.values()) | set(INITIATORS)

    def walk(value: object) -> None:
        if isinstance(value, dict):
            for key, item in value.items():
                if key in ("requires", "reason") and isinstance(item, str):
                    terms.add(item)
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk(tomllib.loads((REPO / "domain" / "statute" / "lifecycles.toml").read_text(encoding="utf-8")))
    return terms


def field_templates() -> set[str]:
    from api.i18n import field_messages
    from api.fields import WHATS

    return set(field_messages()) | set(WHATS)


def wordless(template: str) -> bool:
    """A template of nothing but placeholders and punctuation (`%(label)s: %(said)s`): nothing to translate."""
    return not re.search(r"[A-Za-z]", re.sub(r"%\(\w+\)[sr]|\{\w+\}", "", template))
