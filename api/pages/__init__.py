"""The pages people read: tramita in the browser, in Portuguese (English on request), served by the API's app.

Server-rendered Jinja2 templates (api/templates), one stylesheet (api/static), no script needed and nothing from
another site. Paths are Portuguese, as SAPL's are: `/`, `/processos`, `/processos/<número>`, `/prazos`,
`/alertas`, `/municipios`, `/municipios/<código IBGE>`; `POST /sessao` signs in, `POST /sessao/sair` signs out
(api/pages/session.py); the stylesheet is under `/estatico/`. Every page but `/` needs a session, whose token is
authenticated again on each request; the JSON API keeps its bearer tokens and reads the session only for the few
reads the pages link to (api/http.py, SESSION_READS).
"""

from __future__ import annotations

from collections.abc import Mapping

from flask import Flask


def register(flask: Flask, config: Mapping[str, str]) -> None:
    """The pages, their session and their settings on the app."""
    from api.pages import casefile, format, forms, session, subscriptions, verify, views  # noqa: F401 - routes

    session.register(flask, config)
    # The reads a reader follows as links from the pages (api/http.py, SESSION_READS) take the session's token.
    flask.extensions["tramita.session_bearer"] = lambda: session.token_of_session(
        flask.extensions["tramita"].clock())
    flask.extensions["tramita.pages"]["late_recording_days"] = casefile.late_recording_days(dict(config))
    flask.jinja_env.filters.update(format.FILTERS)
    flask.register_blueprint(views.pages)
