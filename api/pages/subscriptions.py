"""`/assinaturas`: a body's page of its alert subscriptions, to subscribe an e-mail address and to end one.

It lists the subscriptions of the session's body (webhooks, e-mail addresses and calendar feeds, as
`GET /subscriptions` does), subscribes one e-mail address to the alerts the body must act on (the same act as
`POST /subscriptions` with `email`, domain/application/subscriptions.py) and ends one of them; both forms carry the
session's CSRF token. An address the body already has in force is not subscribed twice (a double submit).
"""

from __future__ import annotations

from typing import Any

from flask import g, redirect, render_template, request, url_for
from flask_babel import gettext as _
from werkzeug.wrappers import Response

from api.errors import say
from api.http import read_store, tramita
from api.pages import session
from api.pages.views import PageError, pages
from domain.application.subscriptions import SubscriptionNotFoundError, SubscriptionsOffError
from domain.errors import InvalidActError
from domain.subscriptions import DELIVERED_CHANNELS, EMAIL, Subscription
from projections import queries

#: The most a form on this page may send (an address and a token).
MAX_FORM_BYTES = 4096


def listed() -> list[dict[str, Any]]:
    """The body's subscriptions, newest first, as the page shows them."""
    app = tramita()
    return [{"id": str(s.id), "channel": s.channel, "where": s.email or s.url or "", "in_force": app.in_force(s),
             "digest": s.digest,
             "removed_on": s.removed_on, "role": s.role, "municipality": s.municipality,
             "deliveries": (queries.deliveries(read_store(), str(s.id)) if s.channel in DELIVERED_CHANNELS else {})}
            for s in reversed(app.subscriptions_of(g.actor))]


def _checked_form() -> None:
    if (request.content_length or 0) > MAX_FORM_BYTES or not session.csrf_holds():
        raise PageError(403, _("This form is no longer valid: open the page again and send it from there."))


def _already(email: str) -> Subscription | None:
    app = tramita()
    return next((s for s in app.subscriptions_of(g.actor)
                 if s.channel == EMAIL and s.email == email.strip() and app.in_force(s)), None)


@pages.route("/assinaturas", methods=["GET", "POST"], endpoint="subscriptions")
def subscriptions() -> Response | tuple[str, int]:
    shown: dict[str, Any] = {"status": 200}
    email = ""
    if request.method == "POST":
        _checked_form()
        email = request.form.get("email", "")
        try:
            if _already(email) is None:
                tramita().subscribe(g.actor, token_id=str(g.token_id), channel=EMAIL, email=email,
                                    digest=request.form.get("resumo") == "1")
            return redirect(url_for("pages.subscriptions", feita="1"), 303)
        except InvalidActError as refused:
            shown = {"status": 422, "refusal": say(refused.sentence)}
        except SubscriptionsOffError:
            shown = {"status": 503, "refusal": _("Subscriptions are off in this deployment: no subscription key is "
                                                 "configured.")}
    return render_template("subscriptions.html", items=listed(), email=email, shown=shown,
                           done=request.args.get("feita"), ended=request.args.get("encerrada")), shown["status"]


@pages.route("/assinaturas/<subscription_id>/encerrar", methods=["POST"], endpoint="end_subscription")
def end_subscription(subscription_id: str) -> Response:
    _checked_form()
    try:
        tramita().remove_subscription(g.actor, subscription_id, reason=_("ended by its body on its page"))
    except SubscriptionNotFoundError:
        raise PageError(404, _("This body has no such subscription.")) from None
    except InvalidActError:  # ended already (a second click): the page shows it ended
        pass
    return redirect(url_for("pages.subscriptions", encerrada="1"), 303)
