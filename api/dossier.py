"""`GET /cases/{id}/dossier.pdf`: the printable case file, in Portuguese, to attach to a Tribunal de Contas
process. The view asks the audit service for the dossier's data (audit/dossier.py) and renders it
(api/dossier_pdf.py, which says what a rendering costs and how a process protects itself from many)."""

from __future__ import annotations

import base64
import io
import re
from typing import Any

import segno
from flask import Response, current_app, g
from flask_smorest import Blueprint

from api.dossier_pdf import RETRY_AFTER, Attached, Busy, Renderer, Seal, render
from api.errors import Problem
from api.http import errors_doc, settings
from audit.documents import EXTENSIONS, DocumentAlteredError
from audit.dossier import fingerprint, issue
from domain.dossiers import new_code
from projections.queries import case_deadlines

blp = Blueprint("dossier", __name__, description="The printable case file (PDF, pt-BR)")
blp.record_once(lambda state: state.app.extensions.setdefault("tramita.dossier", Renderer()))

PDF_DOC = {"content": {"application/pdf": {"schema": {"type": "string", "format": "binary"}}},
           "headers": {"Content-Disposition": {"schema": {"type": "string"},
                                               "description": 'attachment; filename="<número do processo>.pdf"'}}}


@blp.route("/cases/<case_ref>/dossier.pdf", methods=["GET"], endpoint="case_dossier")
@errors_doc([401, 404, 503], summary="The case file as a PDF in Portuguese: cover, timeline of acts with their "
                                     "chain hashes, deadlines, documents, the case's verdict and the latest "
                                     "signed checkpoint")
@blp.doc(responses={200: {"description": "the dossier (application/pdf)", **PDF_DOC}})
def case_dossier(case_ref: str) -> Response:
    audit = current_app.extensions["tramita.audit"]
    dossier = audit.dossier(case_ref, due_soon_days=settings()["due_soon_days"], deadlines=case_deadlines)
    signer, actor, files = current_app.extensions.get("tramita.dossier_signer"), g.actor, attached(dossier)

    def make() -> bytes:
        """Lay the dossier out under a new code, sign it when a certificate is configured, record its issuance."""
        code = new_code()
        pdf = render(dossier, files=files, seal=seal_for(code), signed=signer is not None)
        if signer is not None:
            pdf = signer.sign(pdf)
        issue(audit, dossier, code=code, pdf=pdf, signed=signer is not None, actor=actor)
        return pdf

    try:
        pdf = current_app.extensions["tramita.dossier"].pdf(fingerprint(dossier), make)
    except Busy:
        raise Problem(503, "outro dossiê está sendo gerado por este processo; tente de novo em alguns segundos "
                      "(another dossier is being rendered)", kind="dossier-busy",
                      headers={"Retry-After": str(RETRY_AFTER)}) from None
    filename = re.sub(r"[^A-Za-z0-9._-]", "_", dossier["case"]["number"]) + ".pdf"
    return Response(pdf, mimetype="application/pdf",
                    headers={"Content-Disposition": f'attachment; filename="{filename}"'})


#: The public page a verification code opens (api/pages/verify.py), under TRAMITA_PUBLIC_URL.
VERIFY_PATH = "/verificar/"


def seal_for(code: str) -> Seal:
    """What every sheet prints for `code`: the public page's address and a QR code of it (segno, as SVG, sized in
    millimetres for the sheet's footer)."""
    url = settings()["public_url"] + VERIFY_PATH + code
    svg = io.BytesIO()
    segno.make(url, error="m").save(svg, kind="svg", scale=0.45, unit="mm", border=1, xmldecl=False)
    return Seal(code=code, url=url, qr="data:image/svg+xml;base64," + base64.b64encode(svg.getvalue()).decode())


def attached(dossier: dict[str, Any]) -> list[Attached]:
    """The documents the case's acts attach, with their stored bytes, once each (first citing act), to go inside
    the PDF/A. One whose stored bytes were altered or removed is left out (reading it raised the store's alarm);
    the dossier's table says it is not attached."""
    documents = current_app.extensions.get("tramita.documents")
    found: dict[str, Attached] = {}
    for row in dossier["documents"]:
        digest = row["sha256"]
        if documents is None or not digest or digest in found:
            continue
        try:
            stored = documents.store.read(digest)
        except DocumentAlteredError:
            continue
        if stored is None:
            continue
        described, content = stored
        name = re.sub(r"[^\w.]+", "-", row["reference"] or digest[:16]).strip("-")
        extension = "." + EXTENSIONS.get(described.type, "bin")
        found[digest] = Attached(sha256=digest, name=name if name.endswith(extension) else name + extension,
                                 media_type=described.type, content=content,
                                 cited_by=f"{row['label']} (evento {row['sequence']})")
    return list(found.values())
