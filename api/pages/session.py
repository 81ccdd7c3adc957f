"""Signing in to the pages with a token, and the session that keeps it.

The reader pastes a token (the same `trm_…` bearer token the JSON API takes) into the form on `/`, which posts the
field `token` to `POST /sessao`. The session is Flask's signed cookie `tramita_sessao`, HttpOnly, SameSite=Strict,
Secure whenever the request came over https (as Werkzeug sees it: behind nginx, gunicorn sets the scheme from
`X-Forwarded-Proto` for a proxy it trusts, its `forwarded_allow_ips`). The cookie never holds the token readably:
the token is encrypted (Fernet, a key derived from the session key) inside the signed cookie, and on every page
it is decrypted and authenticated again exactly as a bearer token is, so a revoked or expired token loses its
session at once. A session lasts TRAMITA_SESSION_HOURS (default 8) from the sign-in, however active it is; then
the reader signs in again.

Signing out ends the session on the server too: each session has a random id in the signed cookie, and signing out
(or signing in again over it) records that id in the table `ended_sessions` of the read models' database until the
session would have expired anyway (then the row is pruned). A cookie whose id is recorded there is refused as
signed out, on the pages and on the API's reads alike, so a copy of the cookie kept after signing out is worth
nothing. A database administrator who deletes the row revives the session until it expires: the cookie's own
signature and lifetime still bind it, and the token is authenticated again on every request.

The session key is TRAMITA_SESSION_KEY, a file holding random bytes (default `var/tramita-session.key`, created
0600 at the first sign-in, refused when others can read it). Every worker of a deployment reads the same file, so
a session signed by one is read by all; replacing the file ends every session.

Every form that writes (sign-in, sign-out) carries a CSRF token, kept in the session and compared in constant time.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import math
import secrets
import threading
from collections.abc import Mapping
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from cryptography.fernet import Fernet, InvalidToken
from flask import Flask, Request, current_app, request, session
from flask.sessions import SecureCookieSession, SecureCookieSessionInterface

from audit.keys import read_private, write_private

COOKIE = "tramita_sessao"
DEFAULT_KEY_FILE = "var/tramita-session.key"
DEFAULT_HOURS = "8"
#: The longest session the setting accepts: a month.
MAX_HOURS = 24 * 31
KEY_BYTES = 32
CSRF_FIELD = "csrf"


class SessionKeyError(Exception):
    """The session key file is unreadable, malformed or readable by others."""


def session_settings(config: Mapping[str, str]) -> dict[str, Any]:
    """TRAMITA_SESSION_HOURS and TRAMITA_SESSION_KEY, checked; a bad value is refused naming its variable."""
    raw = config.get("TRAMITA_SESSION_HOURS", DEFAULT_HOURS).strip()
    if not raw.isascii() or not raw.isdigit() or not 1 <= int(raw) <= MAX_HOURS:
        raise ValueError(f"TRAMITA_SESSION_HOURS: {raw!r} is not a whole number of hours from 1 to {MAX_HOURS}")
    key = config.get("TRAMITA_SESSION_KEY", "").strip() or DEFAULT_KEY_FILE
    return {"lifetime": timedelta(hours=int(raw)), "key_file": Path(key)}


class SessionKey:
    """The session key, read (or created 0600) on first use, so that a process serving only the JSON API never
    touches the file."""

    def __init__(self, path: Path) -> None:
        self.path, self._key, self._lock = path, None, threading.Lock()

    def value(self) -> bytes:
        with self._lock:
            if self._key is None:
                self._key = self._read() if self.path.exists() else self._create()
            return self._key

    def _create(self) -> bytes:
        self.path.parent.mkdir(parents=True, mode=0o700, exist_ok=True)
        key = secrets.token_bytes(KEY_BYTES)
        try:
            write_private(self.path, base64.b64encode(key).decode("ascii") + "\n")
        except FileExistsError:  # another worker made it first: use theirs
            return self._read()
        return key

    def _read(self) -> bytes:
        try:
            text = read_private(self.path, "TRAMITA_SESSION_KEY", SessionKeyError).strip()
        except FileNotFoundError as error:
            raise SessionKeyError(f"TRAMITA_SESSION_KEY: cannot read {self.path}: {error}") from None
        try:
            key = base64.b64decode(text, validate=True)
        except ValueError:
            key = b""
        if len(key) < KEY_BYTES:
            raise SessionKeyError(f"TRAMITA_SESSION_KEY: {self.path} does not hold a session key "
                                  f"({KEY_BYTES} random bytes, base64)")
        return key

    def derived(self, purpose: str) -> bytes:
        return hmac.new(self.value(), purpose.encode("ascii"), hashlib.sha256).digest()


class SessionInterface(SecureCookieSessionInterface):
    """Flask's signed cookie session, keyed by the session key (read only when a cookie is sent or a session is
    saved), Secure under https."""

    salt = "tramita-pages-session"

    def __init__(self, key: SessionKey) -> None:
        self.key = key

    def get_signing_serializer(self, app: Flask):  # noqa: ANN201 - Flask's hook
        from itsdangerous import URLSafeTimedSerializer

        return URLSafeTimedSerializer(self.key.derived("cookie"), salt=self.salt, serializer=self.serializer,
                                      signer_kwargs={"key_derivation": "hmac", "digest_method": hashlib.sha256})

    def open_session(self, app: Flask, request: Request) -> SecureCookieSession | None:
        if not request.cookies.get(self.get_cookie_name(app)):
            return self.session_class()  # nothing to read: the key is not needed yet
        return super().open_session(app, request)

    def get_cookie_secure(self, app: Flask) -> bool:
        return request.is_secure


def register(flask: Flask, config: Mapping[str, str]) -> None:
    """The session on the app: the cookie's name, flags and lifetime (the cookie's `Expires` and the signature's
    age limit; `signed_in_at` in the session enforces it against the application's clock too)."""
    settings = session_settings(config)
    key = SessionKey(settings["key_file"])
    flask.session_interface = SessionInterface(key)
    flask.extensions["tramita.pages"] = {"lifetime": settings["lifetime"], "key": key}
    flask.config.update(SESSION_COOKIE_NAME=COOKIE, SESSION_COOKIE_HTTPONLY=True, SESSION_COOKIE_SAMESITE="Strict",
                        SESSION_COOKIE_PATH="/", PERMANENT_SESSION_LIFETIME=settings["lifetime"],
                        SESSION_REFRESH_EACH_REQUEST=False)


def lifetime() -> timedelta:
    return current_app.extensions["tramita.pages"]["lifetime"]


def _fernet() -> Fernet:
    key = current_app.extensions["tramita.pages"]["key"]
    return Fernet(base64.urlsafe_b64encode(key.derived("token")))


def csrf_token() -> str:
    """The CSRF token of this reader's session (made when first asked: the sign-in form's comes before any
    sign-in)."""
    if CSRF_FIELD not in session:
        session[CSRF_FIELD] = secrets.token_urlsafe(32)
    return session[CSRF_FIELD]


def csrf_holds() -> bool:
    """Does the form's CSRF token match the session's?"""
    sent, kept = request.form.get(CSRF_FIELD, ""), session.get(CSRF_FIELD, "")
    return bool(kept) and hmac.compare_digest(sent.encode("utf-8", "replace"), kept.encode("utf-8", "replace"))


def start(token: str, now: datetime) -> None:
    """A new session for `token` (already authenticated): the previous session of this browser ended on the server
    and everything of it dropped, a new id, a new CSRF token (a token planted before the sign-in is worth nothing
    after it). When it ends is fixed now: raising TRAMITA_SESSION_HOURS later lengthens only the sessions after."""
    end(now)
    session.permanent = True
    session["token"] = _fernet().encrypt(token.encode("utf-8")).decode("ascii")
    session["signed_in_at"] = now.timestamp()
    session["id"] = secrets.token_urlsafe(24)
    session["ends_at"] = (now + lifetime()).timestamp()
    session[CSRF_FIELD] = secrets.token_urlsafe(32)


def end(now: datetime | None = None) -> None:
    """End the session: on the server (its id recorded as ended until it would have expired anyway, the ended ones
    whose time has passed pruned), then in this browser. Signing out, signing in again, and a session whose token
    no longer holds all end here; one that has expired or has no id needs no record."""
    now = now if now is not None else current_app.extensions["tramita"].clock()
    session_id, ends_at = session.get("id"), session.get("ends_at")
    if isinstance(session_id, str) and isinstance(ends_at, (int, float)) and now.timestamp() < ends_at:
        # One statement each, committed on its own: the read models' connection is shared by the worker's threads.
        store = current_app.extensions["tramita.store"]
        store.query("INSERT INTO ended_sessions (session_id, ends_at) VALUES (?, ?) ON CONFLICT (session_id) "
                    "DO NOTHING", (session_id, math.ceil(ends_at)))
        store.query("DELETE FROM ended_sessions WHERE ends_at <= ?", (math.floor(now.timestamp()),))
    session.clear()


def _ended(session_id: str) -> bool:
    store = current_app.extensions["tramita.store"]
    return bool(store.query("SELECT 1 FROM ended_sessions WHERE session_id = ?", (session_id,)))


def token_of_session(now: datetime) -> str | None:
    """The token this session was started with, while the session lasts; None when there is none, it is no
    longer readable (another key), it has outlived its lifetime, it was signed out (its id is in `ended_sessions`)
    or it has no id (a cookie from before sessions had one)."""
    sealed, since = session.get("token"), session.get("signed_in_at")
    session_id, ends_at = session.get("id"), session.get("ends_at")
    if not isinstance(sealed, str) or not isinstance(since, (int, float)) or not isinstance(session_id, str) \
            or not isinstance(ends_at, (int, float)):
        return None
    if now.timestamp() - since >= lifetime().total_seconds() or now.timestamp() >= ends_at:
        return None
    if _ended(session_id):
        return None
    try:
        return _fernet().decrypt(sealed.encode("ascii")).decode("utf-8")
    except (InvalidToken, UnicodeError):
        return None


def signed_in_at() -> float | None:
    return session.get("signed_in_at")
