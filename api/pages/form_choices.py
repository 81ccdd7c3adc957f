"""The choices a form offers where an act's schema takes a key: the requisitioned body and the items requisitioned
(Art. 10), the item a body's finding answers (Art. 4 par. ún., 32), the subject and the recipient of an Art. 40
communication, and the schema's own fixed choices (the kind of case, the Mayor's bill of Art. 23).

Each choice is written in words (a body by its name, an item as the law writes its article, a recipient as Art. 40
names it) and sends its key, the one the JSON API takes. They are offered from the statute in force on the day the
form is drawn, so a clerk picks what the domain accepts; the domain still judges whatever is sent.
"""

from __future__ import annotations

import re
from typing import Any

from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l

from api.pages import format as fmt
from domain.acts import Actor
from domain.case.kinds import DISTRICT_KINDS
from domain.words import ROLE_NAMES

#: Art. 40's recipients and subjects that are not bodies of the statute's roles, in words.
WORDS = {"union": _l("the powers of the Union"), "state": _l("the powers of the State"),
         "ebct": _l("the Post Office (EBCT)"), "creation": _l("the creation (the law)"),
         "installation": _l("the installation")}
#: An Art. 40 recipient standing for each origin municipality of the case (`origin-municipality:<IBGE>`).
ORIGIN = "origin-municipality"
#: An IBGE municipality code inside a sentence: seven digits standing alone.
_CODE = re.compile(r"(?<![\w.,/-])([0-9]{7})(?![\w.,/-])")


def offered(act: str, case: dict[str, Any], actor: Actor, statute: Any, on: Any) -> dict[str, list[str]]:
    """The keys each field of `act`'s form may take on `case`, for `actor`, by the statute in force `on`."""
    if act == "petition-filed":  # Art. 9: the documents of each item of Art. 4
        return {"documents": [item for item in statute.in_force("competence.finding", on).value
                              if item.startswith("art-4-")]}
    if act in ("requisition-issued", "finding-recorded"):
        competence = statute.in_force("competence.finding", on).value
        prefix = "art-31-" if case.get("kind") in DISTRICT_KINDS else "art-4-"
        items = [item for item in competence if item.startswith(prefix)]
        if act == "finding-recorded":
            return {"item": [item for item in items if actor.role in competence[item]] or items}
        return {"body": sorted({body for item in items for body in competence[item]}), "items": items}
    if act in ("communication-sent", "district-communication-sent"):
        recipients = []
        for recipient in statute.in_force("art-40.recipients", on).value:
            recipients += ([f"{ORIGIN}:{code}" for code in case.get("municipalities", [])]
                           if recipient == ORIGIN else [recipient])
        return {"subject": list(statute.in_force("art-40.communicated-acts", on).value), "recipient": recipients}
    return {}


def word(value: str, names: dict[str, str]) -> str:
    """A key as the form shows it: an article as the law writes it, a body or a recipient by its name."""
    if value.startswith(f"{ORIGIN}:"):
        code = value.split(":", 1)[1]
        return _("the origin municipality %(name)s", name=names.get(code) or fmt.code(code))
    if value in WORDS:
        return str(WORDS[value])
    if value in ROLE_NAMES:
        return fmt.role(value)
    if value.startswith(("art-", "cf-art-")):
        return fmt.article(value)
    return fmt.kind(value) if value in fmt.KINDS else value


def with_names(shown: dict[str, Any], names: dict[str, str]) -> dict[str, Any]:
    """A refusal's messages with each municipality of the registry named beside its code: the domain's sentences
    carry the code (`a área 1200302 tem 3 assinaturas`), a clerk reads the name (`Feijó (1200302)`)."""
    def named(text: str) -> str:
        return _CODE.sub(lambda found: f"{names[found.group(1)]} ({found.group(1)})" if found.group(1) in names
                         else found.group(1), text)

    if isinstance(shown.get("refusal"), str):
        shown["refusal"] = named(shown["refusal"])
    if isinstance(shown.get("errors"), dict):
        shown["errors"] = {field: [named(str(m)) for m in messages] for field, messages in shown["errors"].items()}
    return shown


def labelled(fields: list[dict[str, Any]], choices: dict[str, list[str]], names: dict[str, str]
             ) -> list[dict[str, Any]]:
    """The form's inputs with their choices in words: a field offered keys becomes a select (checkboxes for a
    list, one text input per key for a mapping), and the schema's own choices are written in words too."""
    for entry in fields:
        keys = choices.get(entry["name"])
        if keys is not None:
            entry["widget"] = {"lines": "checks", "mapping": "keyed"}.get(entry["widget"], "select")
        else:
            keys = entry["choices"]
        entry["choices"] = [{"value": key, "label": word(key, names)} for key in keys]
    return fields
