"""The pages' views: parse the query, call one read, render a template. Signing in and out are here too.

Query parameters are Portuguese like the paths: `/processos?tipo=&fase=&municipio=&texto=&pagina=`,
`/processos/<número>?data=AAAA-MM-DD` (as of a legal date) or `?registrado_antes=AAAA-MM-DDTHH:MM` (as recorded
before a moment, Rio Branco time), `/prazos?orgao=&municipio=&situacao=&ate=`, `/municipios?texto=`.
"""

from __future__ import annotations

from datetime import date, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from flask import Blueprint, g, redirect, render_template, request, url_for
from flask_babel import gettext as _
from werkzeug.wrappers import Response

from api.fields import EARLIEST_DAY, LATEST_DAY
from api.http import read_store, settings, token_guess_wait, token_guessed_wrong, tramita
from api.i18n import LANGUAGE_COOKIE, PAGE_LOCALES, locale_name
from api.pages import axis, casefile, format as fmt, session
from api.pages.notice import read_model_notice
from domain.access import READ_ONLY_ROLES
from domain.application import LEGAL_TIMEZONE
from domain.case.kinds import KINDS
from domain.errors import AuthenticationError, CaseNotFoundError
from projections import queries

HERE = Path(__file__).resolve().parent.parent
pages = Blueprint("pages", __name__, template_folder=str(HERE / "templates"), static_folder=str(HERE / "static"),
                  static_url_path="/estatico")
#: Endpoints of the pages that need no session.
OPEN = {"pages.home", "pages.sign_in", "pages.static", "pages.verify"}  # verify: a printed dossier's code
PAGE = 50


class PageError(Exception):
    """A page asked with a value it cannot read: shown with its status, in the reader's language."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status, self.message = status, message


@pages.before_request
def require_session() -> Response | None:
    """Every page but the open ones: the session's token, authenticated again now (revoked or expired: the
    session ends and the reader is sent to sign in, with the page asked for kept as `proximo`)."""
    g.actor, had_session = None, session.signed_in_at() is not None
    token = session.token_of_session(tramita().clock())
    if token is not None:
        try:
            g.actor, g.token_id = tramita().actor_for(token)
        except AuthenticationError:
            pass
    if g.actor is None and had_session:
        session.end()  # expired, or its token revoked or expired: signed out at once
    if g.actor is None and request.endpoint not in OPEN:
        ended = {"motivo": "encerrada"} if had_session else {}
        return redirect(url_for("pages.home", proximo=request.full_path.rstrip("?"), **ended), 303)
    return None


#: What a page may load: its own script, style and images only, never framed, no form sent elsewhere.
PAGE_POLICY = ("default-src 'self'; img-src 'self' data:; object-src 'none'; frame-ancestors 'none'; "
               "base-uri 'none'; form-action 'self'")


def secure(response: Response, policy: str = PAGE_POLICY) -> Response:
    """The security headers of everything a browser shows from this site (the pages, `/docs`, `/openapi.json`):
    `policy` as Content-Security-Policy, never framed (X-Frame-Options for browsers without frame-ancestors),
    no type sniffing, no address sent to another site."""
    response.headers["Content-Security-Policy"] = policy
    response.headers["X-Frame-Options"] = "DENY"
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Referrer-Policy"] = "same-origin"
    return response


@pages.after_request
def page_headers(response: Response) -> Response:
    """Pages hold case data: never cached, never framed, no script or style from elsewhere; a `?lang=` kept."""
    response.headers["Cache-Control"] = "no-store"
    secure(response)
    response.headers["Content-Language"] = locale_name()
    chosen = request.args.get("lang")
    if chosen in PAGE_LOCALES:
        response.set_cookie(LANGUAGE_COOKIE, chosen, max_age=365 * 24 * 3600, samesite="Strict", httponly=True,
                            secure=request.is_secure)
    return response


@pages.errorhandler(PageError)
def page_error(error: PageError) -> tuple[str, int]:
    return render_template("error.html", message=error.message, status=error.status), error.status


@pages.errorhandler(CaseNotFoundError)
def case_not_found(error: CaseNotFoundError) -> tuple[str, int]:
    return render_template("error.html", message=_("There is no case %(case)s.", case=request.view_args.get(
        "number", "")), status=404), 404


@pages.app_context_processor
def page_context() -> dict[str, Any]:
    actor = getattr(g, "actor", None)
    return {"actor": actor, "read_only": actor is None or actor.role in READ_ONLY_ROLES, "fmt": fmt,
            "csrf_token": session.csrf_token, "lang": locale_name(), "locales": PAGE_LOCALES,
            "read_model_notice": read_model_notice}


def _safe_next(target: str | None) -> str:
    """Where to go after signing in: a path of this site only (never `//host` or `https://host`)."""
    if not target:
        return url_for("pages.cases")
    parts = urlsplit(target)
    if parts.scheme or parts.netloc or not target.startswith("/") or target.startswith("//") or "\\" in target \
            or not target.isprintable():  # no control character (CR, LF) reaches a Location header
        return url_for("pages.cases")
    return target


@pages.route("/", methods=["GET"], endpoint="home")
def home() -> str:
    return render_template("home.html", proximo=_safe_next(request.args.get("proximo")),
                           ended=request.args.get("motivo") == "encerrada")


@pages.route("/sessao", methods=["POST"], endpoint="sign_in")
def sign_in() -> Response | tuple[str, int]:
    """Sign in with a token (the form on `/`); an address that sent too many wrong tokens waits (429)."""
    if not session.csrf_holds():
        raise PageError(403, _("This form has expired or did not come from this site: open the page and try again."))
    token = request.form.get("token", "").strip()
    wait = token_guess_wait()  # sign-in checks a token as the API does: wrong ones are counted the same way
    if wait is not None:
        page = render_template("home.html", proximo=_safe_next(request.form.get("proximo")), refused=_(
            "Too many wrong tokens from this address: try again in %(seconds)s seconds", seconds=wait))
        return Response(page, 429, {"Retry-After": str(wait)}, mimetype="text/html")
    try:
        tramita().actor_for(token)
    except AuthenticationError:
        token_guessed_wrong()
        return render_template("home.html", proximo=_safe_next(request.form.get("proximo")),
                               refused=_("This token was not accepted: it is unknown, revoked or expired.")), 401
    session.start(token, tramita().clock())
    return redirect(_safe_next(request.form.get("proximo")), 303)


@pages.route("/sessao/sair", methods=["POST"], endpoint="sign_out")
def sign_out() -> Response:
    if not session.csrf_holds():
        raise PageError(403, _("This form has expired or did not come from this site: open the page and try again."))
    session.end()
    return redirect(url_for("pages.home"), 303)


def _within(day: date, raw: str) -> None:
    """The API's range of days (api/fields.py): beyond it a moment's conversion to another zone overflows."""
    if not EARLIEST_DAY <= day <= LATEST_DAY:
        raise PageError(400, _("%(value)s is outside %(earliest)s to %(latest)s.", value=raw,
                               earliest=EARLIEST_DAY.isoformat(), latest=LATEST_DAY.isoformat()))


def _day(name: str) -> date | None:
    raw = request.args.get(name, "").strip()
    if not raw:
        return None
    try:
        day = date.fromisoformat(raw)
    except ValueError:
        raise PageError(400, _("%(value)s is not a date (AAAA-MM-DD).", value=raw)) from None
    _within(day, raw)
    return day


def _moment(name: str) -> datetime | None:
    raw = request.args.get(name, "").strip()
    if not raw:
        return None
    try:
        moment = datetime.fromisoformat(raw)
    except ValueError:
        raise PageError(400, _("%(value)s is not a date and time (AAAA-MM-DDTHH:MM).", value=raw)) from None
    _within(moment.date(), raw)
    return moment if moment.tzinfo else moment.replace(tzinfo=LEGAL_TIMEZONE)


def _choice(name: str, allowed: tuple[str, ...] | list[str] | set[str]) -> str | None:
    value = request.args.get(name, "").strip() or None
    if value is not None and value not in allowed:
        raise PageError(400, _("%(value)s is not a value of %(field)s.", value=value, field=name))
    return value


def _page() -> int:
    raw = request.args.get("pagina", "1").strip()
    if not raw.isascii() or not raw.isdigit() or not 1 <= int(raw) <= 100_000:
        raise PageError(400, _("%(value)s is not a page number.", value=raw))
    return int(raw)


@pages.route("/processos", methods=["GET"], endpoint="cases")
def cases() -> str:
    page = _page()
    query = {"kind": _choice("tipo", KINDS), "stage": _choice("fase", fmt.STAGES.keys()),
             "municipality": request.args.get("municipio", "").strip() or None,
             "text": request.args.get("texto", "").strip()[:200] or None}
    found = queries.cases(read_store(), **query, limit=PAGE + 1, offset=(page - 1) * PAGE)
    return render_template("cases.html", cases=found[:PAGE], page=page, more=len(found) > PAGE, query=query,
                           kinds=KINDS, stages=fmt.STAGES, municipalities=queries.municipalities(read_store()))


@pages.route("/processos/<number>", methods=["GET"], endpoint="case")
def case(number: str) -> str:
    as_of, recorded_before = _day("data"), _moment("registrado_antes")
    if as_of and recorded_before:
        raise PageError(400, _("Ask for a legal date or for a recording time, not both."))
    found = casefile.case_file(number, g.actor, as_of=as_of, recorded_before=recorded_before)
    return render_template("case.html", f=found, axis=axis.deadline_axis(found["deadlines"], found["day_of_view"],
                                                                        found["words"]))


@pages.route("/prazos", methods=["GET"], endpoint="deadlines")
def deadlines() -> str:
    query = {"who": request.args.get("orgao", "").strip() or None,
             "municipality": request.args.get("municipio", "").strip() or None,
             "status": _choice("situacao", queries.DEADLINE_STATUSES), "due_before": _day("ate")}
    today = tramita().today()
    rows = queries.deadlines(read_store(), today=today, due_soon_days=settings()["due_soon_days"],
                             status=query["status"], due_before=query["due_before"], limit=5000)
    rows = [r for r in rows if (not query["who"] or r["who"] == query["who"])
            and (not query["municipality"] or r["municipality"] == query["municipality"])]
    months: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        months.setdefault((row["due_on"] or "")[:7], []).append(row)
    registry = queries.municipalities(read_store())
    return render_template("deadlines.html", months=months, query=query, today=today, roles=fmt.ROLES,
                           statuses=fmt.DEADLINE_STATUSES, municipalities=registry,
                           names={m["code"]: m["name"] for m in registry})


@pages.route("/alertas", methods=["GET"], endpoint="alerts")
def alerts() -> str:
    found = queries.alerts(read_store(), limit=1000)
    names = {m["code"]: m["name"] for m in queries.municipalities(read_store())}
    return render_template("alerts.html", alerts=list(reversed(found)), names=names)


@pages.route("/municipios", methods=["GET"], endpoint="municipalities")
def municipalities() -> str:
    text = request.args.get("texto", "").strip()[:200] or None
    return render_template("municipalities.html", municipalities=queries.municipalities(read_store(), text=text),
                           text=text or "")


@pages.route("/municipios/<code>", methods=["GET"], endpoint="municipality")
def municipality(code: str) -> str:
    found = queries.municipality(read_store(), code)
    if found is None:
        raise PageError(404, _("There is no municipality %(code)s in the registry.", code=code))
    return render_template("municipality.html", m=found, freezes=queries.freezes(read_store(), municipality=code),
                           cases=queries.cases(read_store(), municipality=code))


def set_language_link(lang: str) -> str:
    args = {**request.args, "lang": lang}
    return url_for(request.endpoint or "pages.home", **(request.view_args or {}), **args)


pages.add_app_template_global(set_language_link, "language_link")
