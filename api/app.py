"""The Flask app: `create_app` puts the blueprints over what the wiring built (tramita/web.py builds it).

Configuration comes from `TRAMITA_*` environment variables unless given:
- `TRAMITA_DATABASE_URL` (default `sqlite:///var/tramita.sqlite`): the events and the projections;
- `TRAMITA_DUE_SOON_DAYS` (default 5): a deadline is "due-soon" this many days before its due date;
- `TRAMITA_MAX_BODY_BYTES` (default 1 MiB): the largest request body read; a larger one is 413 (`api/body.py`);
- `TRAMITA_SESSION_HOURS` (default 8), `TRAMITA_SESSION_KEY` (default `var/tramita-session.key`): the pages'
  sessions (`api/pages/session.py`); `TRAMITA_LATE_RECORDING_DAYS` (default 30): the case file marks an act
  recorded more than this many days after its legal date.
- `TRAMITA_SUBSCRIPTION_PRIVATE_URLS` (default 0): 1 lets `POST /subscriptions` name an address of the
  deployment's own network (loopback, private, link-local), for a closed network (docs/api.md).
- `TRAMITA_MAX_DOCUMENT_BYTES` (default 10 MiB): the largest document stored; a larger one is 413
  (`api/documents.py`). `TRAMITA_DOCUMENT_QUOTA_BYTES_PER_DAY` (default 200 MiB) and `TRAMITA_DOCUMENT_QUOTA_BYTES`
  (default 2 GiB), 0 for no limit: the bytes of new documents a body may add per legal day and keep in all, 429
  past either; `TRAMITA_DOCUMENT_QUOTA_DOCUMENTS_PER_DAY` (default 200, 0 for no limit): new documents per legal
  day; `TRAMITA_DOCUMENT_EXPIRY_DAYS` (default 7): days an uncited document is kept after its last upload (checked
  here, used by the scheduler and `tramita documents expire`; audit/document_limits.py).
- `TRAMITA_PUBLIC_URL` (default `http://127.0.0.1:8000`): the address feed URLs are built on, never the request's
  `Host`; `TRAMITA_TOKEN_FAILURES_PER_MINUTE` (default 20): wrong tokens an address may send (`api/http.py`).
- `TRAMITA_ALERT_THRESHOLDS` (default 5,1): the scheduler's warnings before a due day; the calendar feeds remind
  their readers on the same days (a VALARM each).
- `TRAMITA_TRUSTED_PROXIES` (default 0): how many proxies of the deployment stand in front (1 behind
  docs/nginx.conf); the client's address is then read from the `X-Forwarded-For` entry the nearest of them
  appended (Werkzeug's `ProxyFix`), so that wrong tokens are counted per client and not per proxy.
- `TRAMITA_DOSSIER_CERT` (default none) and `TRAMITA_DOSSIER_CERT_PASSWORD_FILE`: the PKCS#12 certificate that signs
  the case files (`GET /cases/{id}/dossier.pdf`, api/dossier_sign.py) and the file holding its password; without
  one the case files are delivered unsigned and say so.

One application per process (each server worker builds its own after forking, through tramita/web.py). The event
tables are created by `tramita migrate`, never by a worker.
"""

from __future__ import annotations

import http
import re
from collections.abc import Mapping
from datetime import date, datetime
from decimal import Decimal
from typing import Any
from urllib.parse import urlsplit

import orjson
from flask import Flask, Response, request, send_from_directory
from flask.json.provider import DefaultJSONProvider
from flask_smorest import Api
from werkzeug.middleware.proxy_fix import ProxyFix

from api import errors
from api.body import DEFAULT_MAX_BODY_BYTES, check_query, drain_unread_body, read_body
from api.documents import DEFAULT_MAX_DOCUMENT_BYTES, MAX_DOCUMENT_BYTES_CEILING
from api.errors import PROBLEM_JSON, ProblemSchema
from api.examples import ExamplesPlugin
from api.fields import PathSegment, path_segment_schema
from audit.document_limits import expiry_days_from, quota_from
from domain.subscriptions import parse_private_urls
from scheduler.config import DEFAULT_THRESHOLDS, parse_thresholds

DEFAULTS = {"TRAMITA_DATABASE_URL": "sqlite:///var/tramita.sqlite", "TRAMITA_DUE_SOON_DAYS": "5",
            "TRAMITA_MAX_BODY_BYTES": str(DEFAULT_MAX_BODY_BYTES),
            "TRAMITA_MAX_DOCUMENT_BYTES": str(DEFAULT_MAX_DOCUMENT_BYTES),
            "TRAMITA_PUBLIC_URL": "http://127.0.0.1:8000", "TRAMITA_TOKEN_FAILURES_PER_MINUTE": "20",
            "TRAMITA_TRUSTED_PROXIES": "0"}
#: The most failed token checks per address and minute a deployment may allow.
TOKEN_FAILURES_CEILING = 100_000
#: The most proxies a deployment may declare in front of the app (nginx, perhaps a load balancer before it).
TRUSTED_PROXIES_CEILING = 5
#: The largest body limit accepted (a body is read into memory whole).
MAX_BODY_BYTES_CEILING = 64 * 1024 * 1024


class TramitaApi(Api):
    """flask-smorest's Api whose error responses are documented as problem+json (`errors.register` makes them so)."""

    ERROR_SCHEMA = ProblemSchema
    #: No catch-all `default` response: each operation lists the error statuses it gives (`api.http.errors_doc`),
    #: so a client (or schemathesis) can tell an undocumented status from a documented one.
    DEFAULT_ERROR_RESPONSE_NAME = None

    def init_app(self, app: Flask, *, spec_kwargs: dict[str, Any] | None = None) -> None:
        """flask-smorest's set-up, then every status's response component restated for this API (below)."""
        super().init_app(app, spec_kwargs=spec_kwargs)
        self.ma_plugin.converter.add_attribute_function(null_in_any_of)
        self.document_statuses()

    def document_statuses(self) -> None:
        """A response component per HTTP status, named as flask-smorest names them (`BAD_REQUEST`, ...), which the
        operations cite (`api.http.errors_doc`): an error is ERROR_SCHEMA as application/problem+json, the type
        `errors.register` answers, and any other status its phrase alone.

        flask-smorest registers these too, as application/json (a content type it offers no setting for,
        docs/upstream.md), and lazily: a component enters the document only when an operation cites it. They are
        registered again here the same way, through apispec's public `components.response`: a lazy registration
        takes the place of one not yet cited (tests/test_api_contract.py checks what the document says).
        """
        for status in http.HTTPStatus:
            response: dict[str, Any] = {"description": status.phrase}
            if status >= 400:
                response["content"] = {PROBLEM_JSON: {"schema": self.ERROR_SCHEMA}}
            self.spec.components.response(status.name, response, lazy=True)


def null_in_any_of(converter: Any, field: Any, ret: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    """A field that may be null and is one of several kinds (`anyOf`, api/fields.py) takes null as one more kind:
    in OpenAPI 3.1 apispec says a field may be null in its `type` only, and such a field has none."""
    if field.allow_none and "anyOf" in ret and {"type": "null"} not in ret["anyOf"]:
        return {"anyOf": [*ret["anyOf"], {"type": "null"}]}
    return {}


class JSONProvider(DefaultJSONProvider):
    """Dates as ISO 8601 (not HTTP dates), decimals as exact text, everywhere, nested values included."""

    sort_keys = False

    @staticmethod
    def default(value: Any) -> Any:
        if isinstance(value, (date, datetime)):
            return value.isoformat()
        if isinstance(value, Decimal):
            return str(value)
        return DefaultJSONProvider.default(value)

    def dumps(self, obj: Any, **kwargs: Any) -> str:
        """Written by orjson, the stored events' encoder (dates and UUIDs natively, as ISO 8601 and their text;
        non-ASCII as UTF-8, not escaped), a fraction of every answer's cost under the standard library's
        (docs/benchmarks.md, the API load); Flask's own options (an indent in debug mode) and what orjson refuses
        (an integer beyond 64 bits, a lone surrogate) by the standard library's encoder, as before."""
        if not kwargs or kwargs == {"separators": (",", ":")}:
            try:
                return orjson.dumps(obj, default=self.default, option=orjson.OPT_NON_STR_KEYS).decode()
            except orjson.JSONEncodeError:
                pass
        return super().dumps(obj, **kwargs)


def settings_from(config: Mapping[str, str]) -> dict[str, Any]:
    """Read and check the configuration; a bad value is refused naming its variable."""
    merged = {**DEFAULTS, **config}
    try:
        due_soon_days = int(merged["TRAMITA_DUE_SOON_DAYS"])
        if due_soon_days < 0:
            raise ValueError
    except ValueError:
        raise ValueError(f"TRAMITA_DUE_SOON_DAYS: {merged['TRAMITA_DUE_SOON_DAYS']!r} is not a whole number of "
                         "days (0 or more)") from None
    raw_limit = merged["TRAMITA_MAX_BODY_BYTES"].strip()
    if not re.fullmatch(r"[0-9]{1,12}", raw_limit) or not 1 <= int(raw_limit) <= MAX_BODY_BYTES_CEILING:
        raise ValueError(f"TRAMITA_MAX_BODY_BYTES: {merged['TRAMITA_MAX_BODY_BYTES']!r} is not a number of bytes "
                         f"from 1 to {MAX_BODY_BYTES_CEILING}")
    raw_document = merged["TRAMITA_MAX_DOCUMENT_BYTES"].strip()
    if not re.fullmatch(r"[0-9]{1,12}", raw_document) or not 1 <= int(raw_document) <= MAX_DOCUMENT_BYTES_CEILING:
        raise ValueError(f"TRAMITA_MAX_DOCUMENT_BYTES: {merged['TRAMITA_MAX_DOCUMENT_BYTES']!r} is not a number of "
                         f"bytes from 1 to {MAX_DOCUMENT_BYTES_CEILING}")
    raw_failures = merged["TRAMITA_TOKEN_FAILURES_PER_MINUTE"].strip()
    if not re.fullmatch(r"[0-9]{1,6}", raw_failures) or not 1 <= int(raw_failures) <= TOKEN_FAILURES_CEILING:
        raise ValueError(f"TRAMITA_TOKEN_FAILURES_PER_MINUTE: {merged['TRAMITA_TOKEN_FAILURES_PER_MINUTE']!r} is not "
                         f"a number of failed token checks from 1 to {TOKEN_FAILURES_CEILING}")
    raw_proxies = merged["TRAMITA_TRUSTED_PROXIES"].strip()
    if not re.fullmatch(r"[0-9]", raw_proxies) or int(raw_proxies) > TRUSTED_PROXIES_CEILING:
        raise ValueError(f"TRAMITA_TRUSTED_PROXIES: {merged['TRAMITA_TRUSTED_PROXIES']!r} is not a number of proxies "
                         f"in front of the app from 0 to {TRUSTED_PROXIES_CEILING}")
    quota, expiry_days = quota_from(merged), expiry_days_from(merged)
    reminders = parse_thresholds(merged.get("TRAMITA_ALERT_THRESHOLDS") or ",".join(map(str, DEFAULT_THRESHOLDS)),
                                 "TRAMITA_ALERT_THRESHOLDS")
    url = merged["TRAMITA_DATABASE_URL"]
    private = parse_private_urls(merged.get("TRAMITA_SUBSCRIPTION_PRIVATE_URLS"))
    return {"database_url": url, "database": url.split(":", 1)[0], "due_soon_days": due_soon_days,
            "max_body_bytes": int(raw_limit), "subscription_private_urls": private,
            "max_document_bytes": int(raw_document), "public_url": public_url(merged["TRAMITA_PUBLIC_URL"]),
            "token_failures_per_minute": int(raw_failures), "trusted_proxies": int(raw_proxies),
            "document_quota": quota, "document_expiry_days": expiry_days, "reminder_days": reminders}


def public_url(text: str) -> str:
    """TRAMITA_PUBLIC_URL: the address people and calendar programs reach the API at (`https://tramita.ac.gov.br`),
    from which feed and page addresses are built, never from the request's `Host` (which the client writes).
    http(s), a host, no path, query or fragment; returned without a trailing slash."""
    value = text.strip()
    try:
        parts = urlsplit(value)
        parts.port  # noqa: B018 - read to refuse a port that is no number, or beyond 65535
    except ValueError:
        parts = None
    if parts is None or parts.scheme not in ("http", "https") or not parts.hostname or parts.path not in ("", "/") \
            or parts.query or parts.fragment or "?" in value or "#" in value or parts.username is not None \
            or not value.isascii() or not value.isprintable() or " " in value:
        raise ValueError(f"TRAMITA_PUBLIC_URL: {text[:80]!r} is not an http:// or https:// address with a host and "
                         "no path, query or fragment (e.g. https://tramita.ac.gov.br)")
    return f"{parts.scheme}://{parts.netloc}"


def create_app(config: Mapping[str, str], *, application: Any, store: Any, audit: Any, documents: Any) -> Flask:
    """The API over an application, its read store, its audit service and its documents, built by the wiring
    (tramita/web.py); `config` is the `TRAMITA_*` settings, checked by `settings_from`."""
    from api import acts, audit as audit_views, documents as document_views, dossier, dossier_sign, i18n, pages
    from api import statute
    from api import subscriptions, views

    config = dict(config)
    settings = settings_from(config)
    flask = Flask("tramita")
    flask.json_provider_class = JSONProvider
    flask.json = JSONProvider(flask)
    flask.config.update(
        API_TITLE="tramita", API_VERSION="1", OPENAPI_VERSION="3.1.0", OPENAPI_URL_PREFIX="/",
        OPENAPI_JSON_PATH="openapi.json",
        API_SPEC_OPTIONS={
            "info": {"description": "Case tracking for the territorial acts of the State of Acre under LC 35/1991: "
                                    "every act an immutable, hash-chained event. Errors are application/problem+json."},
            "security": [{"bearer": []}],
            "components": {"securitySchemes": {"bearer": {"type": "http", "scheme": "bearer",
                                                          "description": "a token from `tramita token create`"}}},
        },
        # api/body.py reads at most the limit + 1 bytes of a body (one more than the limit tells it is too large);
        # Werkzeug itself refuses to read further, whoever asks.
        TRAMITA_MAX_BODY_BYTES=settings["max_body_bytes"], MAX_CONTENT_LENGTH=settings["max_body_bytes"] + 1,
        TRAMITA_MAX_DOCUMENT_BYTES=settings["max_document_bytes"], TRAMITA_DOCUMENT_QUOTA=settings["document_quota"],
    )
    # Every path parameter: one segment of at most MAX_REFERENCE_CHARS characters, no control character.
    flask.url_map.converters["default"] = flask.url_map.converters["string"] = PathSegment
    flask.extensions["tramita"] = application
    flask.extensions["tramita.store"] = store
    flask.extensions["tramita.audit"] = audit
    flask.extensions["tramita.settings"] = settings
    flask.extensions["tramita.documents"] = documents
    flask.extensions["tramita.dossier_signer"] = dossier_sign.signer_from(config)
    from api.http import TokenFailures, authenticate

    flask.extensions["tramita.token_failures"] = TokenFailures(settings["token_failures_per_minute"])
    if settings["trusted_proxies"]:  # Werkzeug's documented way to read the client's address behind proxies
        flask.wsgi_app = ProxyFix(flask.wsgi_app, x_for=settings["trusted_proxies"])  # type: ignore[method-assign]
    i18n.register(flask)
    api = TramitaApi(flask, spec_kwargs={"extra_plugins": [ExamplesPlugin()]})
    api.register_converter(PathSegment, path_segment_schema)
    errors.register(flask)
    flask.before_request(authenticate)
    for blueprint in (acts.blp, views.cases, dossier.blp, audit_views.blp, views.reads, statute.blp,
                      subscriptions.blp, document_views.blp, views.health, views.caller):
        api.register_blueprint(blueprint)
    flask.before_request(check_query)
    flask.before_request(read_body)  # after authenticate: an anonymous body is never read
    flask.after_request(drain_unread_body)  # ... but a refused one is dropped, so that a proxy reads the refusal
    pages.register(flask, config)  # the pages people read (api/pages), after the API's own checks
    _register_docs(flask)
    return flask


SWAGGER_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>tramita API</title>
<link rel="stylesheet" href="/docs/static/swagger-ui.css"></head>
<body><div id="swagger-ui"></div>
<script src="/docs/static/swagger-ui-bundle.js"></script>
<script src="/docs/swagger-init.js"></script>
</body></html>
"""
#: `/docs` runs Swagger UI's script and style, from this site only (the bundle and api/static/swagger-init.js).
DOCS_POLICY = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; object-src 'none'; "
               "frame-ancestors 'none'; base-uri 'none'; form-action 'none'")
#: What a browser is shown of the API's own description: the viewer, its files and the OpenAPI document.
DOCS_ENDPOINTS = {"docs", "docs_static", "docs_init", "api-docs.openapi_json"}


def _register_docs(flask: Flask) -> None:
    """`/docs`: Swagger UI from the swagger-ui-bundle package, so it works with no network; it, its files and
    `/openapi.json` carry the pages' security headers (never framed, scripts and styles from this site only)."""
    from swagger_ui_bundle import swagger_ui_path

    from api import response_examples
    from api.pages.views import HERE, secure

    response_examples.register(flask, create_app)  # the document's response examples, on its first request
    flask.add_url_rule("/docs", "docs", lambda: Response(SWAGGER_PAGE, mimetype="text/html"))
    flask.add_url_rule("/docs/static/<path:filename>", "docs_static",
                       lambda filename: send_from_directory(swagger_ui_path, filename))
    flask.add_url_rule("/docs/swagger-init.js", "docs_init",
                       lambda: send_from_directory(HERE / "static", "swagger-init.js"))

    @flask.after_request
    def docs_headers(response: Response) -> Response:
        if request.endpoint in DOCS_ENDPOINTS:
            secure(response, DOCS_POLICY)
        return response
