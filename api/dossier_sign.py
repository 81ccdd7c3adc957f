"""The dossier's digital signature: a PAdES signature (pyHanko) with the deployment's certificate, so that a
Tribunal de Contas files a signed document, as SEI's are.

Configured by `TRAMITA_DOSSIER_CERT` (a PKCS#12 file: the certificate, its key and its chain; in production an
ICP-Brasil certificate of the body) and `TRAMITA_DOSSIER_CERT_PASSWORD_FILE` (a file holding its password, so that
the password is in no environment or command line). Without a certificate the dossier is delivered unsigned and
its cover says so. The signature is an incremental update after the PDF/A's last byte: the signed file is the
PDF/A with one invisible signature field, its signing time in the signature dictionary (/M) and in the CMS
signed attributes.
"""

from __future__ import annotations

import io
from collections.abc import Mapping
from pathlib import Path
from typing import Any

#: The signature field every signed dossier carries.
FIELD = "AssinaturaDossie"


class DossierSigner:
    """Signs finished dossiers with one PKCS#12 certificate (loaded once, when the app is made)."""

    def __init__(self, pkcs12: Path, password_file: Path | None) -> None:
        from pyhanko.sign import signers  # imported only where a certificate is configured: it is a large import

        password = password_file.read_bytes().rstrip(b"\r\n") if password_file is not None else None
        loaded = signers.SimpleSigner.load_pkcs12(pfx_file=str(pkcs12), passphrase=password)
        if loaded is None:
            raise ValueError(f"TRAMITA_DOSSIER_CERT: {pkcs12} cannot be read as PKCS#12 with the password given "
                             "(TRAMITA_DOSSIER_CERT_PASSWORD_FILE)")
        self.signer: Any = loaded
        self.subject = loaded.signing_cert.subject.human_friendly

    def sign(self, pdf: bytes) -> bytes:
        """The PDF with a PAdES baseline signature appended (SHA-256, signing time now)."""
        from pyhanko.pdf_utils.incremental_writer import IncrementalPdfFileWriter
        from pyhanko.sign import fields, signers

        writer = IncrementalPdfFileWriter(io.BytesIO(pdf))
        meta = signers.PdfSignatureMetadata(field_name=FIELD, md_algorithm="sha256",
                                            subfilter=fields.SigSeedSubFilter.PADES, location="Rio Branco, AC",
                                            reason="Dossiê do processo (LC 35/1991, Acre)")
        return signers.sign_pdf(writer, meta, signer=self.signer).getvalue()


def signer_from(config: Mapping[str, str]) -> DossierSigner | None:
    """The signer `TRAMITA_DOSSIER_CERT` names, or None when none is configured (dossiers delivered unsigned). A
    certificate that cannot be read stops the app at its start rather than at the first dossier."""
    certificate = (config.get("TRAMITA_DOSSIER_CERT") or "").strip()
    if not certificate:
        return None
    password = (config.get("TRAMITA_DOSSIER_CERT_PASSWORD_FILE") or "").strip()
    return DossierSigner(Path(certificate), Path(password) if password else None)
