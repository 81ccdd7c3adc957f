"""Subscriptions (domain/subscriptions.py): made by a body through the API or by an operator from the command line,
listed, removed; the ones in force, for the scheduler's deliveries and the calendar feeds."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime
from uuid import UUID

from eventsourcing.persistence import PersistenceError
from eventsourcing.utils import get_topic

from domain.access import AccessToken
from domain.acts import Actor
from domain.application.base import Acted, ApplicationBase
from domain.errors import InvalidActError, Listing, Sentence
from domain.subscriptions import (
    CALENDAR, DELIVERED_CHANNELS, EMAIL, MAX_SUBSCRIPTIONS_PER_BODY, WEBHOOK, Subscription, SubscriptionKeys,
    SubscriptionTurns, check_email, check_kinds, check_url, closing_acts, scope_for,
)


class SubscriptionNotFoundError(Exception):
    """No subscription with that id (or none of the asking body's)."""


class SubscriptionsOffError(Exception):
    """No subscription key is configured (TRAMITA_SUBSCRIPTION_KEY): no secret nor feed key can be derived."""


@dataclass(frozen=True)
class Subscribed:
    """What making a subscription returns: the subscription, and its secret (a webhook's `whsec_...`) or its feed
    key (a calendar's), derived from the subscription key, shown this once."""

    subscription: Subscription
    secret: str
    #: The act as the idempotency of `POST /subscriptions` and `POST /feeds` keeps it (api/subscriptions.py).
    acted: Acted | None = None


@dataclass(frozen=True)
class Feed:
    """A calendar feed opened: its subscription, the day it is read, and the acts that close each deadline."""

    subscription: Subscription
    today: date
    now: datetime
    expected: dict[tuple[str, str], list[str]]


class Subscriptions(ApplicationBase):
    """Subscriptions: made by a body through the API or by an operator from the command line, listed, removed."""

    #: The deployment's subscription key (tramita/bootstrap.py reads TRAMITA_SUBSCRIPTION_KEY); None: off.
    subscription_keys: SubscriptionKeys | None = None

    def _keys(self) -> SubscriptionKeys:
        if self.subscription_keys is None:
            raise SubscriptionsOffError("subscriptions are off: no subscription key is configured "
                                        "(TRAMITA_SUBSCRIPTION_KEY)")
        return self.subscription_keys

    def subscribe(self, actor: Actor, *, token_id: str | None, channel: str = WEBHOOK, url: str | None = None,
                  role: str | None = None, municipality: str | None = None, case: str | None = None,
                  kinds: list[str] | None = None, private_urls: bool = False, email: str | None = None,
                  digest: bool = False) -> Subscribed:
        """Record a subscription of `actor`'s body (or, `token_id` None, an operator's) to what it must act on.

        A webhook needs `url` (an address of the deployment's own network only with `private_urls`, which the
        command line gives), an e-mail subscription one `email` address (`digest`: its alerts in one message a
        day); a calendar takes neither and no alert
        kinds. Filters outside what concerns the body are refused (`scope_for`); a municipality or case named must
        exist."""
        self._keys()  # subscriptions are on: a secret or a feed key can be derived
        if channel not in (WEBHOOK, CALENDAR, EMAIL):
            raise InvalidActError("channel", Sentence(
                "%(channel)r is not %(webhook)s, %(email)s or %(calendar)s",
                channel=channel, webhook=WEBHOOK, email=EMAIL, calendar=CALENDAR))
        if channel != EMAIL and digest:
            raise InvalidActError("digest", "a daily digest is an e-mail subscription's (give `email`)")
        if channel != EMAIL and email is not None:
            raise InvalidActError("email", "an e-mail address is given on its own, without an http(s) address")
        if channel == WEBHOOK:
            url = check_url(url or "", private=private_urls)
        elif channel == EMAIL:
            if url is not None:
                raise InvalidActError("url", "an e-mail subscription has its address in `email`, not `url`")
            email = check_email(email or "")
        elif url is not None or kinds:
            raise InvalidActError("url" if url is not None else "kinds",
                                  "a calendar feed has no address to deliver to and lists deadlines, not alerts")
        role, municipality = scope_for(actor, role=role, municipality=municipality)
        if role is not None and role not in self.token_roles():  # type: ignore[attr-defined]
            raise InvalidActError("role", Sentence(
                "%(role)r is not a body that acts; one of %(roles)s",
                role=role, roles=Listing(self.token_roles())))  # type: ignore[attr-defined]
        if municipality is not None:
            self._get_municipality(municipality)
        case_id = self.ask_case(case, lambda found: str(found.id)) if case else None  # type: ignore[attr-defined]
        kinds = check_kinds(kinds)

        def attempt() -> Subscribed:
            ctx = self.system_context(actor)
            subscription = Subscription.create(ctx, channel=channel, url=url, role=role, municipality=municipality,
                                               case_id=case_id, kinds=kinds, token_id=token_id, email=email,
                                               digest=digest)
            turns = []
            if token_id is not None:  # a body's, through the API: a bounded number, each served by its own worker
                # The body's turns are read before its subscriptions are counted: a making saved in between moves
                # them on, so this save conflicts and the next attempt counts again.
                body = f"{actor.role}:{actor.municipality or ''}:{channel}"
                turn = self._get_or_none(SubscriptionTurns.id_for(body)) or SubscriptionTurns.open(ctx, body)
                in_force = [s for s in self.subscriptions_of(actor) if s.channel == channel and self.in_force(s)]
                if len(in_force) >= MAX_SUBSCRIPTIONS_PER_BODY:
                    raise InvalidActError("channel", Sentence(
                        "the body has %(count)s %(channel)s subscriptions in force, the most a body may have; remove "
                        "one first (DELETE /subscriptions/{id})", count=len(in_force), channel=channel))
                turn.take(ctx, subscription.id)
                turns.append(turn)
            acted = Acted(subscription.id, str(subscription.id), subscription.version, decided_from=1)
            self.save(subscription, *turns, *self._receipts(ctx, acted))
            return self.subscribed(subscription, acted)

        return self._retrying(attempt)

    def subscribed(self, subscription: Subscription | UUID, acted: Acted | None = None) -> Subscribed:
        """A subscription as its making answers: with its secret or feed key, derived again (never stored)."""
        keys = self._keys()
        if not isinstance(subscription, Subscription):
            subscription = self.repository.get(subscription)
        secret = (keys.feed_key(subscription.id) if subscription.channel == CALENDAR
                  else keys.webhook_secret(subscription.id))
        return Subscribed(subscription, secret, acted)

    def all_subscriptions(self) -> list[Subscription]:
        """Every subscription ever made (removed ones included), oldest first: read from the log by its first
        event's topic (they are few: one or two per body)."""
        topic = get_topic(Subscription.Created)
        ids, start = [], 1
        while notifications := self.recorder.select_notifications(start=start, limit=500, topics=[topic]):
            ids += [n.originator_id for n in notifications]
            start = notifications[-1].id + 1
        return [subscription for subscription in map(self._readable_subscription, ids) if subscription is not None]

    def _readable_subscription(self, subscription_id: UUID) -> Subscription | None:
        """The subscription; None when its events no longer decode or apply (an administrator's edit, which
        `tramita verify` names), so that one altered subscription stops neither the others nor the scan."""
        try:
            return self.repository.get(subscription_id)
        except PersistenceError:  # the store's own trouble: the caller's to see
            raise
        except Exception:  # noqa: BLE001 - see the docstring
            return None

    def subscriptions_of(self, actor: Actor) -> list[Subscription]:
        """The subscriptions of the actor's body (removed ones included, with when and why)."""
        return [s for s in self.all_subscriptions() if s.belongs_to(actor)]

    def in_force(self, subscription: Subscription) -> bool:
        """Not removed, and the token that made it (if any) neither revoked nor past its last day."""
        if subscription.removed_on is not None:
            return False
        if subscription.token_id is None:
            return True
        token = self._get_or_none(UUID(subscription.token_id))
        return isinstance(token, AccessToken) and token.revoked_on is None and not token.expired_on(self.today())

    def subscriptions_in_force(self, channel: str | tuple[str, ...] = WEBHOOK) -> list[Subscription]:
        """The subscriptions in force of `channel` (or of any of several: `DELIVERED_CHANNELS`, the scheduler's)."""
        channels = (channel,) if isinstance(channel, str) else channel
        return [s for s in self.all_subscriptions() if s.channel in channels and self.in_force(s)]

    def delivered_subscriptions(self) -> list[Subscription]:
        """The subscriptions in force the scheduler delivers alerts to: webhooks and e-mail addresses."""
        return self.subscriptions_in_force(DELIVERED_CHANNELS)

    def webhook_secret(self, subscription: Subscription) -> str:
        return self._keys().webhook_secret(subscription.id)

    def remove_subscription(self, actor: Actor, subscription_id: str, *, reason: str,
                            operator: bool = False) -> Subscription:
        """End a subscription of the actor's body (an operator's, `operator`, any); a subscription of another
        body is not found, for the actor, as one that does not exist."""
        subscription = self._subscription(subscription_id)
        if not operator and not subscription.belongs_to(actor):
            raise SubscriptionNotFoundError(f"no subscription {subscription_id} of this body")
        subscription.remove(self.system_context(actor), reason=reason)
        self.save(subscription)
        return subscription

    def feed(self, feed_id: str, key: str) -> Feed | None:
        """The calendar subscription a feed address opens (its id and key), in force, with what closes each
        deadline today; None otherwise (unknown, another key, removed, its token revoked or expired)."""
        try:
            subscription = self._get_or_none(UUID(feed_id))
        except ValueError:
            return None
        if not isinstance(subscription, Subscription) or subscription.channel != CALENDAR:
            return None
        if self.subscription_keys is None or not self.subscription_keys.opens(subscription.id, key):
            return None
        if not self.in_force(subscription):
            return None
        now = self.clock()
        return Feed(subscription, self.today(), now, closing_acts(self.statute, self.today()))

    def _subscription(self, subscription_id: str) -> Subscription:
        try:
            subscription = self._get_or_none(UUID(subscription_id))
        except ValueError:
            raise SubscriptionNotFoundError(f"{subscription_id!r} is not a subscription id") from None
        if not isinstance(subscription, Subscription):
            raise SubscriptionNotFoundError(f"no subscription {subscription_id}")
        return subscription
