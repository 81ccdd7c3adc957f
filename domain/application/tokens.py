"""The API's bearer tokens: issued to a competent body, shown once, revoked, authenticated."""

from __future__ import annotations

from datetime import date
from uuid import UUID

from eventsourcing.utils import get_topic

from domain.access import READ_ONLY_ROLES, AccessToken, IssuedToken, bodies_competent_for, competent_roles
from domain.acts import Actor
from domain.application.base import ApplicationBase
from domain.errors import AuthenticationError, IncompetentBodyError, InvalidActError


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
                raise AuthenticationError(f"the bearer token expired after {token.expires_on.isoformat()}")
            raise AuthenticationError("the bearer token is unknown or revoked")
        return token

    def actor_for(self, bearer: str | None) -> tuple[Actor, UUID]:
        """`authenticate` for a request: the actor its acts record and the token's id. The token is borrowed
        from the pool for the check, not copied (half the cost of every request's authentication)."""
        with self.pool.borrowing():
            token = self.authenticate(bearer)
            return token.actor, token.id

    def require_may_record(self, actor: Actor, act: str) -> None:
        """Before reading a request: the actor's role is a body competent for `act` today (for some case kind).

        The act itself checks again, on its legal date and for the case's kind and municipality.
        """
        article, bodies = bodies_competent_for(self.statute, self.today(), act)
        if actor.role not in bodies:
            raise IncompetentBodyError(article, f"{act} is recorded by {' or '.join(bodies)}; "
                                       f"{actor.role} is not the competent body", competent=bodies, role=actor.role)

    def require_may_upload(self, actor: Actor) -> None:
        """Before reading an upload: a document is stored for an act to cite, so only a body that records acts
        stores one (`competence.*`); a read-only role (an auditor) reads documents and stores none."""
        today = self.today()
        bodies = [role for role in competent_roles(self.statute, today) if role not in READ_ONLY_ROLES]
        if actor.role not in bodies:
            article = self.statute.in_force("competence.act", today).article
            raise IncompetentBodyError(article, f"a document is stored for an act to cite, by a body that records "
                                       f"acts; {actor.role} records none", competent=bodies, role=actor.role)

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
            raise InvalidActError("token", f"{token_id!r} is not a token id") from None
        if not isinstance(token, AccessToken):
            raise InvalidActError("token", f"no token {token_id}")
        return token
