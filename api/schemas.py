"""The API's request schemas, one per act (marshmallow 4); the responses and queries are in api/responses.py.
The OpenAPI document is generated from both.

Request schemas only check shape (types, required fields, and the edge's product limits of `api/fields.py`:
bounded text without control characters, strict dates and moments, bounded numbers); every rule of the law is
judged by the domain, which names the article. Unknown fields are refused (marshmallow's default), so a misspelt
field is not ignored. Each act's schema has exactly the fields of the application method that records it.
"""

from __future__ import annotations

from typing import Any

from flask import current_app
from marshmallow import Schema, fields, post_load, validate

from api.fields import (
    MAX_ATTACHMENTS, MAX_SIGNATURES, BoundedDict, BoundedList, Count, Day, DecimalText, FreeText, Name, Quantity,
    Reference, Share,
)
from domain.case import KINDS, PREFECT_BILLS
from domain.errors import InvalidActError


def _required(make, description: str, **options):  # noqa: ANN001, ANN202
    return make(required=True, min_length=1, metadata={"description": description}, **options)


def reference(description: str, **options) -> fields.String:  # noqa: ANN003
    """A required, non-empty reference (a document, a law, a code): one line."""
    return _required(Reference, description, **options)


def name(description: str, **options) -> fields.String:  # noqa: ANN003
    """A required, non-empty name: one line."""
    return _required(Name, description, **options)


def free_text(description: str, **options) -> fields.String:  # noqa: ANN003
    """A required, non-empty free text (a reason, a justification): newlines and tabs allowed."""
    return _required(FreeText, description, **options)


def codes(description: str, **options) -> fields.List:  # noqa: ANN003
    """A required, non-empty list of non-empty references."""
    return BoundedList(Reference(min_length=1), required=True, validate=validate.Length(min=1),
                       metadata={"description": description}, **options)


class AttachmentSchema(Schema):
    """A document the act cites, stored before with `POST /documents`: its SHA-256 and the name it goes by."""

    sha256 = fields.String(required=True, validate=validate.Regexp(r"^[0-9a-f]{64}$", error=(
        "64 lowercase hex digits: the SHA-256 that POST /documents answered")), metadata={
        "description": "the document's SHA-256 (hex), as `POST /documents` answered it", "pattern": "^[0-9a-f]{64}$"})
    name = reference("what the document is, as the act cites it (e.g. Decreto Legislativo 12/2026.pdf)")


class ActSchema(Schema):
    """Every act: its legal date (the day it happened, not when it is recorded), and the documents it cites."""

    occurred_on = Day(required=True, metadata={"description": "the act's legal date, YYYY-MM-DD"})
    attachments = BoundedList(fields.Nested(AttachmentSchema), load_default=None, max_items=MAX_ATTACHMENTS,
                              metadata={"description": "documents the act cites, each stored first with `POST "
                                                       "/documents`; recorded in the act's save, by SHA-256"})

    @post_load
    def resolve_attachments(self, data: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        """Each attachment must name a stored document, once (422 `invalid-act` naming `attachments.<i>.sha256`);
        it is then described as stored (type, size), which the act records."""
        attachments = data.get("attachments")
        if not attachments:
            data.pop("attachments", None)
            return data
        stored = current_app.extensions["tramita.documents"].describe(sorted({a["sha256"] for a in attachments}))
        seen: set[str] = set()
        for index, attachment in enumerate(attachments):
            digest = attachment["sha256"]
            if digest not in stored:  # well formed, but naming nothing stored: refused as an act is (invalid-act)
                raise InvalidActError(f"attachments.{index}.sha256", f"nenhum documento {digest} foi guardado: "
                                      "envie-o antes com POST /documents")
            if digest in seen:
                raise InvalidActError(f"attachments.{index}.sha256", "o mesmo documento já está nesta lista")
            seen.add(digest)
        data["attachments"] = [{"sha256": a["sha256"], "name": a["name"], "type": stored[a["sha256"]].type,
                                "size": stored[a["sha256"]].size} for a in attachments]
        return data


# ---------------------------------------------------------------- opening (Art. 8, 9, 31, 37)

class AreaSchema(Schema):
    """Art. 8 par. ún.: one part of the area to emancipate: the municipality it is taken from and, when the part is
    a district (or one of several areas of one municipality), its name; each part needs its own 30 signatures."""

    municipality = reference("IBGE code of the municipality the area belongs to")
    district = Name(load_default=None, metadata={
        "description": "the district (or named area) of that municipality the part is, when the area spans several"})
    area_km2 = DecimalText(required=True, metadata={"description": "area in km², a decimal as text",
                                                    "examples": ["420.5"]})
    description = FreeText(load_default="")


class SignatureSchema(Schema):
    """Art. 8 par. ún.: one voter's signature: the voter title, electoral zone and section, and the area."""

    title = reference("voter title number (12 digits, state code 24 for Acre)")
    zone = reference("electoral zone")
    section = reference("electoral section")
    area = Reference(load_default=None, metadata={
        "description": "the part of the area the voter resides in: the IBGE code of its municipality, or the "
                       "district's name as `areas[].district` gives it (or both, `1200302/Vila Nova`); may be left "
                       "out when the petition's area has one part"})


class PetitionSchema(ActSchema):
    """Art. 8, 9 (creation and area changes), 31 (districts), 37 (extinction): the petition that opens a case."""

    kind = fields.String(required=True, validate=validate.OneOf(KINDS))
    municipalities = codes("IBGE codes of the origin municipalities")
    receiving = Reference(load_default=None, metadata={"description": "IBGE code of the receiving municipality"})
    areas = BoundedList(fields.Nested(AreaSchema), load_default=None)
    proposed_name = Name(load_default=None)
    district = Name(load_default=None)
    signatures = BoundedList(fields.Nested(SignatureSchema), max_items=MAX_SIGNATURES, load_default=None)
    documents = BoundedDict(keys=Reference(), values=Reference(), load_default=None,
                            metadata={"description": "Art. 9: the Art. 4 documents by item (art-4-I ...)"})


# ---------------------------------------------------------------- instruction (Art. 4, 10, 28-30, 1-I)

class RequisitionIssuedSchema(ActSchema):
    body = reference("the requisitioned body (ibge, tre, sefaz, setop, pge, sectma)")
    items = codes("the items requisitioned")


class RequisitionReceivedSchema(ActSchema):
    requisition = reference("the requisition's id, as its issue returned it")


class RequisitionRefusedSchema(ActSchema):
    requisition = reference("the requisition's id")
    reason = free_text("the body's stated reason (recorded as a breach, Art. 10 §1)")


class FindingRecordedSchema(ActSchema):
    item = reference("the Art. 4 (or Art. 31) item: art-4-I ... art-4-VI, art-31-I ...")
    value = Quantity(required=True, booleans=True,
                     metadata={"description": "an integer, a decimal as text, or true/false (Art. 4-V, VI)"})
    document = reference("the document reference of the finding")
    by_origin = BoundedDict(keys=Reference(), values=Quantity(), load_default=None,
                            metadata={"description": "the part of the figure in each origin municipality (Art. 5)"})
    state_tax_revenue = Quantity(load_default=None, allow_none=True,
                                 metadata={"description": "Art. 4-III: the State's tax revenue"})


class CouncilDecreeRecordedSchema(ActSchema):
    municipality = reference("IBGE code of the council's municipality")
    decree = reference("the legislative decree")
    seats = Count(required=True, metadata={"description": "the council's total seats"})
    yes_votes = Count(required=True)


class PlebisciteDispensedSchema(ActSchema):
    justification = free_text("Art. 1-II: natural boundaries, population, access, resources")


class PlebisciteDecreedSchema(ActSchema):
    decree = reference("the Assembly's legislative decree")


class PlebisciteScheduledSchema(ActSchema):
    resolution = reference("the TRE resolution")
    plebiscite_date = Day(required=True)


class PopulationResultSchema(Schema):
    registered = Count(required=True)
    turnout = Count(required=True, metadata={"description": "blank and void ballots included"})
    yes = Count(required=True)
    no = Count(required=True)
    blank = Count(required=True)
    void = Count(required=True)


class PlebisciteResultHomologatedSchema(ActSchema):
    voted_on = Day(required=True)
    populations = BoundedDict(keys=Reference(), values=fields.Nested(PopulationResultSchema), required=True,
                              metadata={"description": '"area", or each municipality\'s IBGE code for a fusion'})
    seat_votes = BoundedDict(keys=Reference(), values=Count(), load_default=None,
                             metadata={"description": "Art. 30: votes for each candidate seat (fusion)"})


class NoFieldsSchema(ActSchema):
    """The act has no content beyond its legal date."""


class CreationBillDraftedSchema(ActSchema):
    bill = reference("the bill")


class CaseArchivedSchema(ActSchema):
    reason = free_text("withdrawal, rejection, or Art. 16 par. ún. (unfavourable result)")


# ---------------------------------------------------------------- the law (Art. 17, 31, 37)

class LawEnactedSchema(ActSchema):
    law = reference("the law (Lei n.º ...)")
    name = Name(load_default=None, metadata={"description": "Art. 17: the new municipality's name"})
    seat_origin = Reference(load_default=None)
    limits = FreeText(load_default="")
    comarca = Name(load_default="")
    districts = BoundedList(Name(), load_default=None)
    living_person_declaration = fields.Boolean(load_default=False, metadata={
        "description": "Art. 17: the signed declaration that the name is not a living person's"})
    ibge_code = Reference(load_default=None)
    reintegration = BoundedDict(keys=Reference(), values=Share(), load_default=None,
                                metadata={"description": "Art. 37: the origin municipalities and their shares"})


class RequestSignaturesCertifiedSchema(ActSchema):
    valid_signatures = Count(required=True)
    registered_voters = Count(required=True)


# ---------------------------------------------------------------- after the law (Art. 19-26, 40)

class AdministratorListSentSchema(ActSchema):
    names = BoundedList(Name(min_length=1), required=True, metadata={"description": "Art. 20: exactly three"})


class AdministratorAppointedSchema(ActSchema):
    administrator = name("one of the three names")


class MunicipalityInstalledSchema(ActSchema):
    mayor = name("the Mayor taking office")
    vice_mayor = name("the Vice-Mayor taking office")
    councillors = BoundedList(Name(min_length=1), required=True, validate=validate.Length(min=1))


class OriginDocumentSchema(ActSchema):
    origin = reference("IBGE code of the origin municipality")
    document = reference("the delivery record")


class PrefectBillSubmittedSchema(ActSchema):
    item = fields.String(required=True, validate=validate.OneOf(list(PREFECT_BILLS)))
    bill = reference("the bill sent to the Câmara")


class OrganicLawPromulgatedSchema(ActSchema):
    organic_law = reference("the organic law")


class RemunerationFixedSchema(ActSchema):
    act = reference("the Câmara's act fixing the remuneration")


class CommunicationSentSchema(ActSchema):
    subject = reference("creation or installation (Art. 40)")
    recipient = reference("union, state, origin-municipality:<IBGE>, ibge, ebct")
    document = reference("the communication (ofício)")


class ToponymAddedSchema(ActSchema):
    """Art. 17 par. ún.: a municipality created elsewhere in Brazil after the shipped IBGE list, whose name a new
    municipality (or district, Art. 32 par. ún.) may then not repeat."""

    class Meta:
        exclude = ("attachments",)  # the act cites its source; documents are attached to a case's acts

    name = Name(required=True, metadata={"description": "the municipality's name as the IBGE lists it"})
    uf = reference("its state's two letters (UF), e.g. MT")
    ibge_code = Reference(load_default=None, metadata={"description": "its IBGE code (seven digits), when known"})
    source = reference("where the name comes from (the IBGE's list, the state law and its installation)")


class FigureRecordedSchema(ActSchema):
    """Art. 4 par. ún.: a registry figure of a municipality, in force from `as_of`, with its source."""

    class Meta:
        exclude = ("attachments",)  # a registry figure cites its source; documents are attached to a case's acts

    figure = reference("population, voters, revenue, buildings or area_km2")
    value = Quantity(required=True, metadata={"description": "an integer or a decimal as text"})
    as_of = Day(required=True, metadata={"description": "the day the figure describes"})
    source = reference("where the figure comes from (census, TRE roll, SEFAZ report, ...)")
