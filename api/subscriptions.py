"""`/subscriptions` and `/feeds`: a body's alerts delivered to its own webhook, and its open deadlines as a calendar
(domain/subscriptions.py for who may subscribe to what, docs/scheduler.md for the deliveries).

- `POST /subscriptions`: a webhook (`url`) receiving the alerts the body must act on (narrowed by municipality,
  case, alert kinds), each signed per Standard Webhooks with the subscription's own secret, shown once; or an
  e-mail address (`email`) receiving them as messages in Portuguese with the deadline's .ics attached;
- `POST /feeds`: a calendar feed of the body's open deadlines at a secret address, shown once;
- `GET /subscriptions`: the body's subscriptions (webhooks and feeds, removed ones with when and why);
- `DELETE /subscriptions/{id}`: end one (a feed's address then answers 404);
- `GET /feeds/{id}/{key}.ics`: the calendar, without a bearer token (calendar programs cannot send one): the
  address is the credential. Its risk, and why it is acceptable, is in docs/api.md ("Calendar feeds").
"""

from __future__ import annotations

from typing import Any

from flask import Response, g, request
from flask_babel import gettext as _
from marshmallow import RAISE, Schema, fields, validate

from api.body import Blueprint
from api.errors import problem
from api.exports import calendar
from api.fields import BoundedList, Count, Name, Reference
from api.http import errors_doc, idempotent_request, read_store, replay_headers, settings, tramita
from api.responses import page_of
from domain.application.subscriptions import Subscribed, SubscriptionNotFoundError, SubscriptionsOffError
from domain.errors import InvalidActError
from domain.subscriptions import (
    CALENDAR, DELIVERED_CHANNELS, EMAIL, MAX_EMAIL, MAX_KINDS, MAX_URL, WEBHOOK, Subscription,
)
from projections import queries

blp = Blueprint("subscriptions", __name__, description="Alerts to the body that must act, and its deadlines as a "
                "calendar")

#: The endpoint a calendar program reads without a token (api/http.py's PUBLIC_ENDPOINTS lists it).
FEED_ENDPOINT = "subscriptions.feed"


class SubscriptionQuerySchema(Schema):
    limit = Count(load_default=100, minimum=1, maximum=500)
    offset = Count(load_default=0)


class FeedBodySchema(Schema):
    role = Reference(metadata={"description": "who must act (default: the token's body; auditors: any, or all)"})
    municipality = Reference(metadata={"description": "IBGE code: only its deadlines (a municipal body: its own)"})
    case = Reference(metadata={"description": "a case number or id: only its deadlines"})


class WebhookBodySchema(FeedBodySchema):
    url = fields.String(validate=validate.Length(min=1, max=MAX_URL), metadata={
        "description": "http(s) address that receives each alert as a signed JSON POST (or give `email`)"})
    email = fields.String(validate=validate.Length(min=1, max=MAX_EMAIL), metadata={
        "description": "one e-mail address that receives each alert in Portuguese, the deadline attached as .ics "
                       "(instead of `url`)"})
    digest = fields.Boolean(metadata={"description": "with `email`: the alerts gathered in one message a day "
                                                     "(TRAMITA_DIGEST_HOUR) instead of one message each"})
    kinds = BoundedList(Name(validate=validate.Length(max=20)), max_items=MAX_KINDS, metadata={
        "description": "only these alert kinds (missed, breach, due-in-N-days); none: all"})


class RemovalSchema(Schema):
    reason = Name(load_default="removed by its body", metadata={"description": "why (recorded)"})


class SubscriptionSchema(Schema):
    id = fields.String(required=True)
    channel = fields.String(required=True, metadata={"description": "webhook, email or calendar"})
    url = fields.String(allow_none=True, metadata={"description": "a webhook's address"})
    email = fields.String(allow_none=True, metadata={"description": "an e-mail subscription's address"})
    digest = fields.Boolean(metadata={"description": "an e-mail subscription's alerts in one message a day"})
    role = fields.String(allow_none=True)
    municipality = fields.String(allow_none=True)
    case_id = fields.String(allow_none=True)
    kinds = fields.List(fields.String())
    created_at = fields.String(required=True)
    created_by = fields.Dict(required=True)
    in_force = fields.Boolean(required=True)
    removed_on = fields.String(allow_none=True)
    remove_reason = fields.String(allow_none=True)
    deliveries = fields.Dict(keys=fields.String(), values=fields.Integer(), metadata={
        "description": "a webhook's or an e-mail's alerts by their last round: delivered, failed"})


class SubscribedSchema(SubscriptionSchema):
    secret = fields.String(metadata={"description": "the webhook's Standard Webhooks secret (`whsec_...`): shown "
                                                    "this once"})
    feed_url = fields.String(metadata={"description": "the calendar's address, with its key: shown this once"})


SubscriptionPageSchema = page_of(SubscriptionSchema, "SubscriptionPageSchema")


def shown(subscription: Subscription, **extra: Any) -> dict[str, Any]:
    delivered = (queries.deliveries(read_store(), str(subscription.id)) if subscription.channel in DELIVERED_CHANNELS
                 else {})
    return {"id": str(subscription.id), "channel": subscription.channel, "url": subscription.url,
            "email": subscription.email, "digest": subscription.digest,
            "role": subscription.role, "municipality": subscription.municipality, "case_id": subscription.case_id,
            "kinds": subscription.kinds, "created_at": subscription.created_at.isoformat(),
            "created_by": subscription.created_by, "in_force": tramita().in_force(subscription),
            "removed_on": subscription.removed_on.isoformat() if subscription.removed_on else None,
            "remove_reason": subscription.remove_reason, "deliveries": delivered, **extra}


def feed_path(subscribed: Subscribed) -> str:
    return f"/feeds/{subscribed.subscription.id}/{subscribed.secret}.ics"


@blp.route("/subscriptions", methods=["POST"], endpoint="subscribe")
@blp.doc(operationId="subscription-created")
@blp.arguments(WebhookBodySchema())
@blp.response(201, SubscribedSchema)
@errors_doc([400, 401, 404, 413, 415, 422, 503], summary="Subscribe the body's webhook or e-mail address to the alerts "
                                                          "it must act on")
def subscribe(data: dict[str, Any]):  # noqa: ANN201
    app = tramita()
    if "email" in data and "url" in data:
        raise InvalidActError("email", "either an http(s) address (`url`) or an e-mail address (`email`), not both")
    if "email" not in data and "url" not in data:
        raise InvalidActError("url", "an http(s) address (`url`) or an e-mail address (`email`) to deliver to")
    channel = EMAIL if "email" in data else WEBHOOK
    acted = app.idempotently(idempotent_request("subscription-created"), lambda: app.subscribe(
        g.actor, token_id=g.token_id, channel=channel, private_urls=settings().get("subscription_private_urls", False),
        **data).acted)
    subscribed = app.subscribed(acted.case_id)
    extra = {"secret": subscribed.secret} if subscribed.subscription.channel == WEBHOOK else {}
    return shown(subscribed.subscription, **extra), 201, replay_headers(acted)


@blp.route("/feeds", methods=["POST"], endpoint="open_feed")
@blp.doc(operationId="feed-opened")
@blp.arguments(FeedBodySchema(), required=False)  # no body: the token's body's every open deadline
@blp.response(201, SubscribedSchema)
@errors_doc([400, 401, 404, 413, 415, 422, 503], summary="A calendar feed (.ics) of the body's open deadlines, at a "
                                                          "secret address")
def open_feed(data: dict[str, Any] | None):  # noqa: ANN201
    data = data or {}
    app = tramita()
    acted = app.idempotently(idempotent_request("feed-opened"), lambda: app.subscribe(
        g.actor, token_id=g.token_id, channel=CALENDAR, **data).acted)
    subscribed = app.subscribed(acted.case_id)
    return (shown(subscribed.subscription, feed_url=settings()["public_url"] + feed_path(subscribed)), 201,
            replay_headers(acted))


@blp.route("/subscriptions", methods=["GET"], endpoint="list_subscriptions")
@blp.arguments(SubscriptionQuerySchema, location="query", unknown=RAISE)
@blp.response(200, SubscriptionPageSchema)
@errors_doc([401, 422], summary="The body's subscriptions: webhooks and calendar feeds, removed ones included")
def list_subscriptions(query: dict[str, Any]):  # noqa: ANN201
    from api.views import page

    own = tramita().subscriptions_of(g.actor)
    window = own[query["offset"]:query["offset"] + query["limit"]]
    return page([shown(s) for s in window], len(own), query)


@blp.route("/subscriptions/<subscription_id>", methods=["DELETE"], endpoint="unsubscribe")
@blp.doc(operationId="subscription-removed")
@blp.arguments(RemovalSchema, location="query", unknown=RAISE)
@blp.response(200, SubscriptionSchema)
@errors_doc([401, 404, 422], summary="End one of the body's subscriptions (a feed's address then answers 404)")
def unsubscribe(query: dict[str, Any], subscription_id: str):  # noqa: ANN201
    return shown(tramita().remove_subscription(g.actor, subscription_id, reason=query["reason"]))


@blp.route("/feeds/<feed_id>/<key>.ics", methods=["GET"], endpoint="feed")
@blp.response(200, content_type="text/calendar", description="the open deadlines, one all-day event each")
@blp.doc(security=[], summary="A calendar feed: no token, the address is the credential")
@errors_doc([404])
def feed(feed_id: str, key: str) -> Response:
    opened = tramita().feed(feed_id, key)
    if opened is None:
        return problem(404, "não há calendário neste endereço (removido, ou a chave mudou)", kind="feed-not-found")
    subscription = opened.subscription
    rows = queries.open_deadlines_of(read_store(), today=opened.today, due_soon_days=settings()["due_soon_days"],
                                     who=subscription.role, municipality=subscription.municipality,
                                     case_id=subscription.case_id)
    body = calendar(_feed_name(subscription), rows, expected=opened.expected, stamp=opened.now,
                    reminders=settings()["reminder_days"])
    return Response(body, mimetype="text/calendar", headers={
        "Cache-Control": "private, max-age=900", "Referrer-Policy": "no-referrer",
        "Content-Disposition": f'inline; filename="prazos-{subscription.id}.ics"'})


def _feed_name(subscription: Subscription) -> str:
    parts = [subscription.role or "todos os órgãos", subscription.municipality]
    return "Prazos LC 35/1991 — " + " ".join(p for p in parts if p)


@blp.errorhandler(SubscriptionNotFoundError)
def _not_found(error: SubscriptionNotFoundError) -> Response:
    return problem(404, str(error), kind="subscription-not-found")


@blp.errorhandler(SubscriptionsOffError)
def _off(error: SubscriptionsOffError) -> Response:
    return problem(503, _("subscriptions are off: no subscription key is configured (TRAMITA_SUBSCRIPTION_KEY)"),
                   kind="subscriptions-off")
