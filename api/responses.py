"""The API's response and query schemas (marshmallow 4): what each read and each act answers, and the query
strings the reads take; the OpenAPI document is generated from these (the request bodies of the acts are in
api/schemas.py)."""

from __future__ import annotations

from marshmallow import Schema, fields, validate

from api.fields import MAX_COUNT, Count, Day, Moment, Name, Reference
from domain.case import KINDS
from projections.queries import DEADLINE_STATUSES


#: `?format=csv` (or `Accept: text/csv`): every row the filters select, as CSV, streamed (docs/api.md).
FORMAT = fields.String(validate=validate.OneOf(("json", "csv")), metadata={
    "description": "csv: every row as CSV (UTF-8 with BOM, `;`-separated), not a page; also `Accept: text/csv`"})
#: Every list's page: `offset` rows skipped, at most `limit` given (docs/api.md).
OFFSET_DOC = {"description": "rows of the list skipped (the answer's `next` gives the next page)"}


class NextActSchema(Schema):
    """An act the case's lifecycle admits now (docs/law/lifecycles.md): the body still has to be competent and
    the legal date sound when it is recorded."""

    act = fields.String(required=True, metadata={"description": "the act, as in POST /cases/{case}/acts/{act}"})
    article = fields.String(required=True, metadata={"description": "the article that orders it"})
    roles = fields.List(fields.String(), required=True, metadata={"description": "the competent bodies' roles"})
    municipalities = fields.List(fields.String(), required=True, metadata={
        "description": "for an act by a municipality's body: the municipalities it is still due from"})


class CaseSchema(Schema):
    """A case as its acts left it (at the version, legal date or recording time asked for)."""

    id = fields.String(required=True)
    number = fields.String(required=True)
    version = fields.Integer(required=True)
    kind = fields.String(required=True)
    stage = fields.String(required=True)
    initiator = fields.String()
    municipalities = fields.List(fields.String())
    receiving = fields.String(allow_none=True)
    new_municipality = fields.String(allow_none=True)
    proposed_name = fields.String(allow_none=True)
    district = fields.String(allow_none=True)
    opened_on = fields.Date()
    last_act = fields.String()
    last_act_on = fields.Date()
    concluded_on = fields.Date(allow_none=True)
    signature_count = fields.Integer()
    signatures_per_area = fields.Dict(keys=fields.String(), values=fields.Integer(), metadata={
        "description": "Art. 8 par. ún.: the signatures of each part of the area (`code` or `code/district`)"})
    frozen = fields.List(fields.String(), metadata={"description": "Art. 38: municipalities this case freezes"})
    impediments = fields.List(fields.Dict())
    obligations = fields.Dict(keys=fields.String(), values=fields.List(fields.String()))
    next_acts = fields.List(fields.Nested(NextActSchema), metadata={
        "description": "what may be recorded next, by the lifecycle in force today (or on `as_of` when asked); "
                       "links: each act's operation"})
    deadlines = fields.Dict(keys=fields.String(), values=fields.Dict())
    areas = fields.Raw()
    documents = fields.Raw()
    requisitions = fields.Raw()
    findings = fields.Raw()
    councils = fields.Raw()
    requirements = fields.Raw(allow_none=True)
    dispensation = fields.Raw(allow_none=True)
    plebiscite = fields.Raw(allow_none=True)
    result = fields.Raw(allow_none=True)
    communicated_on = fields.Date(allow_none=True)
    registered_on = fields.Date(allow_none=True)
    bill = fields.Raw(allow_none=True)
    law = fields.Raw(allow_none=True)
    administrator_list = fields.Raw(allow_none=True)
    administrator = fields.Raw(allow_none=True)
    installation = fields.Raw(allow_none=True)
    remuneration = fields.Raw(allow_none=True)
    organic_law = fields.Raw(allow_none=True)
    extinction_request = fields.Raw(allow_none=True)
    communications = fields.Raw()
    breaches = fields.Raw()
    bills = fields.Raw()
    archived = fields.Raw(allow_none=True)
    attachments = fields.List(fields.Dict(), metadata={
        "description": "the documents the case's acts cite: sha256, name, type, size, act, act_version (the "
                       "version of the act's event), on (its legal date); the bytes at `/documents/{sha256}`"})


class TimelineEventSchema(Schema):
    sequence = fields.Integer(required=True)
    type = fields.String(required=True)
    occurred_on = fields.String(required=True, metadata={"description": "legal date"})
    recorded_at = fields.String(required=True, metadata={"description": "when the system recorded it (UTC)"})
    actor = fields.Dict(required=True)
    article = fields.String(required=True)
    rule_versions = fields.Dict(required=True)
    payload = fields.Dict(required=True)
    prev_hash = fields.String(required=True)
    hash = fields.String(required=True)
    signature = fields.String(allow_none=True, metadata={"description": "the application's signature over the "
                                                         "event's log entry (base64), when it was signed"})


class ReceiptSchema(Schema):
    """The signed receipt of an act: its case's (or registry entry's) last stored event (docs/audit.md)."""

    aggregate_id = fields.String(required=True)
    version = fields.Integer(required=True)
    hash = fields.String(required=True, metadata={"description": "the event's chain hash, hex"})
    notification_id = fields.Integer(required=True, metadata={"description": "its position in the event log"})
    recorded_at = fields.String(required=True)
    note = fields.String(required=True, metadata={"description": "the C2SP signed note of those fields: "
                                                  "`tramita verify --receipt FILE` checks it"})


class ActedSchema(Schema):
    """What recording an act returns: the act, what it decided (its events on the case) and the case's new version
    (also its `ETag`); the case as it now stands is `GET /cases/{id}` (`Location`).

    A retry with the same Idempotency-Key gets the same body, with the header `Idempotent-Replayed: true`.
    """

    act = fields.String(required=True)
    case_id = fields.String(required=True)
    number = fields.String(required=True, metadata={"description": "the case number (LC35-YYYY-NNNN)"})
    version = fields.Integer(required=True)
    result = fields.Raw(allow_none=True, metadata={"description": "what the act returns (e.g. the requisition id)"})
    events = fields.List(fields.Nested(TimelineEventSchema), required=True, metadata={
        "description": "the events the act recorded on the case (what it decided): article, legal date, payload "
                       "and hashes of each"})
    receipt = fields.Nested(ReceiptSchema, allow_none=True, metadata={
        "description": "the signed receipt of the act, to keep outside tramita (null without a signing key)"})


class FigureActedSchema(Schema):
    act = fields.String(required=True)
    municipality = fields.String(required=True, metadata={"description": "the IBGE code"})
    version = fields.Integer(required=True, metadata={"description": "the municipality's version in the registry"})
    receipt = fields.Nested(ReceiptSchema, allow_none=True, metadata={"description": "the signed receipt of the act"})


class ToponymActedSchema(Schema):
    act = fields.String(required=True)
    version = fields.Integer(required=True, metadata={"description": "the list of added names' version in the log"})
    receipt = fields.Nested(ReceiptSchema, allow_none=True, metadata={"description": "the signed receipt of the act"})


class ToponymSchema(Schema):
    name = fields.String(required=True)
    uf = fields.String(required=True)
    ibge_code = fields.String(allow_none=True)
    source = fields.String(required=True)


class ToponymsSchema(Schema):
    version = fields.String(required=True, metadata={
        "description": "the list that judges names (Art. 17 par. ún.): the IBGE snapshot, plus the count of names "
                       "added by acts"})
    shipped = fields.Integer(required=True, metadata={"description": "how many names the IBGE snapshot holds"})
    added = fields.List(fields.Nested(ToponymSchema), required=True, metadata={
        "description": "the names added since, by the IBGE's acts and by creation and fusion laws, in order"})


class CaseQuerySchema(Schema):
    as_of = Day(metadata={"description": "the case as of this legal date"})
    version = Count(minimum=1, metadata={"description": "the case at this version"})
    recorded_before = Moment(metadata={
        "description": "the case as the system knew it before this moment (ISO 8601 with time zone)"})


class CaseListQuerySchema(Schema):
    kind = Reference(validate=validate.OneOf(KINDS), metadata={"description": "the case's kind (Art. 1)"})
    stage = Reference()
    municipality = Reference(metadata={"description": "IBGE code of a municipality the case concerns"})
    text = Name(metadata={"description": "words of the case's number or names (% and _ are plain characters)"})
    limit = Count(load_default=50, minimum=1, maximum=500)
    offset = Count(load_default=0, maximum=MAX_COUNT, metadata=OFFSET_DOC)


class CaseSummarySchema(Schema):
    case_id = fields.String()
    number = fields.String()
    kind = fields.String()
    stage = fields.String()
    initiator = fields.String(allow_none=True)
    municipalities = fields.List(fields.String())
    receiving = fields.String(allow_none=True)
    name = fields.String(allow_none=True)
    district = fields.String(allow_none=True)
    new_municipality = fields.String(allow_none=True)
    open_impediments = fields.Integer()
    frozen_municipalities = fields.List(fields.String())
    open_deadlines = fields.Integer()
    next_due_on = fields.String(allow_none=True)
    next_due_deadline = fields.String(allow_none=True)
    next_due_article = fields.String(allow_none=True)
    next_due_who = fields.String(allow_none=True)
    last_act = fields.String(allow_none=True)
    last_act_on = fields.String(allow_none=True)
    opened_on = fields.String(allow_none=True)
    law = fields.String(allow_none=True)
    concluded_on = fields.String(allow_none=True)
    archived_on = fields.String(allow_none=True)
    version = fields.Integer()


class PageSchema(Schema):
    """The envelope of every list (docs/api.md, "Reading and pagination"): a page of `items`, how many there are
    in `total` with the same filters, and `next`, the page after (null on the last); never cut silently."""

    total = fields.Integer(required=True, metadata={"description": "how many rows the filters select, all pages"})
    limit = fields.Integer(required=True)
    offset = fields.Integer(required=True)
    next = fields.String(allow_none=True, metadata={
        "description": "the path and query of the next page (null on the last page)"})
    next_offset = fields.Integer(allow_none=True, metadata={"description": "the next page's offset (null on the "
                                                                           "last page)"})


def page_of(item: type[Schema], name: str) -> type[Schema]:
    """A page of `item`s: the envelope with its `items`."""
    return type(name, (PageSchema,), {"items": fields.List(fields.Nested(item), required=True),
                                      "__doc__": PageSchema.__doc__})




class ChainReportSchema(Schema):
    aggregate_id = fields.String(required=True)
    label = fields.String(required=True)
    events = fields.Integer(required=True)
    ok = fields.Boolean(required=True)
    first_bad_version = fields.Integer(allow_none=True)
    first_bad_type = fields.String(allow_none=True)
    reason = fields.String(allow_none=True)
    findings = fields.List(fields.Dict(), metadata={"description": "what the audit log found: kind (deleted, "
                                                    "rewritten, unsigned, forged, checkpoint), message, version"})
    checkpoint_size = fields.Integer(allow_none=True, metadata={"description": "the latest checkpoint checked"})
    not_yet_covered = fields.Integer(metadata={"description": "the case's events no checkpoint covers yet"})


class DeadlineSchema(Schema):
    case_id = fields.String()
    case_number = fields.String()
    deadline = fields.String()
    rule = fields.String()
    article = fields.String()
    who = fields.String()
    municipality = fields.String(allow_none=True)
    starts_on = fields.String(allow_none=True)
    due_on = fields.String(allow_none=True)
    status = fields.String(metadata={"description": "open, due-soon, missed, met-on-time, met-late or ended (open "
                                                    "when its case was archived, not due before), today"})
    recorded_status = fields.String()
    closed_by = fields.String(allow_none=True)
    closed_on = fields.String(allow_none=True)
    days_late = fields.Integer(allow_none=True)
    days_overdue = fields.Integer()


class DeadlineQuerySchema(Schema):
    status = fields.String(validate=validate.OneOf(DEADLINE_STATUSES))
    due_before = Day(metadata={"description": "due on or before this day"})
    limit = Count(load_default=500, minimum=1, maximum=5000)
    offset = Count(load_default=0, maximum=MAX_COUNT, metadata=OFFSET_DOC)
    format = FORMAT


class AlertSchema(Schema):
    alert_id = fields.String()
    case_id = fields.String(allow_none=True, metadata={"description": "null on a system alert"})
    case_number = fields.String(allow_none=True)
    deadline = fields.String(allow_none=True)
    kind = fields.String(metadata={"description": "due-in-N-days, missed, breach, or a system alert's kind "
                                                  "(projection-failure)"})
    rule = fields.String(allow_none=True)
    article = fields.String(allow_none=True)
    who = fields.String(allow_none=True)
    municipality = fields.String(allow_none=True)
    due_on = fields.String(allow_none=True)
    days_overdue = fields.Integer(allow_none=True)
    subject = fields.String(allow_none=True, metadata={"description": "a system alert's subject; null otherwise"})
    message = fields.String(allow_none=True, metadata={"description": "a system alert's message; null otherwise"})
    raised_on = fields.String()
    raised_at = fields.String()
    delivery = fields.String(allow_none=True, metadata={
        "description": "webhook delivery: null (none yet, or no webhook), delivered or failed"})
    delivery_tries = fields.Integer(allow_none=True)
    delivery_error = fields.String(allow_none=True)


class AlertQuerySchema(Schema):
    since = Moment(metadata={"description": "raised at or after this moment (ISO 8601 with time zone)"})
    case_id = Reference()
    limit = Count(load_default=500, minimum=1, maximum=5000)
    offset = Count(load_default=0, maximum=MAX_COUNT, metadata=OFFSET_DOC)
    format = FORMAT


class FreezeSchema(Schema):
    municipality = fields.String()
    municipality_name = fields.String()
    case_id = fields.String()
    case_number = fields.String()
    since = fields.String()
    lifted_on = fields.String(allow_none=True)
    active = fields.Boolean()


class FreezeQuerySchema(Schema):
    active = fields.Boolean()
    municipality = Reference()
    limit = Count(load_default=500, minimum=1, maximum=5000)
    offset = Count(load_default=0, maximum=MAX_COUNT, metadata=OFFSET_DOC)


class MunicipalitySchema(Schema):
    code = fields.String()
    name = fields.String()
    uf = fields.String()
    figures = fields.Dict()
    districts = fields.Raw()
    frozen = fields.Boolean()
    frozen_by = fields.List(fields.String())
    ceased = fields.Raw(allow_none=True)
    created_by_case = fields.String(allow_none=True)
    version = fields.Integer()


class MunicipalityQuerySchema(Schema):
    text = Name(metadata={"description": "words of the name (accents and case ignored; % and _ are plain "
                                         "characters)"})
    limit = Count(load_default=500, minimum=1, maximum=5000)
    offset = Count(load_default=0, maximum=MAX_COUNT, metadata=OFFSET_DOC)


CasePageSchema = page_of(CaseSummarySchema, "CasePageSchema")
DeadlinePageSchema = page_of(DeadlineSchema, "DeadlinePageSchema")
AlertPageSchema = page_of(AlertSchema, "AlertPageSchema")
FreezePageSchema = page_of(FreezeSchema, "FreezePageSchema")
MunicipalityPageSchema = page_of(MunicipalitySchema, "MunicipalityPageSchema")


class ReadModelsHealthSchema(Schema):
    behind = fields.Dict(keys=fields.String(), values=fields.Integer(), required=True, metadata={
        "description": "each projection behind the event log, by how many notifications (the projector catches up)"})
    ahead = fields.List(fields.String(), required=True, metadata={
        "description": "projections whose tracking position is beyond the last event (pushed forward: run "
                       "`tramita rebuild`)"})
    checked_at = fields.String(allow_none=True, required=True, metadata={
        "description": "when the read models were last checked against the events (`tramita verify`, the "
                       "scheduler daily); null: never"})
    differing = fields.Dict(keys=fields.String(), values=fields.Integer(), required=True, metadata={
        "description": "the tables whose rows differed from the events at that check, with how many rows (kept in "
                       "the table read_model_check, which an administrator can edit: each also raised a "
                       "read-model-differs system alert)"})
    sample = fields.List(fields.Dict(), required=True, metadata={
        "description": "the first differing rows: table, key, kind (changed, missing, extra, ahead) and columns"})


class CallerSchema(Schema):
    """`GET /whoami`: who the request's token acts as."""

    token_id = fields.String(required=True, metadata={"description": "the token's id (what `tramita token revoke` "
                                                                     "takes)"})
    principal = fields.String(required=True, metadata={"description": "whom the token was issued to"})
    role = fields.String(required=True, metadata={"description": "the body it records acts as (e.g. assembly-mesa)"})
    municipality = fields.String(allow_none=True, required=True, metadata={
        "description": "a municipal body's IBGE code; null for a state body"})


class HealthSchema(Schema):
    status = fields.String(required=True)
    database = fields.String(required=True)
    projections = fields.Dict(required=True, metadata={"description": "each projection's position"})
    notifications = fields.Integer(required=True, metadata={"description": "the event log's last position"})
    failures = fields.List(fields.Dict(), metadata={
        "description": "aggregates a projection could not write (projection, aggregate_id, aggregate_kind, "
                       "notification_id, last_notification_id, topic, error), the first 100"})
    read_models = fields.Nested(ReadModelsHealthSchema, required=True, metadata={
        "description": "the read models against the event log: behind or ahead of it, and what the last check "
                       "against the events found"})
    documents = fields.Dict(keys=fields.String(), values=fields.Integer(), metadata={
        "description": "the stored documents: count, bytes, and uncited_bytes (those no act cites, removed "
                       "TRAMITA_DOCUMENT_EXPIRY_DAYS after their last upload)"})


class StatuteActedSchema(Schema):
    act = fields.String(required=True)
    version = fields.Integer(required=True, metadata={"description": "the amendments' version in the log"})
    result = fields.Dict(required=True, metadata={"description": "the amendment's number and the versions it gave"})
    receipt = fields.Nested(ReceiptSchema, allow_none=True, metadata={"description": "the signed receipt of the act"})


class IntroducedBySchema(Schema):
    act = fields.String(required=True, metadata={"description": "statute-data (shipped) or statute-amended"})
    statute = fields.String(metadata={"description": "the shipped data's version"})
    amendment = fields.Integer(metadata={"description": "the amendment's number"})
    law = fields.String()
    published_on = fields.Date()
    recorded_at = fields.DateTime()
    hash = fields.String(metadata={"description": "the amendment event's chain hash"})


class StatuteVersionRowSchema(Schema):
    version = fields.String(required=True, metadata={"description": "what decisions record: id@effective_from"})
    effective_from = fields.Date(required=True)
    effective_until = fields.Date(allow_none=True, metadata={"description": "its last day (null: still in force)"})
    in_force = fields.Boolean(required=True, metadata={"description": "in force on the day asked"})
    value = fields.Raw(required=True)
    comparison = fields.String(allow_none=True)
    source = fields.String(required=True)
    extra = fields.Dict(allow_none=True)
    introduced_by = fields.Nested(IntroducedBySchema, required=True)


class StatuteParameterSchema(Schema):
    id = fields.String(required=True)
    article = fields.String(required=True)
    in_force = fields.Nested(StatuteVersionRowSchema, allow_none=True, metadata={
        "description": "the version in force on the day (null: none was)"})
    history = fields.List(fields.Nested(StatuteVersionRowSchema), required=True)


class StatuteAmendmentRowSchema(Schema):
    number = fields.Integer(required=True)
    law = fields.String(required=True)
    published_on = fields.Date(required=True)
    recorded_at = fields.DateTime(required=True)
    actor = fields.Dict(required=True)
    hash = fields.String(required=True)
    sources = fields.Dict()
    versions = fields.List(fields.String(), required=True)


class StatuteSchema(Schema):
    on = fields.Date(required=True)
    shipped = fields.String(required=True, metadata={"description": "the version of the statute data shipped"})
    amendments = fields.List(fields.Nested(StatuteAmendmentRowSchema), required=True)
    parameters = fields.List(fields.Nested(StatuteParameterSchema), required=True)
