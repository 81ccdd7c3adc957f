"""`/verificar/<código>`: the public page a printed case file's code opens, with no session, so that anyone holding
a paper copy (a Tribunal de Contas, a citizen) can check it: the SHA-256 of the file as it was delivered (after its
signature), the case, when it was issued and by whom it was asked, the signed checkpoint it was issued against, and
the case's verdict now. The issuance is an event of the log (domain/dossiers.py), read here; a code never issued is
a 404 page."""

from __future__ import annotations

from flask import current_app, render_template
from flask_babel import gettext as _

from api.pages.views import PageError, pages
from audit.dossier import issued
from domain.dossiers import normal_code


@pages.route("/verificar/<codigo>", endpoint="verify")
def verify(codigo: str) -> str:
    code = normal_code(codigo)
    found = issued(current_app.extensions["tramita.audit"], code) if code is not None else None
    if found is None:
        raise PageError(404, _("No case file was issued with the verification code %(code)s.", code=codigo[:40]))
    return render_template("verify.html", issue=found)
