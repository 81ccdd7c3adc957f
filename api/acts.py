"""`POST /cases` and `POST /cases/{case}/acts/{act}`: one documented operation per act of the lifecycles
(docs/law/lifecycles.md).

Each act is a row of `ACTS`: its kebab-case name (the competence tables' name), the article that governs it,
its request schema, and the application method that records it. The schema's fields are that method's keyword
arguments, so the view only parses, calls, and dumps. Before the body is read, the token's role must be one of
the bodies the statute names for the act (403 otherwise); the act then judges competence again on its legal date
for the case's kind and municipality.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from flask import g
from api.body import Blueprint
from marshmallow import Schema

from api import responses as r
from api import schemas as s
from api.http import (
    acted_response, competent, expected_version, idempotent_request, receipt_of, replay_headers, tramita,
    write_doc,
)
from domain.access import IdempotentRequest
from domain.application import Acted, Attaching


@dataclass(frozen=True)
class Act:
    name: str
    method: str
    schema: type[Schema]
    summary: str


ACTS: tuple[Act, ...] = (
    Act("requisition-issued", "issue_requisition", s.RequisitionIssuedSchema,
        "Art. 10: the Mesa requisitions information from a competent body (requisição)"),
    Act("requisition-received", "receive_requisition", s.RequisitionReceivedSchema,
        "Art. 10: the body received the requisition; its 30-day answer deadline starts"),
    Act("requisition-refused", "refuse_requisition", s.RequisitionRefusedSchema,
        "Art. 10 §1: a body refused a requisition (recorded as a breach)"),
    Act("finding-recorded", "record_finding", s.FindingRecordedSchema,
        "Art. 4 par. ún., Art. 31: a competent body's finding (apuração) with its document"),
    Act("requirements-verified", "verify_requirements", s.NoFieldsSchema,
        "Art. 4, 5: the Mesa judges the requirements met for the new and every origin municipality"),
    Act("council-decree-recorded", "record_council_decree", s.CouncilDecreeRecordedSchema,
        "Art. 28-30: a council's legislative decree (absolute majority of its seats)"),
    Act("plebiscite-dispensed", "dispense_plebiscite", s.PlebisciteDispensedSchema,
        "Art. 1-I: the plebiscite is dispensed for an area change within the brackets"),
    Act("plebiscite-decreed", "decree_plebiscite", s.PlebisciteDecreedSchema,
        "Art. 11: the Assembly decrees the plebiscite (decreto legislativo)"),
    Act("plebiscite-scheduled", "schedule_plebiscite", s.PlebisciteScheduledSchema,
        "Art. 12: the TRE sets the plebiscite's date by resolution"),
    Act("plebiscite-result-homologated", "homologate_result", s.PlebisciteResultHomologatedSchema,
        "Art. 13: the TRE homologates the result; Art. 14's 15 days start"),
    Act("result-communicated", "communicate_result", s.NoFieldsSchema,
        "Art. 14: the TRE communicates the result to the Assembly president"),
    Act("result-registered-in-plenary", "register_in_plenary", s.NoFieldsSchema,
        "Art. 15: the president registers the result in plenary and informs the Governor"),
    Act("creation-bill-drafted", "draft_bill", s.CreationBillDraftedSchema,
        "Art. 16: the CCJ drafts the creation bill"),
    Act("law-enacted", "enact_law", s.LawEnactedSchema,
        "Art. 17, 31, 37: the law (creation, area change, district, extinction); the registry changes"),
    Act("request-signatures-certified", "certify_extinction_request", s.RequestSignaturesCertifiedSchema,
        "Art. 37-II: the TRE certifies the extinction request's signatures"),
    Act("administrator-list-sent", "send_administrator_list", s.AdministratorListSentSchema,
        "Art. 20: the Governor sends the list of three names"),
    Act("administrator-appointed", "appoint_administrator", s.AdministratorAppointedSchema,
        "Art. 20: the Assembly chooses the Administrator"),
    Act("municipality-installed", "install_municipality", s.MunicipalityInstalledSchema,
        "Art. 19: the Mayor, Vice-Mayor and councillors take office; Art. 22-24 deadlines start"),
    Act("ledger-transferred", "transfer_ledger", s.OriginDocumentSchema,
        "Art. 22 par. ún.: an origin municipality delivers its books and accounts"),
    Act("personnel-documents-sent", "send_personnel_documents", s.OriginDocumentSchema,
        "Art. 26 par. ún.: an origin municipality sends its staff documents"),
    Act("prefect-bill-submitted", "submit_prefect_bill", s.PrefectBillSubmittedSchema,
        "Art. 23 I-IV: the Mayor sends a bill to the Câmara"),
    Act("organic-law-promulgated", "promulgate_organic_law", s.OrganicLawPromulgatedSchema,
        "Art. 24: the Câmara promulgates the organic law"),
    Act("remuneration-fixed", "fix_remuneration", s.RemunerationFixedSchema,
        "Art. 25: the Câmara fixes the remuneration"),
    Act("communication-sent", "send_communication", s.CommunicationSentSchema,
        "Art. 40: the creation or installation is communicated to one recipient"),
    Act("case-archived", "archive_case", s.CaseArchivedSchema,
        "Art. 16 par. ún. (or withdrawal, rejection): the case is archived; its freeze is lifted"),
)

blp = Blueprint("acts", __name__, description="Acts of a case: each recorded as an immutable, hash-chained event")

#: OpenAPI links (what a client, or schemathesis' stateful phase, may call next with what an answer gave):
#: an act's answer (or a list) -> the case; the case -> each of its acts, with its ETag as If-Match. A JSON pointer
#: in a URI fragment (RFC 6901 section 6): the braces percent-encoded, as OpenAPI 3.1's `uri-reference` requires.
GET_CASE = "#/paths/~1cases~1%7Bcase_ref%7D/get"


def case_link(case_id: str, description: str = "the case as the act left it") -> dict[str, Any]:
    return {"GetCase": {"operationRef": GET_CASE, "parameters": {"case_ref": case_id}, "description": description}}


def act_links(case_id: str) -> dict[str, Any]:
    return {act.name: {"operationId": act.name, "description": f"{act.summary} (when `next_acts` lists it)",
                       "parameters": {"case_ref": case_id, "header.If-Match": "$response.header.ETag"}}
            for act in ACTS}


@blp.route("/cases", methods=["POST"], endpoint="petition-filed")
@competent("petition-filed", if_match=False)
@blp.arguments(s.PetitionSchema())  # one instance: a schema class is instantiated per request
@blp.response(201, r.ActedSchema, headers={"Location": {"schema": {"type": "string"}},
                                            "ETag": {"schema": {"type": "string"}}})
@write_doc(if_match=False, path=False)
@blp.doc(summary="Art. 8, 9, 31, 37: a petition opens a case (and freezes its territories, Art. 38)",
         operationId="petition-filed", responses={201: {"links": case_link("$response.body#/case_id")}})
def petition_filed(data: dict[str, Any]):  # noqa: ANN201
    acted = file_petition(data, idempotent_request("petition-filed"))
    return acted_response("petition-filed", acted, status=201)


@blp.route("/municipalities/<ibge_code>/figures", methods=["POST"], endpoint="figure-recorded")
@competent("figure-recorded", if_match=False)
@blp.arguments(s.FigureRecordedSchema())
@blp.response(201, r.FigureActedSchema)
@write_doc(if_match=False, path=True)
@blp.doc(summary="Art. 4 par. ún.: a competent body records a registry figure (Art. 5 judges on the figures in "
                 "force on an act's date)", operationId="figure-recorded")
def figure_recorded(data: dict[str, Any], ibge_code: str):  # noqa: ANN201
    app = tramita()
    occurred_on = data.pop("occurred_on")
    acted = app.idempotently(idempotent_request("figure-recorded"),
                             lambda: app.record_figure(ibge_code, g.actor, occurred_on, **data))
    return {"act": "figure-recorded", "municipality": acted.number, "version": acted.version,
            "receipt": receipt_of(acted)}, 201, replay_headers(acted)


@blp.route("/toponyms", methods=["POST"], endpoint="toponym-added")
@competent("toponym-added", if_match=False)
@blp.arguments(s.ToponymAddedSchema())
@blp.response(201, r.ToponymActedSchema, headers={"Location": {"schema": {"type": "string"}}})
@write_doc(if_match=False, path=False)
@blp.doc(summary="Art. 17 par. ún.: the IBGE adds the name of a municipality created elsewhere in Brazil after the "
                 "shipped list, so that a new municipality may not repeat it", operationId="toponym-added")
def toponym_added(data: dict[str, Any]):  # noqa: ANN201
    app = tramita()
    occurred_on = data.pop("occurred_on")
    acted = app.idempotently(idempotent_request("toponym-added"), lambda: app.add_toponym(g.actor, occurred_on, **data))
    return ({"act": "toponym-added", "version": acted.version, "receipt": receipt_of(acted)}, 201,
            replay_headers(acted, Location="/toponyms"))


def record_act(act: Act, case_ref: str, data: dict[str, Any], request: IdempotentRequest | None,
               version: int | None) -> Acted:
    """Record `act` on the case with the fields its schema loaded (`data`, consumed), once per idempotent
    `request`, decided on `version` (None: any): what the JSON API and the pages' forms both call."""
    app = tramita()
    occurred_on, attachments = data.pop("occurred_on"), Attaching(act.name, data.pop("attachments", []))
    method = getattr(app, act.method)
    return app.idempotently(request, lambda: method(case_ref, g.actor, occurred_on, expected_version=version, **data),
                            attachments)


def file_petition(data: dict[str, Any], request: IdempotentRequest | None) -> Acted:
    """Open a case with the petition's fields as `PetitionSchema` loaded them (`data`, consumed), once per
    idempotent `request`: what `POST /cases` and the pages' `/processos/novo` both call."""
    app = tramita()
    occurred_on, attachments = data.pop("occurred_on"), Attaching("petition-filed", data.pop("attachments", []))
    return app.idempotently(request, lambda: app.open_case(g.actor, occurred_on, **data), attachments)


def _register(act: Act) -> None:
    def record(data: dict[str, Any], case_ref: str):  # noqa: ANN202
        acted = record_act(act, case_ref, data, idempotent_request(act.name), expected_version())
        return acted_response(act.name, acted, status=200)

    record.__name__ = act.method
    view = blp.doc(summary=act.summary, operationId=act.name,
                   responses={200: {"links": case_link("$response.body#/case_id")}})(record)
    view = write_doc(if_match=True, path=True)(view)
    view = blp.response(200, r.ActedSchema, headers={"ETag": {"schema": {"type": "string"}}})(view)
    view = blp.arguments(act.schema())(view)  # one instance, not one per request
    view = competent(act.name, if_match=True)(view)
    blp.route(f"/cases/<case_ref>/acts/{act.name}", methods=["POST"], endpoint=act.name)(view)


for _act in ACTS:
    _register(_act)
