"""The signed case file: with `TRAMITA_DOSSIER_CERT` (a PKCS#12 from a test CA the tests make) every demo case's
dossier carries a PAdES signature with a signing time that pyHanko's validator and poppler's `pdfsig` (with the test
CA in its NSS database) find intact and trusted, its cover says it is signed, and the PDF/A's attached documents are
still inside; without a certificate the cover says the file is not signed and pdfsig finds no signature."""

from __future__ import annotations

import io
import shutil
import subprocess
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from asn1crypto import x509 as asn1_x509
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import pkcs12
from cryptography.x509.oid import NameOID
from pypdf import PdfReader
from pyhanko.pdf_utils.reader import PdfFileReader
from pyhanko.sign.validation import validate_pdf_signature
from pyhanko_certvalidator import ValidationContext

from audit.demo_files import seed_demo_with_documents
from audit.notes import Signer
from tests.api_client import ApiHarness
from tests.test_api_walk import open_1991_petition
from tests.test_dossier import ORIGIN, demo_numbers, dossier_of, pdf_text

PASSWORD = "senha de teste do dossiê"


def name(common: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COUNTRY_NAME, "BR"),
                      x509.NameAttribute(NameOID.ORGANIZATION_NAME, "tramita (teste)"),
                      x509.NameAttribute(NameOID.COMMON_NAME, common)])


def make_ca(folder: Path) -> tuple[x509.Certificate, Path]:
    """A test CA and a leaf for signing documents (digital signature, non-repudiation), the leaf, its key and
    the CA in a PKCS#12 file protected by PASSWORD."""
    now = datetime.now(timezone.utc)
    ca_key, leaf_key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca = (x509.CertificateBuilder().subject_name(name("AC de teste")).issuer_name(name("AC de teste"))
          .public_key(ca_key.public_key()).serial_number(x509.random_serial_number())
          .not_valid_before(now - timedelta(days=1)).not_valid_after(now + timedelta(days=30))
          .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
          .add_extension(x509.KeyUsage(digital_signature=False, content_commitment=False, key_encipherment=False,
                                       data_encipherment=False, key_agreement=False, key_cert_sign=True,
                                       crl_sign=True, encipher_only=False, decipher_only=False), critical=True)
          .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
          .sign(ca_key, hashes.SHA256()))
    leaf = (x509.CertificateBuilder().subject_name(name("Assembleia Legislativa do Acre (teste)"))
            .issuer_name(ca.subject).public_key(leaf_key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - timedelta(days=1)).not_valid_after(now + timedelta(days=30))
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.KeyUsage(digital_signature=True, content_commitment=True, key_encipherment=False,
                                         data_encipherment=False, key_agreement=False, key_cert_sign=False,
                                         crl_sign=False, encipher_only=False, decipher_only=False), critical=True)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
            .sign(ca_key, hashes.SHA256()))
    bundle = folder / "dossier.p12"
    bundle.write_bytes(pkcs12.serialize_key_and_certificates(
        b"dossier", leaf_key, leaf, [ca], serialization.BestAvailableEncryption(PASSWORD.encode())))
    return ca, bundle


@pytest.fixture(scope="module")
def signed(tmp_path_factory: pytest.TempPathFactory):  # noqa: ANN201
    """The demo on a deployment whose dossiers are signed with a certificate of the test CA."""
    folder = tmp_path_factory.mktemp("signed")
    ca, bundle = make_ca(folder)
    (folder / "password").write_text(PASSWORD + "\n", encoding="utf-8")
    harness = ApiHarness(f"sqlite:///{folder / 'tramita.sqlite'}", signer=Signer.generate(ORIGIN),
                         config={"TRAMITA_DOSSIER_CERT": str(bundle),
                                 "TRAMITA_DOSSIER_CERT_PASSWORD_FILE": str(folder / "password")})
    seed_demo_with_documents(harness.app, harness.flask.extensions["tramita.documents"], say=lambda _: None)
    harness.projector.catch_up()
    harness.flask.extensions["tramita.audit"].sign_checkpoint()
    harness.ca, harness.folder = ca, folder
    yield harness
    harness.close()


def test_every_demo_dossier_is_signed_and_pyhanko_finds_the_signature_intact_and_trusted_by_the_test_ca(signed):
    trusted = ValidationContext(trust_roots=[asn1_x509.Certificate.load(
        signed.ca.public_bytes(serialization.Encoding.DER))])
    for number in demo_numbers(signed):
        pdf = dossier_of(signed, number).data
        [signature] = PdfFileReader(io.BytesIO(pdf)).embedded_signatures
        status = validate_pdf_signature(signature, trusted)
        assert status.intact and status.valid and status.trusted, status.pretty_print_details()
        assert status.coverage.name == "ENTIRE_FILE" and status.signer_reported_dt is not None
        assert signature.sig_object["/SubFilter"] == "/ETSI.CAdES.detached"
        assert "assinado digitalmente (PAdES)" in pdf_text(pdf)[0]
        read = PdfReader(io.BytesIO(pdf))
        if number == "LC35-1991-0001":  # the documents its acts attach are still inside the signed PDF/A
            assert len(read.trailer["/Root"]["/AF"]) == 3
        xmp = read.trailer["/Root"]["/Metadata"].get_object().get_data().decode()
        assert 'pdfaid:part="3"' in xmp and f'pdf:Producer="{read.metadata["/Producer"]}"' in xmp  # PDF/A: equal


def test_pdfsig_finds_the_signature_valid_and_its_certificate_trusted_with_the_test_ca_in_its_database(signed):
    pdfsig, certutil = shutil.which("pdfsig"), shutil.which("certutil")
    if pdfsig is None or certutil is None:
        pytest.skip("pdfsig (poppler-utils) or certutil (libnss3-tools) is not installed; .ci/run installs them")
    database = signed.folder / "nss"
    database.mkdir()
    (signed.folder / "ca.pem").write_bytes(signed.ca.public_bytes(serialization.Encoding.PEM))
    subprocess.run([certutil, "-N", "-d", f"sql:{database}", "--empty-password"], check=True, timeout=60)
    subprocess.run([certutil, "-A", "-d", f"sql:{database}", "-n", "AC de teste", "-t", "C,C,C", "-i",
                    str(signed.folder / "ca.pem")], check=True, timeout=60)
    for number in demo_numbers(signed):
        path = signed.folder / f"{number}.pdf"
        path.write_bytes(dossier_of(signed, number).data)
        checked = subprocess.run([pdfsig, "-nssdir", f"sql:{database}", str(path)], capture_output=True,
                                 text=True, timeout=120)
        assert "Signature is Valid." in checked.stdout, checked.stdout + checked.stderr
        assert "Certificate is Trusted." in checked.stdout, checked.stdout
        assert "Signing Time:" in checked.stdout and "Assembleia Legislativa do Acre (teste)" in checked.stdout
        qpdf = shutil.which("qpdf")
        if qpdf is not None:  # the signature's incremental update leaves a file qpdf finds no error in
            structure = subprocess.run([qpdf, "--check", str(path)], capture_output=True, text=True, timeout=120)
            assert structure.returncode == 0, structure.stdout + structure.stderr


def test_without_a_certificate_the_dossier_is_unsigned_and_its_cover_says_so(tmp_path):
    api = ApiHarness(f"sqlite:///{tmp_path / 'tramita.sqlite'}", signer=Signer.generate(ORIGIN))
    try:
        pdf = dossier_of(api, open_1991_petition(api)["number"]).data
        assert not PdfFileReader(io.BytesIO(pdf)).embedded_signatures
        assert "não é assinado digitalmente" in " ".join(pdf_text(pdf)[0].split())
    finally:
        api.close()


def test_a_certificate_that_cannot_be_read_with_its_password_stops_the_app_at_its_start(tmp_path):
    _, bundle = make_ca(tmp_path)
    (tmp_path / "password").write_text("outra senha", encoding="utf-8")
    with pytest.raises(ValueError, match="TRAMITA_DOSSIER_CERT"):
        ApiHarness(f"sqlite:///{tmp_path / 'tramita.sqlite'}",
                   config={"TRAMITA_DOSSIER_CERT": str(bundle),
                           "TRAMITA_DOSSIER_CERT_PASSWORD_FILE": str(tmp_path / "password")})
