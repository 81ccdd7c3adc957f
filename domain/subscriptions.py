"""Subscriptions: the alerts of the body that must act, delivered to its own webhook, and its deadlines as a
calendar feed.

A subscription is its own aggregate, recorded like a token (created and removed as events, attributed to who
did it, hash-chained): an auditor can see which body received which alerts, where, from when. Three channels:

- `webhook`: each alert that matches the filters (who must act, municipality, case, alert kinds) is POSTed to
  the subscription's own URL, signed per Standard Webhooks with the subscription's own secret;
- `email`: each alert that matches the filters is mailed to the subscription's one address, in Portuguese, with
  the deadline as an .ics attachment (scheduler/subscribers.py, infrastructure/mail.py);
- `calendar`: the open deadlines that match the filters (who must act, municipality, case) as an iCalendar feed
  at a secret address, for calendar programs, which cannot send a bearer token.

Neither the webhook secret nor the feed's key is stored: both are derived from the deployment's subscription
key (TRAMITA_SUBSCRIPTION_KEY, which never enters the database) and the subscription's id, by HMAC-SHA256 with a
label per use. So the database, its backups and its administrator hold nothing that could sign an alert or open
a feed; the API shows them once, when the subscription is made, and a new key changes them all (every receiver
must then be given its new secret, every calendar its new address).

What a body may subscribe to (`scope_for`): what it must act on. A body's subscription names its own role as
who must act (given or not), and a municipal body's (council, mayor, municipality) its own municipality; a
state body (IBGE, TRE, SEFAZ, ...) may narrow to a municipality. Auditors (read-only: Tribunal de Contas,
Ministério Público), who read every case, may subscribe to any body's alerts or to all; so may an operator from
the command line. A subscription made through the API lives while its token does: when the token is revoked or
expires, the subscriptions it made stop (no alert is sent, the feed answers 404).

A subscription receives the alerts raised from its creation on (those raised before are in `GET /alerts`), and
only a case's alerts: system alerts stay with the operators' webhook (TRAMITA_ALERT_WEBHOOK_URL).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import ipaddress
import re
import socket
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any
from urllib.parse import urlsplit
from uuid import NAMESPACE_URL, UUID, uuid4, uuid5

from domain.access import MUNICIPAL_ROLES, READ_ONLY_ROLES
from domain.acts import ActContext, Actor, ChainedAggregate
from domain.alerts import BREACH, MISSED
from domain.chain import added_by_upcast
from domain.errors import InvalidActError, RuleNotInForceError, Sentence
from domain.lifecycle import act_catalogue, lifecycle_kinds, lifecycle_of
from domain.parameters import Statute

ARTICLE = "api-subscriptions"
WEBHOOK, CALENDAR, EMAIL = "webhook", "calendar", "email"
#: The channels whose alerts the scheduler delivers, one worker per subscription.
DELIVERED_CHANNELS = (WEBHOOK, EMAIL)
#: The actor of the command line's administrative commands (tramita/cli/access.py): an operator.
OPERATOR_ROLE = "token-administrator"
#: The alert kinds a subscription may name: missed, breach and the warnings due-in-N-days.
ALERT_KIND = re.compile(rf"{MISSED}|{BREACH}|due-in-[0-9]{{1,4}}-days?")
MAX_URL = 2048
#: RFC 5321's limit on a forward path, less its angle brackets.
MAX_EMAIL = 254
MAX_KINDS = 20
#: The subscription key: the base64 of 32 to 64 random bytes.
KEY_BYTES = (32, 64)


def parse_key(text: str | None, source: str = "TRAMITA_SUBSCRIPTION_KEY") -> SubscriptionKeys | None:
    """The deployment's subscription key (None when unset); refused by name when it is not the base64 of 32 to 64
    bytes (the value is never shown)."""
    if text is None or not text.strip():
        return None
    try:
        key = base64.b64decode(text.strip(), validate=True)
    except (binascii.Error, ValueError):
        key = b""
    if not KEY_BYTES[0] <= len(key) <= KEY_BYTES[1]:
        raise ValueError(f"{source}: not the base64 of {KEY_BYTES[0]} to {KEY_BYTES[1]} random bytes (the value is "
                         "not shown); make one with `python3 -c \"import base64, secrets; "
                         "print(base64.b64encode(secrets.token_bytes(32)).decode())\"`")
    return SubscriptionKeys(key)


@dataclass(frozen=True, repr=False)
class SubscriptionKeys:
    """What the subscription key derives: each webhook's Standard Webhooks secret and each feed's key."""

    key: bytes

    def _derive(self, label: str, subscription_id: UUID) -> bytes:
        return hmac.new(self.key, f"tramita:{label}:{subscription_id}".encode(), hashlib.sha256).digest()

    def webhook_secret(self, subscription_id: UUID) -> str:
        """`whsec_` and the base64 of 32 bytes: the secret the receiver verifies the signatures with."""
        return "whsec_" + base64.b64encode(self._derive(WEBHOOK, subscription_id)).decode()

    def feed_key(self, subscription_id: UUID) -> str:
        """The feed's key, the secret part of its address (URL-safe base64 of 32 bytes, no padding)."""
        return base64.urlsafe_b64encode(self._derive(CALENDAR, subscription_id)).decode().rstrip("=")

    def opens(self, subscription_id: UUID, key: str) -> bool:
        """`key` is the feed's (compared in constant time)."""
        return hmac.compare_digest(self.feed_key(subscription_id).encode(), key.encode("utf-8", "replace"))


#: The webhooks (and, apart, the calendar feeds) a body may have in force at once through the API: the scheduler
#: serves each webhook with a worker of its own, and a body's dozen receivers already cover every unit it has. An
#: operator's (`tramita subscription add`) are not counted. Product configuration, not law.
MAX_SUBSCRIPTIONS_PER_BODY = 10


def check_url(url: str, *, private: bool) -> str:
    """A webhook's address: http(s), a host, no user or password in it, at most MAX_URL characters; with `private`
    False, not a loopback, private or link-local address written as such (the scheduler would POST to the
    deployment's own network)."""
    if not isinstance(url, str) or not url or len(url) > MAX_URL or not url.isprintable() or not url.isascii() \
            or " " in url:
        raise InvalidActError("url", Sentence(
            "an http:// or https:// address of at most %(most)s printable ASCII characters, without spaces",
            most=MAX_URL))
    try:
        parts = urlsplit(url)
        host, port = parts.hostname, parts.port
    except ValueError:  # a port that is no number, or beyond 65535; brackets around no IPv6 address
        raise InvalidActError("url", Sentence("%(url)r is not an address", url=url[:80])) from None
    if port == 0:
        raise InvalidActError("url", Sentence("%(url)r is not an address", url=url[:80]))
    if parts.scheme not in ("http", "https") or not host:
        raise InvalidActError("url", Sentence("%(url)r is not an http:// or https:// address", url=url[:80]))
    if not _HOST.fullmatch(host):
        raise InvalidActError("url", Sentence("%(host)r is not a host name or an IP address", host=host[:80]))
    if parts.username is not None or parts.password is not None:
        raise InvalidActError("url", "no user or password in the address: the signature proves the sender")
    if not private and _internal(host):
        raise InvalidActError("url", Sentence(
            "%(host)s is an address of the deployment's own network (loopback, private or link-local); an operator "
            "may add it with `tramita subscription add`",
            host=host))
    return url


#: A host as a URL may name it: a DNS name (letters, digits, hyphens, underscores, dots), or an IPv6 address
#: (urlsplit drops its brackets), with a zone.
_HOST = re.compile(r"[A-Za-z0-9._-]+|[0-9A-Fa-f:.]+(%[A-Za-z0-9._-]+)?")


def _internal(host: str) -> bool:
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        address = ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        try:  # the forms the system's resolver also takes as IPv4: 127.1, 2130706433, 0x7f.1, 0
            address = ipaddress.IPv4Address(socket.inet_aton(host))
        except OSError:
            return False
    return internal_address(address)


def internal_address(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    """Not an address of the public Internet: loopback, private, link-local, unspecified, and every other range
    IANA does not route globally (shared 100.64.0.0/10, documentation, benchmarking, reserved) or multicast. An IPv6
    address that carries an IPv4 one (`embedded_ipv4`) is judged as that IPv4 address too: the network would deliver
    to it (`[64:ff9b::7f00:1]` is 127.0.0.1 through NAT64)."""
    if isinstance(address, ipaddress.IPv6Address):
        if address in _NAT64_LOCAL:  # RFC 8215: a translator of the deployment's own network, at any prefix length
            return True
        embedded = embedded_ipv4(address)
        if embedded is not None:
            if address.ipv4_mapped is not None:  # ::ffff:a.b.c.d is only ever that IPv4 address
                return internal_address(embedded)
            if internal_address(embedded):
                return True
    return not address.is_global or address.is_multicast


#: NAT64's well-known prefix (RFC 6052) and the local-use one (RFC 8215), and IPv4-compatible addresses
#: (RFC 4291, deprecated; the resolver and the kernel still take them).
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
_NAT64_LOCAL = ipaddress.IPv6Network("64:ff9b:1::/48")
_IPV4_COMPATIBLE = ipaddress.IPv6Network("::/96")


def embedded_ipv4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 one carries, which the network delivers to: IPv4-mapped (`::ffff:0:0/96`), 6to4
    (`2002::/16`, bits 16-48), Teredo (`2001::/32`, the client: the last 32 bits inverted), NAT64 (`64:ff9b::/96`)
    and IPv4-compatible (`::/96`), the last 32 bits; None for any other address."""
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address.teredo is not None:
        return address.teredo[1]  # (server, client): the stdlib has already inverted the client's bits
    if address in _NAT64 or address in _IPV4_COMPATIBLE:
        return ipaddress.IPv4Address(address.packed[12:])
    return None


def parse_private_urls(text: str | None) -> bool:
    """TRAMITA_SUBSCRIPTION_PRIVATE_URLS: `1`/`true` or `0`/`false` (unset: false), read by the API and the
    scheduler alike."""
    value = (text or "").strip().lower()
    if value not in ("", "0", "1", "false", "true"):
        raise ValueError(f"TRAMITA_SUBSCRIPTION_PRIVATE_URLS: {value!r} is not 1 or 0")
    return value in ("1", "true")


def internal_allowed(subscription: Any, *, private_urls: bool) -> bool:
    """May the scheduler deliver this subscription's alerts to an address of its own network? Only one an
    operator made (from the command line: no token), or any when the deployment allows them
    (TRAMITA_SUBSCRIPTION_PRIVATE_URLS); a body's subscription whose name resolves there is not delivered."""
    return subscription.token_id is None or private_urls


def check_email(email: str) -> str:
    """One e-mail address, as the subscription records it: `local@domain`, no display name, no spaces, angle
    brackets, commas or line breaks (no second address, no header smuggled in), at most MAX_EMAIL characters, a
    domain with a dot, written in ASCII or IDNA-encodable; the domain is kept as written (lowercased)."""
    refused = InvalidActError("email", Sentence(
        "one e-mail address (name@example.gov.br) of at most %(most)s characters, without a display name, spaces "
        "or line breaks", most=MAX_EMAIL))
    if not isinstance(email, str) or not 3 <= len(email) <= MAX_EMAIL or not email.isprintable():
        raise refused
    local, at, domain = email.rpartition("@")
    if not at or not _LOCAL.fullmatch(local) or ".." in local or local.startswith(".") or local.endswith("."):
        raise refused
    try:
        ascii_domain = domain.encode("idna").decode("ascii") if not domain.isascii() else domain
    except UnicodeError:
        raise refused from None
    if not _DOMAIN.fullmatch(ascii_domain) or len(ascii_domain) > 253:
        raise refused
    return f"{local}@{domain.lower()}"


#: The local part: RFC 5322's dot-atom characters (no quoted strings: no spaces, no commas, no angle brackets).
_LOCAL = re.compile(r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~.-]{1,64}")
#: A domain with at least one dot, each label of letters, digits and inner hyphens.
_DOMAIN = re.compile(r"(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z0-9-]{2,63}")


def scope_for(actor: Actor, *, role: str | None, municipality: str | None) -> tuple[str | None, str | None]:
    """What a body may subscribe to (see the module's docstring): the (role, municipality) filters the
    subscription records, the body's own filled in; a filter outside what concerns it is refused, naming it."""
    if actor.role in READ_ONLY_ROLES or actor.role == OPERATOR_ROLE:
        return role, municipality
    if role not in (None, actor.role):
        raise InvalidActError("role", Sentence(
            "a %(role)s token subscribes to the alerts its own body must act on (role %(role)s), not %(role2)s's; "
            "auditors may subscribe to any body's",
            role=actor.role, role2=role))
    if actor.role in MUNICIPAL_ROLES and municipality not in (None, actor.municipality):
        raise InvalidActError("municipality", Sentence(
            "a %(role)s token of %(municipality)s subscribes to its own municipality's alerts, not "
            "%(municipality2)s's",
            role=actor.role, municipality=actor.municipality, municipality2=municipality))
    return actor.role, actor.municipality if actor.role in MUNICIPAL_ROLES else municipality


def check_kinds(kinds: list[str] | None) -> list[str]:
    if kinds is None:
        return []
    if len(kinds) > MAX_KINDS or not all(isinstance(k, str) and ALERT_KIND.fullmatch(k) for k in kinds):
        raise InvalidActError("kinds", Sentence(
            "at most %(most)s alert kinds, each missed, breach or due-in-N-days",
            most=MAX_KINDS))
    return sorted(set(kinds))


class Subscription(ChainedAggregate):
    """One body's subscription: a webhook or an e-mail address that receives its alerts, or a calendar feed of
    its deadlines."""

    class Created(ChainedAggregate.Created):
        """A subscription was made: its channel, its address (a webhook's URL, an e-mail's address), its filters,
        and the token that made it (None: an operator, from the command line).

        Version 2 added `email` and `digest` (an e-mail subscription's alerts gathered in one message a day); a
        subscription made before (version 1) had neither."""

        class_version = 2

        channel: str
        url: str | None
        email: str | None
        digest: bool
        role: str | None
        municipality: str | None
        case_id: str | None
        kinds: list[str]
        token_id: str | None
        created_at: datetime

        def assign(self, subscription: Subscription) -> None:
            subscription.channel, subscription.url, subscription.email = self.channel, self.url, self.email
            subscription.digest = self.digest
            subscription.role, subscription.municipality = self.role, self.municipality
            subscription.case_id, subscription.kinds = self.case_id, list(self.kinds)
            subscription.token_id, subscription.created_at = self.token_id, self.created_at
            subscription.created_by = dict(self.actor)
            subscription.removed_on = subscription.removed_by = subscription.remove_reason = None

        @staticmethod
        def upcast_v1_v2(state: dict) -> None:
            added_by_upcast(state, email=None, digest=False)

    class Removed(ChainedAggregate.Event):
        """The subscription ends: no alert is sent to it any more, its feed answers 404."""

        reason: str

        def assign(self, subscription: Subscription) -> None:
            subscription.removed_on, subscription.removed_by = self.occurred_on, dict(self.actor)
            subscription.remove_reason = self.reason

    @classmethod
    def create(cls, ctx: ActContext, *, channel: str, url: str | None, role: str | None, municipality: str | None,
               case_id: str | None, kinds: list[str], token_id: str | None, email: str | None = None,
               digest: bool = False) -> Subscription:
        return cls._start(cls.Created, ctx, id=uuid4(), article=ARTICLE, channel=channel, url=url, email=email,
                          digest=digest, role=role,
                          municipality=municipality, case_id=case_id, kinds=kinds, token_id=token_id,
                          created_at=ctx.recorded_at)

    def remove(self, ctx: ActContext, *, reason: str) -> None:
        if self.removed_on is not None:
            raise InvalidActError("subscription", Sentence(
                "subscription %(id)s was already removed on %(removed_on)s",
                id=self.id, removed_on=self.removed_on.isoformat()))
        self._record(self.Removed, ctx, article=ARTICLE, reason=reason)

    def belongs_to(self, actor: Actor) -> bool:
        """The subscription is the body's: made by a token of the same role (and municipality)."""
        made_by = self.created_by
        return made_by.get("role") == actor.role and made_by.get("municipality") == actor.municipality

    def matches(self, alert: Mapping[str, Any]) -> bool:
        """A case's alert (fields as `scheduler.jsonlog.alert_fields` gives them) this subscription receives."""
        return (alert.get("case_id") is not None
                and self.role in (None, alert.get("who"))
                and self.municipality in (None, alert.get("municipality"))
                and self.case_id in (None, alert.get("case_id"))
                and (not self.kinds or alert.get("kind") in self.kinds))

    def filters(self) -> dict[str, Any]:
        return {"role": self.role, "municipality": self.municipality, "case_id": self.case_id, "kinds": self.kinds}


def closing_acts(statute: Statute, on: date) -> dict[tuple[str, str], list[str]]:
    """docs/law/lifecycles.md: (case kind, deadline rule) -> the acts that close it, by their plain labels, in the
    lifecycles in force on `on` (what a calendar says is expected)."""
    catalogue = act_catalogue(statute, on)
    expected: dict[tuple[str, str], list[str]] = {}
    for kind in lifecycle_kinds(statute):
        try:
            lifecycle = lifecycle_of(statute, kind, on)
        except RuleNotInForceError:
            continue
        for step in lifecycle.steps:
            for rule in step.closes:
                label = catalogue[step.act].label if step.act in catalogue else step.act
                if label not in expected.setdefault((kind, rule), []):
                    expected[(kind, rule)].append(label)
    return expected


class SubscriptionTurns(ChainedAggregate):
    """A body's turns at making a subscription through the API: each making records one here, in its own save, so
    that two made at once for one body conflict and the second is judged again against MAX_SUBSCRIPTIONS_PER_BODY
    (counted from the subscriptions themselves)."""

    NAMESPACE = uuid5(NAMESPACE_URL, "urn:tramita:subscription-turns")

    class Opened(ChainedAggregate.Created):
        body: str

        def assign(self, turns: SubscriptionTurns) -> None:
            turns.body, turns.taken = self.body, 0

    class Taken(ChainedAggregate.Event):
        subscription_id: str

        def assign(self, turns: SubscriptionTurns) -> None:
            turns.taken += 1

    @classmethod
    def id_for(cls, body: str) -> UUID:
        return uuid5(cls.NAMESPACE, body)

    @classmethod
    def open(cls, ctx: ActContext, body: str) -> SubscriptionTurns:
        return cls._start(cls.Opened, ctx, id=cls.id_for(body), article=ARTICLE, body=body)

    def take(self, ctx: ActContext, subscription_id: UUID) -> None:
        self._record(self.Taken, ctx, article=ARTICLE, subscription_id=str(subscription_id))
