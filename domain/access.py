"""Who may record acts through the API, and the receipts that make a retried request record nothing twice.

Access tokens are aggregates like any act: issuing and revoking one is recorded, attributed and hash-chained, so an
auditor can see which body held which token when. Only a SHA-256 of the token's secret is stored; the token
itself (`trm_<id>_<secret>`) is shown once, when issued. The secret is 256 random bits, so a plain hash suffices
(no password stretching) and is compared in constant time.

A receipt is the record of one `Idempotency-Key` of one token: the fingerprint of the request and the act it
recorded. It is saved in the same transaction as that act, so an act is never recorded without its receipt nor
a receipt without its act; a retry finds it and is answered from it.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass
from datetime import date
from uuid import NAMESPACE_URL, UUID, uuid4, uuid5

from domain.acts import ActContext, Actor, ChainedAggregate, require_date
from domain.chain import added_by_upcast
from domain.errors import InvalidActError, Listing, Sentence
from domain.parameters import Statute

ACCESS_NAMESPACE = uuid5(NAMESPACE_URL, "urn:tramita:access")
TOKEN_PREFIX = "trm"

#: Roles that read every case and record nothing (Tribunal de Contas, Ministério Público).
READ_ONLY_ROLES = ("auditor",)
#: Roles that act for one municipality only: their tokens name it, and the domain checks it on each act.
MUNICIPAL_ROLES = ("council", "mayor", "municipality")
#: The system's own role (alerts); never given to a token.
SYSTEM_ROLES = ("scheduler",)


def competent_roles(statute: Statute, on: date) -> list[str]:
    """Every body the statute's competence tables name on a day (`competence.*`), plus the read-only roles."""
    roles: set[str] = set()
    for parameter in ("competence.act", "competence.finding", "competence.registry-figure"):
        for bodies in statute.in_force(parameter, on).value.values():
            roles.update(bodies)
    return sorted(roles - set(SYSTEM_ROLES)) + [r for r in READ_ONLY_ROLES if r not in roles]


def _digest(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class IssuedToken:
    """What issuing a token returns: its id and the token itself, which is not stored and cannot be shown again."""

    id: UUID
    token: str
    actor: Actor


class AccessToken(ChainedAggregate):
    """A bearer token of one competent body (role), for one municipality when the role is municipal."""

    class Issued(ChainedAggregate.Created):
        """A token was issued to a named holder for a role, valid through `expires_on` (None: until revoked).

        Version 2 added `expires_on`; a token issued before (version 1) never expires, as it was issued.
        """

        class_version = 2

        name: str
        role: str
        municipality: str | None
        secret_sha256: str
        expires_on: date | None

        def assign(self, token: AccessToken) -> None:
            token.name, token.role, token.municipality = self.name, self.role, self.municipality
            token.secret_sha256, token.issued_on, token.revoked_on = self.secret_sha256, self.occurred_on, None
            token.expires_on = self.expires_on

        @staticmethod
        def upcast_v1_v2(state: dict) -> None:
            added_by_upcast(state, expires_on=None)

    class Revoked(ChainedAggregate.Event):
        """The token no longer authenticates anyone."""

        reason: str

        def assign(self, token: AccessToken) -> None:
            token.revoked_on, token.revoke_reason = self.occurred_on, self.reason

    @classmethod
    def issue(cls, ctx: ActContext, *, name: str, role: str, municipality: str | None,
              roles: list[str], expires_on: date | None = None) -> tuple[AccessToken, str]:
        """A new token for `role` (one of `roles`); municipal roles must name their municipality, others must not;
        valid through `expires_on` (a day after today in Rio Branco), or until revoked."""
        if not name or not name.strip():
            raise InvalidActError("name", "is required: it is recorded as the principal of every act")
        if role not in roles:
            raise InvalidActError("role", Sentence(
                "%(role)r is not a competent body; one of %(roles)s",
                role=role, roles=Listing(roles)))
        if role in MUNICIPAL_ROLES and not municipality:
            raise InvalidActError("municipality", Sentence(
                "a %(role)s token acts for one municipality: give its IBGE code",
                role=role))
        if role not in MUNICIPAL_ROLES and municipality:
            raise InvalidActError("municipality", Sentence(
                "a %(role)s token does not act for a municipality",
                role=role))
        if expires_on is not None and require_date("expires_on", expires_on) <= ctx.today:
            raise InvalidActError("expires_on", Sentence(
                "a token issued on %(today)s expires on a later day; %(expires_on)s is not",
                today=ctx.today.isoformat(), expires_on=expires_on.isoformat()))
        secret = secrets.token_urlsafe(32)
        token = cls._start(cls.Issued, ctx, id=uuid4(), article="api-access", name=name.strip(), role=role,
                           municipality=municipality, secret_sha256=_digest(secret), expires_on=expires_on)
        return token, f"{TOKEN_PREFIX}_{token.id.hex}_{secret}"

    def revoke(self, ctx: ActContext, *, reason: str) -> None:
        if self.revoked_on is not None:
            raise InvalidActError("token", Sentence(
                "token %(id)s was already revoked on %(revoked_on)s",
                id=self.id, revoked_on=self.revoked_on.isoformat()))
        self._record(self.Revoked, ctx, article="api-access", reason=reason)

    def matches(self, secret: str) -> bool:
        """The secret is this token's (compared in constant time)."""
        return hmac.compare_digest(self.secret_sha256, _digest(secret))

    def admits(self, secret: str, today: date) -> bool:
        """The secret matches, and on `today` the token is neither revoked nor past its last day."""
        return self.matches(secret) and self.revoked_on is None and not self.expired_on(today)

    def expired_on(self, today: date) -> bool:
        """The token's last day (`expires_on`) is before `today`."""
        return self.expires_on is not None and self.expires_on < today

    @property
    def actor(self) -> Actor:
        return Actor(self.name, self.role, self.municipality)

    @staticmethod
    def parse(token: str) -> tuple[UUID, str] | None:
        """`trm_<id hex>_<secret>` -> (id, secret); anything else -> None."""
        prefix, _, rest = token.partition("_")
        hex_id, _, secret = rest.partition("_")
        if prefix != TOKEN_PREFIX or not secret:
            return None
        try:
            return UUID(hex=hex_id), secret
        except ValueError:
            return None


class Receipt(ChainedAggregate):
    """One `Idempotency-Key` of one token, and the act its request recorded (saved with that act)."""

    class Issued(ChainedAggregate.Created):
        """The request with this key and fingerprint recorded `act` on the case, leaving it at `case_version`;
        the act's own events on the case are versions `decided_from` to `case_version`.

        Version 2 added `decided_from`; receipts stored before it read None (the act's last event is known)."""

        class_version = 2

        scope: str
        key: str
        fingerprint: str
        act: str
        case_id: str
        case_number: str
        case_version: int
        result: str | None
        decided_from: int | None

        def assign(self, receipt: Receipt) -> None:
            receipt.scope, receipt.key = self.scope, self.key
            receipt.fingerprint, receipt.act = self.fingerprint, self.act
            receipt.case_id, receipt.case_number = self.case_id, self.case_number
            receipt.case_version, receipt.result = self.case_version, self.result
            receipt.decided_from = self.decided_from

        @staticmethod
        def upcast_v1_v2(state: dict) -> None:
            added_by_upcast(state, decided_from=None)

    @staticmethod
    def id_for(scope: str, key: str) -> UUID:
        return uuid5(ACCESS_NAMESPACE, f"receipt:{scope}:{key}")

    @classmethod
    def issue(cls, ctx: ActContext, *, scope: str, key: str, fingerprint: str, act: str, case_id: UUID,
              case_number: str, case_version: int, result: str | None, decided_from: int | None) -> Receipt:
        return cls._start(cls.Issued, ctx, id=cls.id_for(scope, key), article="api-idempotency", scope=scope,
                          key=key, fingerprint=fingerprint, act=act, case_id=str(case_id), case_number=case_number,
                          case_version=case_version, result=result, decided_from=decided_from)


@dataclass(frozen=True)
class IdempotentRequest:
    """A request carrying an `Idempotency-Key`: whose (the token), which key, what (a fingerprint of the body)."""

    scope: str
    key: str
    fingerprint: str
    act: str

    @property
    def receipt_id(self) -> UUID:
        return Receipt.id_for(self.scope, self.key)


#: The API's act names whose competent bodies are several entries of the statute's competence tables: the case's
#: kind picks one entry when the act is recorded (and the domain checks that one); "*" is every entry.
COMPETENCE_ENTRIES: dict[str, tuple[tuple[str, str], ...]] = {
    "petition-filed": (("competence.act", "petition-filed"), ("competence.act", "district-petition-filed"),
                       ("competence.act", "extinction-requested")),
    "law-enacted": (("competence.act", "law-enacted"), ("competence.act", "district-law-enacted")),
    "communication-sent": (("competence.act", "communication-sent"),
                           ("competence.act", "district-communication-sent")),
    "case-archived": (("competence.act", "case-archived"), ("competence.act", "district-case-archived")),
    "finding-recorded": (("competence.finding", "*"),),
    "figure-recorded": (("competence.registry-figure", "*"),),
    "statute-amended": (("competence.statute-amendment", "statute-amended"),),
}


def bodies_competent_for(statute: Statute, on: date, act: str) -> tuple[str, list[str]]:
    """The article and the bodies that may record `act` on a day, for a case of any kind (the statute's tables)."""
    bodies: set[str] = set()
    article = ""
    for parameter_id, entry in COMPETENCE_ENTRIES.get(act, (("competence.act", act),)):
        parameter = statute.in_force(parameter_id, on)
        article = article or parameter.article
        table = parameter.value
        if entry == "*":
            for roles in table.values():
                bodies.update(roles)
        elif entry in table:
            bodies.update(table[entry])
        else:
            raise KeyError(f"no competence entry {entry!r} in {parameter_id}")
    return article, sorted(bodies)
