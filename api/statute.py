"""The statute: `GET /statute?on=` (the parameters in force on a day, their history, the act that introduced each
version), `GET /statute/amendments`, and `POST /statute/amendments`, the Mesa's record of a law that amends it
(docs/law/amendments.md). Views parse, call one application method, dump."""

from __future__ import annotations

from typing import Any

from flask import g
from marshmallow import RAISE, Schema, fields, validate

from api import responses as r
from api.body import Blueprint
from api.fields import BoundedDict, BoundedList, Day, Reference
from api.http import (
    competent, errors_doc, idempotent_request, receipt_of, replay_headers, tramita, write_doc,
)
from domain.parameters import COMPARISONS

blp = Blueprint("statute", __name__, description="The statute's dated parameters and their amendments")

#: The most parameter versions one amendment may give (the whole statute has fewer than a hundred parameters).
MAX_AMENDMENT_VERSIONS = 200


class StatuteVersionSchema(Schema):
    """One new version of a parameter, in the statute data's own terms (docs/law/amendments.md)."""

    id = Reference(required=True, min_length=1, metadata={"description": "the parameter (GET /statute lists them)"})
    article = Reference(required=True, min_length=1, metadata={"description": "the article id it cites, e.g. "
                                                                             "cf-art-18-par-4"})
    effective_from = Day(required=True, metadata={"description": "the day the version enters into force"})
    effective_until = Day(load_default=None, metadata={"description": "its last day, when the law gives one"})
    value = fields.Raw(required=True, allow_none=True, metadata={
        "description": "the value, shaped like the parameter's other versions (text, whole number, share as "
                       "text, list, table; a date as YYYY-MM-DD)"})
    comparison = fields.String(load_default=None, validate=validate.OneOf(list(COMPARISONS)))
    source = Reference(required=True, min_length=1, metadata={"description": "the law and its publication that "
                                                                            "give this version (one line)"})
    extra = BoundedDict(keys=Reference(min_length=1), values=fields.Raw(allow_none=True), load_default=None, metadata={
        "description": "the parameter's own further fields (e.g. known_through for the election dates)"})


class StatuteAmendmentSchema(Schema):
    """A law that amends the statute: its name, its publication day (the act's legal date), the sources it adds
    and the versions it gives."""

    published_on = Day(required=True, metadata={"description": "the day the law was published (the act's legal "
                                                              "date)"})
    law = Reference(required=True, min_length=1, metadata={
        "description": "the amending law: its kind, number and date"})
    sources = BoundedDict(keys=Reference(min_length=1), values=Reference(min_length=1), load_default=None, metadata={
        "description": "short names of the sources the versions cite, each with its full citation"})
    parameters = BoundedList(fields.Nested(StatuteVersionSchema), required=True, max_items=MAX_AMENDMENT_VERSIONS,
                             validate=validate.Length(min=1))


class StatuteQuerySchema(Schema):
    on = Day(metadata={"description": "the day (default: today in Rio Branco)"})
    parameter = Reference(metadata={"description": "one parameter only"})


@blp.route("/statute/amendments", methods=["POST"], endpoint="statute-amended")
@competent("statute-amended", if_match=False)
@blp.arguments(StatuteAmendmentSchema())
@blp.response(201, r.StatuteActedSchema, headers={"Location": {"schema": {"type": "string"}}})
@write_doc(if_match=False, path=False)
@blp.doc(summary="The Mesa records a law that amends the statute: new versions of its parameters, judged as the "
                 "shipped data is and against the acts already judged", operationId="statute-amended")
def statute_amended(data: dict[str, Any]):  # noqa: ANN201
    app = tramita()
    parameters = [{**{k: v for k, v in entry.items() if k != "extra"}, **(entry.get("extra") or {})}
                  for entry in data["parameters"]]
    acted = app.idempotently(idempotent_request("statute-amended"), lambda: app.amend_statute(
        g.actor, data["published_on"], law=data["law"], parameters=parameters, sources=data["sources"]))
    return {"act": "statute-amended", "version": acted.version, "result": acted.result,
            "receipt": receipt_of(acted)}, 201, replay_headers(acted, Location="/statute/amendments")


@blp.route("/statute", methods=["GET"], endpoint="get_statute")
@blp.arguments(StatuteQuerySchema, location="query", unknown=RAISE)
@blp.response(200, r.StatuteSchema)
@errors_doc([401, 422], summary="The statute's parameters in force on a day, each with its history and the act "
                                "that introduced each version")
def get_statute(query: dict[str, Any]):  # noqa: ANN201
    app = tramita()
    return app.statute_on(query.get("on") or app.today(), query.get("parameter"))


@blp.route("/statute/amendments", methods=["GET"], endpoint="list_statute_amendments")
@blp.response(200, r.StatuteAmendmentRowSchema(many=True))
@errors_doc([401], summary="Every amendment of the statute recorded, oldest first")
def list_statute_amendments():  # noqa: ANN201
    return tramita().amendments()
