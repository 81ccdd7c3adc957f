"""The API's bearer tokens: issued to a competent body, shown once, revoked, authenticated."""

from __future__ import annotations

from datetime import date
from typing import Any
from uuid import UUID

from eventsourcing.utils import get_topic

from domain.access import (
    COMPETENCE_ENTRIES, READ_ONLY_ROLES, AccessToken, IssuedToken, bodies_competent_for, competent_roles,
)
from domain.acts import Actor
from domain.application.base import ApplicationBase
from domain.case import KINDS
from domain.errors import (
    AuthenticationError, CaseNotFoundError, IncompetentBodyError, InvalidActError, LegalRuleError, Listing, OR,
    Sentence,
)
from domain.lifecycle import lifecycle_of


class Tokens(ApplicationBase):
    """The API's bearer tokens: issued to a competent body, shown once, revoked, authenticated."""

    # ------------------------------------------------------------------ access (the API's bearer tokens)

    def token_roles(self) -> list[str]:
        """The roles a token may have: the bodies the competence tables name today, and the auditors."""
        return competent_roles(self.statute, self.today())

    def issue_token(self, issuer: Actor, *, name: str, role: str, municipality: str | None = None,
                    expires_on: date | None = None) -> IssuedToken:
        """Issue a bearer token for a competent body; the token is returned once, only its hash is stored."""
        ctx = self.system_context(issuer)
        if municipality is not None:
            self._get_municipality(municipality)
        token, secret = AccessToken.issue(ctx, name=name, role=role, municipality=municipality,
                                          roles=self.token_roles(), expires_on=expires_on)
        self.save(token)
        return IssuedToken(token.id, secret, token.actor)

    def revoke_token(self, issuer: Actor, token_id: str, *, reason: str) -> AccessToken:
        token = self._get_token(token_id)
        token.revoke(self.system_context(issuer), reason=reason)
        self.save(token)
        return token

    def authenticate(self, bearer: str | None) -> AccessToken:
        """The token a bearer presents (its `actor` records the acts); AuthenticationError when unknown or revoked."""
        parsed = AccessToken.parse(bearer or "")
        if parsed is None:
            raise AuthenticationError("a bearer token is required (Authorization: Bearer trm_…)")
        token = self._get_or_none(parsed[0])
        if not isinstance(token, AccessToken) or not token.admits(parsed[1], self.today()):
            if isinstance(token, AccessToken) and token.matches(parsed[1]) and token.revoked_on is None:
                raise AuthenticationError(Sentence("the bearer token expired after %(day)s",
                                                   day=token.expires_on.isoformat()))
            raise AuthenticationError("the bearer token is unknown or revoked")
        return token

    def actor_for(self, bearer: str | None) -> tuple[Actor, UUID]:
        """`authenticate` for a request: the actor its acts record and the token's id. The token is borrowed
        from the pool for the check, not copied (half the cost of every request's authentication)."""
        with self.pool.borrowing():
            token = self.authenticate(bearer)
            return token.actor, token.id

    def require_may_record(self, actor: Actor, act: str, *, case_ref: str | None = None,
                           kind: Any = None) -> None:
        """Before reading a request: the actor's role is a body competent for `act` today (for some case kind).

        The refusal cites the article of the act for the case's kind (the case `case_ref`, or the `kind` a petition
        names), as the act itself would: a district's finding Art. 32, its law Art. 31. The act itself checks
        again, on its legal date and for the case's kind and municipality, with the statute read from the store;
        so this check takes the statute as the process last read it, and reads it again only before refusing
        (an amendment another process recorded since may have made the body competent).
        """
        today = self.today()
        article, bodies = bodies_competent_for(self._amendments.last_read(), today, act)
        if actor.role not in bodies:
            article, bodies = bodies_competent_for(self.statute, today, act)
        if actor.role not in bodies:
            if case_ref is not None:
                kind = self._kind_of(case_ref)
            article = (self._article_of_act(act, kind, today) if isinstance(kind, str) else None) or article
            raise IncompetentBodyError(article, Sentence(
                "%(act)s is recorded by %(bodies)s; %(role)s is not the competent body",
                act=act, bodies=Listing(bodies, OR), role=actor.role), competent=bodies, role=actor.role)

    def _kind_of(self, case_ref: str) -> str | None:
        try:
            with self.pool.borrowing():
                return self._get_case(self.resolve_case(case_ref)).kind
        except CaseNotFoundError:
            return None

    def _article_of_act(self, act: str, kind: str, on: date) -> str | None:
        """The article of the step recording the API's `act` in the lifecycle of `kind` on `on` (None: none)."""
        if kind not in KINDS:
            return None
        try:
            lifecycle = lifecycle_of(self.statute, kind, on)
        except LegalRuleError:
            return None
        names = [act, *(entry for table, entry in COMPETENCE_ENTRIES.get(act, ()) if table == "competence.act")]
        step = next((step for step in map(lifecycle.step, names) if step is not None), None)
        return step.article if step is not None else None

    def require_may_upload(self, actor: Actor) -> None:
        """Before reading an upload: a document is stored for an act to cite, so only a body that records acts
        stores one (`competence.*`); a read-only role (an auditor) reads documents and stores none."""
        today = self.today()
        bodies = [role for role in competent_roles(self.statute, today) if role not in READ_ONLY_ROLES]
        if actor.role not in bodies:
            article = self.statute.in_force("competence.act", today).article
            raise IncompetentBodyError(article, Sentence(
                "a document is stored for an act to cite, by a body that records acts; %(role)s records none",
                role=actor.role), competent=bodies, role=actor.role)

    def tokens(self) -> list[AccessToken]:
        """Every token ever issued (revoked ones included), oldest first: read from the log by the issue's topic."""
        topic = get_topic(AccessToken.Issued)
        ids, start = [], 1
        while notifications := self.recorder.select_notifications(start=start, limit=500, topics=[topic]):
            ids += [n.originator_id for n in notifications]
            start = notifications[-1].id + 1
        return [self.repository.get(token_id) for token_id in ids]

    def _get_token(self, token_id: str) -> AccessToken:
        try:
            token = self._get_or_none(UUID(token_id))
        except ValueError:
            raise InvalidActError("token", Sentence("%(token_id)r is not a token id", token_id=token_id)) from None
        if not isinstance(token, AccessToken):
            raise InvalidActError("token", Sentence("no token %(token_id)s", token_id=token_id))
        return token
