"""A form drawn from an act's marshmallow schema, and the form's text read back into the JSON that schema takes.

One source: the request schemas of the JSON API (api/schemas.py). Each field of the schema becomes one input by
its type: a date a text input read as dd/mm/aaaa, a count, figure or share a text input read in Brazilian notation
("1.234,56" is 1234.56; English notation on English pages), a yes/no a checkbox, a choice a select, a municipality
a select (checkboxes for a list) of the registry, free text a textarea; a list of names or references is one per
line, a list of records (areas, signatures) one record per line with its fields separated by ";", a mapping one
"key: value" line per entry (a record's fields after the colon separated by ";"). The documents an act attaches are
files uploaded in the same form (api/pages/forms.py stores them and cites their SHA-256).

Reading only translates: what this module cannot read (a date that is no day) is refused naming its field; all the
rest is loaded through the same schema as the API's, so the checks are the API's.
"""

from __future__ import annotations

import re
from datetime import date
from typing import Any

from flask_babel import gettext as _
from marshmallow import Schema, fields, validate
from werkzeug.datastructures import MultiDict

from api.fields import MAX_FREE_TEXT_CHARS, Count, Day, DecimalText, Quantity, Share
from api.i18n import field_message
from api.pages import form_labels

#: Fields whose value is a municipality of the registry (a select; a list of them, checkboxes).
MUNICIPALITY_FIELDS = ("municipalities", "receiving", "origin", "seat_origin", "municipality")
#: Fields a form does not draw as inputs: the documents are files (`anexos`), the kind is chosen before.
NOT_DRAWN = ("attachments", "kind")
#: The form's own names: the files, the case version it was drawn on, its one-time key, the CSRF token.
FILES, VERSION, KEY = "anexos", "versao", "chave"
YES = ("sim", "s", "yes", "y", "true", "verdadeiro")
NO = ("não", "nao", "n", "no", "false", "falso")
_DAY = re.compile(r"([0-9]{1,2})/([0-9]{1,2})/([0-9]{4})")
_ISO_DAY = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_THOUSANDS_PT = re.compile(r"-?[0-9]{1,3}(\.[0-9]{3})+")


class FormError(Exception):
    """The form holds what cannot be read as its field's type: the messages by field name."""

    def __init__(self, errors: dict[str, list[str]]) -> None:
        super().__init__(errors)
        self.errors = errors


def kind_of(field: fields.Field) -> str:
    """The widget of a field: date, number, share, quantity, checkbox, select, text, textarea."""
    if isinstance(field, Day):
        return "date"
    if isinstance(field, (Count, DecimalText, fields.Integer)):
        return "number"
    if isinstance(field, Quantity):
        return "quantity"
    if isinstance(field, Share):
        return "share"
    if isinstance(field, fields.Boolean):
        return "checkbox"
    if choices_of(field):
        return "select"
    if any(isinstance(v, validate.Length) and v.max == MAX_FREE_TEXT_CHARS for v in field.validators):
        return "textarea"
    return "text"


def choices_of(field: fields.Field) -> list[str]:
    return next((list(v.choices) for v in field.validators if isinstance(v, validate.OneOf)), [])


def columns_of(schema: Schema) -> list[str]:
    return list(schema.fields)


def widget(name: str, field: fields.Field) -> dict[str, Any]:
    """How one field is drawn: its widget, label, help, whether required, its choices or columns."""
    drawn: dict[str, Any] = {"name": name, "label": form_labels.label(name), "help": form_labels.help_of(name),
                             "required": field.required, "choices": [], "columns": [], "key": None}
    if isinstance(field, fields.List):
        inner = field.inner
        if isinstance(inner, fields.Nested):
            drawn.update(widget="records", columns=columns_of(inner.schema))
        else:
            drawn.update(widget="municipalities" if name in MUNICIPALITY_FIELDS else "lines")
    elif isinstance(field, fields.Dict):
        values = field.value_field
        drawn.update(widget="mapping", columns=columns_of(values.schema) if isinstance(values, fields.Nested) else [])
    elif name in MUNICIPALITY_FIELDS:
        drawn.update(widget="municipality")
    else:
        drawn.update(widget=kind_of(field), choices=choices_of(field))
    if drawn["columns"]:
        drawn["format"] = "; ".join(form_labels.label(column) for column in drawn["columns"])
    return drawn


def widgets(schema: Schema, only: tuple[str, ...] | None = None) -> list[dict[str, Any]]:
    """The inputs of a schema's form, in the schema's order (only `only`'s fields, in that order, when given),
    the legal date first."""
    names = [n for n in (only or tuple(schema.fields)) if n in schema.fields and n not in NOT_DRAWN]
    names.sort(key=lambda n: n != "occurred_on")
    return [widget(name, schema.fields[name]) for name in names]


# ------------------------------------------------------------------------------ reading the form


def day_text(raw: str, field: str) -> str:
    """dd/mm/aaaa (or aaaa-mm-dd) as the ISO date the schema takes; a day that does not exist is refused."""
    found = _DAY.fullmatch(raw)
    if found is None:
        if _ISO_DAY.fullmatch(raw):
            return raw
        raise FormError({field: [_("%(value)s is not a date: write it as dd/mm/aaaa.", value=raw)]})
    day, month, year = (int(part) for part in found.groups())
    try:
        return date(year, month, day).isoformat()
    except ValueError:
        raise FormError({field: [_("%(value)s is not a day of the calendar (dd/mm/aaaa).", value=raw)]}) from None


def number_text(raw: str, portuguese: bool) -> str:
    """A figure as the schema takes it ("1234.56"): Brazilian notation on Portuguese pages ("1.234,56", "1.234",
    "0,5"; a point alone followed by groups of three digits groups thousands), English notation otherwise."""
    text = raw.replace(" ", "").replace("\u00a0", "")
    if not portuguese:
        return text.replace(",", "")
    if "," in text:
        return text.replace(".", "").replace(",", ".")
    return text.replace(".", "") if _THOUSANDS_PT.fullmatch(text) else text


def value_of(raw: str, field: fields.Field, name: str, portuguese: bool) -> Any:
    """One text of the form as the JSON value of `field`."""
    kind = kind_of(field)
    if kind == "date":
        return day_text(raw, name)
    if kind == "number":
        return number_text(raw, portuguese)
    if kind == "share":
        return raw if "/" in raw else number_text(raw, portuguese)
    if kind == "quantity":
        if field.booleans and raw.lower() in YES + NO:  # type: ignore[attr-defined]
            return raw.lower() in YES
        return number_text(raw, portuguese)
    return raw


def record_of(text: str, schema: Schema, name: str, portuguese: bool) -> dict[str, Any]:
    """One line of a list of records (or a mapping's value): its fields in the schema's order, split on ";"."""
    parts = [part.strip() for part in text.split(";")]
    names = columns_of(schema)
    if len(parts) > len(names):
        raise FormError({name: [_("%(line)s has more than %(n)s fields separated by \";\".", line=text,
                                  n=len(names))]})
    return {column: value_of(part, schema.fields[column], f"{name}.{column}", portuguese)
            for column, part in zip(names, parts) if part}


def lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip()]


def field_value(name: str, field: fields.Field, form: MultiDict, portuguese: bool, checks: bool = False) -> Any:
    """The JSON value of one field of the form; None when the form leaves it empty (the schema's default).
    `checks`: the list is drawn as checkboxes, one value per box ticked."""
    if isinstance(field, fields.Boolean):
        return name in form
    if isinstance(field, fields.List) and (checks or name in MUNICIPALITY_FIELDS):
        return [code for code in form.getlist(name) if code.strip()] or None
    raw = form.get(name, "").strip()
    if not raw:
        return None
    if isinstance(field, fields.List):
        inner = field.inner
        if isinstance(inner, fields.Nested):
            return [record_of(line, inner.schema, name, portuguese) for line in lines(raw)]
        return [value_of(line, inner, name, portuguese) for line in lines(raw)]
    if isinstance(field, fields.Dict):
        entries: dict[str, Any] = {}
        for line in lines(raw):
            key, colon, rest = line.partition(":")
            if not colon or not key.strip():
                raise FormError({name: [_("%(line)s is not written as key: value.", line=line)]})
            values = field.value_field
            entries[key.strip()] = (record_of(rest, values.schema, name, portuguese)
                                    if isinstance(values, fields.Nested) else
                                    value_of(rest.strip(), values, name, portuguese))
        return entries
    return value_of(raw, field, name, portuguese)


def read_form(schema: Schema, drawn: list[dict[str, Any]], form: MultiDict, portuguese: bool) -> dict[str, Any]:
    """The JSON body the form's inputs make for `schema` (FormError naming each field it cannot read)."""
    body: dict[str, Any] = {}
    errors: dict[str, list[str]] = {}
    for entry in drawn:
        name = entry["name"]
        if entry["widget"] == "keyed":  # one input per key, named <field>.<key>; the domain judges the keys
            keyed = {key.split(".", 1)[1]: text.strip() for key, text in form.items(multi=True)
                     if key.startswith(f"{name}.") and text.strip()}
            if keyed:
                body[name] = keyed
            continue
        try:
            value = field_value(name, schema.fields[name], form, portuguese,
                                checks=entry["widget"] in ("checks", "municipalities"))
        except FormError as refused:
            for key, messages in refused.errors.items():
                errors.setdefault(key.split(".")[0], []).extend(messages)
            continue
        if value is not None:
            body[name] = value
    if errors:
        raise FormError(errors)
    return body


def flattened(messages: Any, prefix: str = "") -> list[str]:
    """marshmallow's nested messages of one field as lines ("linha 2, Área (km²): ...")."""
    if isinstance(messages, dict):
        found = []
        for key, value in messages.items():
            where = _("line %(n)s", n=key + 1) if isinstance(key, int) else form_labels.label(str(key))
            found += flattened(value, f"{prefix}{where}: " if key != "_schema" else prefix)
        return found
    if isinstance(messages, list):
        return [line for message in messages for line in flattened(message, prefix)]
    return [f"{prefix}{field_message(messages) if isinstance(messages, str) else messages}"]
