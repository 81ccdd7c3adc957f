"""The audit record over HTTP: signed checkpoints, the verifier key, proofs an auditor checks offline, and the
verification of the whole store.

Checkpoints, the key and consistency proofs are public (they reveal sizes and hashes, nothing of any case), so
that witnesses and auditors can fetch them without a token; an inclusion proof names a case's event and needs
a token, as the case does. The formats are in docs/audit.md.
"""

from __future__ import annotations

from typing import Any

from flask import Response, current_app
from flask_smorest import Blueprint
from marshmallow import RAISE, Schema, fields, validate

from api.http import errors_doc
from audit.service import Audit

blp = Blueprint("audit", __name__, description="The signed Merkle log: checkpoints, proofs, verification")

#: Endpoints anyone may read (no token): the signed checkpoints, the key, consistency proofs.
PUBLIC = {"audit.checkpoint_key", "audit.latest_checkpoint", "audit.checkpoint_of_size", "audit.consistency"}

TEXT_DOC = {"content": {"text/plain": {"schema": {"type": "string"}}}}
SIZE = fields.Integer(required=True, validate=validate.Range(min=0, max=2**62))


def audit() -> Audit:
    return current_app.extensions["tramita.audit"]


class ConsistencyQuerySchema(Schema):
    from_ = fields.Integer(data_key="from", required=True, validate=validate.Range(min=0, max=2**62),
                           metadata={"description": "the smaller tree size (a checkpoint's)"})
    to = fields.Integer(required=True, validate=validate.Range(min=0, max=2**62),
                        metadata={"description": "the larger tree size, at most the tree's"})


class ConsistencyProofSchema(Schema):
    from_ = fields.Integer(data_key="from", attribute="from", required=True)
    to = fields.Integer(required=True)
    hashes = fields.List(fields.String(), required=True, metadata={"description": "RFC 9162 §2.1.4, base64"})
    from_checkpoint = fields.String(allow_none=True, metadata={"description": "the signed checkpoint of size `from`"})
    to_checkpoint = fields.String(allow_none=True, metadata={"description": "the signed checkpoint of size `to`"})


class InclusionQuerySchema(Schema):
    size = fields.Integer(validate=validate.Range(min=1, max=2**62),
                          metadata={"description": "the tree size (default: the latest checkpoint's)"})


class InclusionProofSchema(Schema):
    case_id = fields.String(required=True)
    version = fields.Integer(required=True)
    hash = fields.String(required=True, metadata={"description": "the event's chain hash, hex"})
    leaf_index = fields.Integer(required=True)
    tree_size = fields.Integer(required=True)
    entry = fields.String(required=True, metadata={"description": "the 56-byte leaf entry, base64"})
    leaf_hash = fields.String(required=True, metadata={"description": "SHA-256(0x00 ‖ entry), base64"})
    hashes = fields.List(fields.String(), required=True, metadata={"description": "RFC 9162 §2.1.3, base64"})
    checkpoint = fields.String(allow_none=True, metadata={"description": "the signed checkpoint of that size"})


class FindingSchema(Schema):
    kind = fields.String(required=True, metadata={"description": "altered, deleted, inserted, rewritten, "
                                                  "reordered, forged, unsigned, checkpoint, fork, tree"})
    message = fields.String(required=True)
    aggregate_id = fields.String(allow_none=True)
    label = fields.String(allow_none=True, metadata={"description": "the case number or registry key"})
    version = fields.Integer(allow_none=True)
    event_type = fields.String(allow_none=True)
    events = fields.Integer(allow_none=True)


class CheckpointCheckSchema(Schema):
    size = fields.Integer(required=True)
    source = fields.String(required=True)
    signed_at = fields.String(allow_none=True)
    verified = fields.Boolean(required=True, metadata={"description": "its signature verifies with the key"})
    matches = fields.Boolean(allow_none=True, metadata={"description": "the rebuilt tree has its root"})


class VerdictSchema(Schema):
    ok = fields.Boolean(required=True)
    events = fields.Integer(required=True)
    aggregates = fields.Integer(required=True)
    altered_chains = fields.Integer(required=True)
    signed_events = fields.Integer(required=True)
    unsigned_covered = fields.Integer(required=True, metadata={"description": "unsigned events (recorded before "
                                                               "the key existed) a checkpoint covers instead"})
    signatures_checked = fields.Integer(required=True, metadata={"description": "signatures verified one by one "
                                                                 "(the events no checkpoint covers)"})
    signatures_in_form = fields.Integer(required=True, metadata={"description": "signatures of events a verified "
                                                                 "checkpoint covers, checked for their form only "
                                                                 "(`tramita verify --all-signatures` checks each)"})
    covered = fields.Integer(required=True, metadata={"description": "the largest checkpoint the events match"})
    not_yet_covered = fields.Integer(required=True)
    checkpoints = fields.List(fields.Nested(CheckpointCheckSchema), required=True)
    findings = fields.List(fields.Nested(FindingSchema), required=True)
    more_findings = fields.Integer(required=True)
    warnings = fields.List(fields.String(), required=True)


def _text(body: str) -> Response:
    return Response(body, mimetype="text/plain")


@blp.route("/checkpoints/key", methods=["GET"], endpoint="checkpoint_key")
@blp.doc(security=[], summary="The log's verifier key (Go note format: <name>+<hash>+<base64 key>)",
         responses={200: {"description": "the verifier key", **TEXT_DOC}, "404": "NOT_FOUND"})
def checkpoint_key() -> Response:
    return _text(audit().verifier_key + "\n")


@blp.route("/checkpoints/latest", methods=["GET"], endpoint="latest_checkpoint")
@blp.doc(security=[], summary="The latest signed checkpoint (a C2SP signed note)",
         responses={200: {"description": "the signed note", **TEXT_DOC}, "404": "NOT_FOUND"})
def latest_checkpoint() -> Response:
    return _text(audit().latest_checkpoint().note)


@blp.route("/checkpoints/<int(max=4611686018427387904):size>", methods=["GET"], endpoint="checkpoint_of_size")
@blp.doc(security=[], summary="The checkpoint signed at a tree size",
         responses={200: {"description": "the signed note", **TEXT_DOC}, "404": "NOT_FOUND"})
def checkpoint_of_size(size: int) -> Response:
    return _text(audit().checkpoint(size).note)


@blp.route("/proofs/consistency", methods=["GET"], endpoint="consistency")
@blp.arguments(ConsistencyQuerySchema, location="query", unknown=RAISE)
@blp.response(200, ConsistencyProofSchema)
@errors_doc([422], security=[], summary="RFC 9162 consistency proof between two tree sizes")
def consistency(query: dict[str, Any]) -> dict[str, Any]:
    return audit().consistency(query["from_"], query["to"])


@blp.route("/cases/<case_ref>/events/<int(min=1, max=4611686018427387904):version>/proof", methods=["GET"],
           endpoint="inclusion")
@blp.arguments(InclusionQuerySchema, location="query", unknown=RAISE)
@blp.response(200, InclusionProofSchema)
@errors_doc([401, 404, 422], summary="RFC 9162 inclusion proof of one event of a case in a checkpoint's tree")
def inclusion(query: dict[str, Any], case_ref: str, version: int) -> dict[str, Any]:
    return audit().inclusion(case_ref, version, query.get("size"))


@blp.route("/verify", methods=["GET"], endpoint="verify_store")
@blp.response(200, VerdictSchema)
@errors_doc([401, 404], summary="Verify the whole store: chains, the tree against every checkpoint, signatures")
def verify_store() -> dict[str, Any]:
    return audit().verify().as_dict()
