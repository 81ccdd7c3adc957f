"""Benchmark: the printable case file (`GET /cases/{id}/dossier.pdf`: a PDF/A-3b, sealed with a verification code
and signed with PAdES) of a long case, against the JSON timeline of the same case (`GET /cases/{id}/events`), on
SQLite, through the Flask app in-process.

Usage: python bench/dossier.py [--events E] [--repeat R]

What is measured
----------------
0. Set-up (untimed). A fresh SQLite file in a temporary folder; a `Tramita` application whose events are signed
   (a key made for the run), with a fixed clock (2026-11-30 12:00 UTC), the registry seeded, the read models
   and the audit tree migrated; one voters' creation grown by `bench/record_acts.py`'s Art. 10 cycles (the Mesa's
   requisition, its receipt, the body's finding: each cycle also opens and closes a deadline) to at least E
   events (default 1,000); the projector catches up and a checkpoint is signed over the whole log; an auditor's
   token; a self-signed certificate (EC P-256, made for the run) as the deployment's TRAMITA_DOSSIER_CERT.

1. The JSON timeline (the baseline): `GET /cases/{number}/events`, R times (default 3).

2. The dossier: `GET /cases/{number}/dossier.pdf`, R times, each on an empty dossier cache (a new renderer per
   request), so each is gathered and rendered whole: the verdict, the parts laid out one by one and joined, the
   PAdES signature, the issuance recorded. The pages and bytes of the PDF are printed, and the process's peak
   resident memory after it.

3. Once, the same dossier laid out as one part (`api.dossier_pdf.render` with no limit on a part's rows), the
   peak resident memory after it: what the parts save.

The medians are printed (`time.perf_counter`), with the process's CPU time of each request beside them
(`time.process_time`: steadier than the wall clock on a loaded machine), and the last line is `ratio: <dossier
median ÷ events median>`.
There is no goal: the ratio says what one PDF costs in JSON reads of the same case, the figure to weigh when
deciding how many rendering slots a process has (api/dossier_pdf.py RENDERS).
"""

from __future__ import annotations

import argparse
import resource
import statistics
import tempfile
import time
from datetime import date, datetime, timedelta, timezone

from record_acts import GrowingCase

from tramita.web import create_app
from api.dossier_pdf import Renderer, render
from audit.notes import Signer
from domain.acts import Actor
from domain.application import Tramita
from projections.projector import Projector
from infrastructure.store import open_store
from infrastructure.persistence import persistence_env
from projections.queries import case_deadlines

NOW = datetime(2026, 11, 30, 12, tzinfo=timezone.utc)
SEED_ACTOR, SEED_DAY = Actor("ibge-bench", "ibge"), date(1991, 12, 18)
OPENED_ON = date(2014, 1, 2)
ADMIN = Actor("bench-admin@cli", "token-administrator")


def certificate(folder: str) -> dict[str, str]:
    """A self-signed signing certificate in a PKCS#12 file and its password file: the settings that sign dossiers."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.hazmat.primitives.serialization import pkcs12
    from cryptography.x509.oid import NameOID

    key, subject = ec.generate_private_key(ec.SECP256R1()), x509.Name([
        x509.NameAttribute(NameOID.COMMON_NAME, "tramita bench")])
    usage = x509.KeyUsage(digital_signature=True, content_commitment=True, key_encipherment=False,
                          data_encipherment=False, key_agreement=False, key_cert_sign=False, crl_sign=False,
                          encipher_only=False, decipher_only=False)
    cert = (x509.CertificateBuilder().subject_name(subject).issuer_name(subject).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(NOW - timedelta(days=1))
            .not_valid_after(datetime.now(timezone.utc) + timedelta(days=1)).add_extension(usage, critical=True)
            .sign(key, hashes.SHA256()))
    with open(f"{folder}/dossier.p12", "wb") as out:
        out.write(pkcs12.serialize_key_and_certificates(b"bench", key, cert, None,
                                                        serialization.BestAvailableEncryption(b"bench")))
    with open(f"{folder}/password", "w", encoding="utf-8") as out:
        out.write("bench\n")
    return {"TRAMITA_DOSSIER_CERT": f"{folder}/dossier.p12", "TRAMITA_DOSSIER_CERT_PASSWORD_FILE": f"{folder}/password"}


def peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1000, help="events of the case (default 1000)")
    parser.add_argument("--repeat", type=int, default=3, help="timed requests of each kind (default 3)")
    args = parser.parse_args(argv)
    if args.events < 10 or args.repeat < 1:
        parser.error("--events must be at least 10 and --repeat at least 1")
    return args


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="tramita-bench-dossier-") as folder:
        url = f"sqlite:///{folder}/dossier.sqlite"
        app = Tramita(persistence_env(url), clock=lambda: NOW, signer=Signer.generate("bench.tramita/acre"))
        store = open_store(url)
        projector = Projector(app, store)
        projector.migrate()
        codes = app.seed_registry(SEED_ACTOR, SEED_DAY)
        case = GrowingCase(app, codes[0], 0, OPENED_ON)
        while case.length() < args.events:
            case.cycle()
        projector.catch_up()
        flask = create_app({"TRAMITA_DATABASE_URL": url, **certificate(folder)}, application=app)
        flask.extensions["tramita.audit"].sign_checkpoint()
        token = app.issue_token(ADMIN, name="bench-auditor", role="auditor", municipality=None).token
        client, headers = flask.test_client(), {"Authorization": f"Bearer {token}"}
        try:
            before = peak_mib()
            times: dict[str, list[float]] = {"events": [], "dossier": []}
            cpu: dict[str, list[float]] = {"events": [], "dossier": []}
            for _ in range(args.repeat):
                start, start_cpu = time.perf_counter(), time.process_time()
                events = client.get(f"/cases/{case.number}/events", headers=headers)
                times["events"].append(time.perf_counter() - start)
                cpu["events"].append(time.process_time() - start_cpu)
                assert events.status_code == 200, events.get_data(as_text=True)[:300]
                flask.extensions["tramita.dossier"] = Renderer()  # nothing cached: gathered and rendered whole
                start, start_cpu = time.perf_counter(), time.process_time()
                pdf = client.get(f"/cases/{case.number}/dossier.pdf", headers=headers)
                times["dossier"].append(time.perf_counter() - start)
                cpu["dossier"].append(time.process_time() - start_cpu)
                assert pdf.status_code == 200, pdf.get_data(as_text=True)[:300]
            parts_peak = peak_mib()
            dossier = flask.extensions["tramita.audit"].dossier(case.number, due_soon_days=5, deadlines=case_deadlines)
            start = time.perf_counter()
            whole = render(dossier, rows_per_part=10**9)
            whole_seconds, whole_peak = time.perf_counter() - start, peak_mib()
        finally:
            flask.extensions["tramita.store"].close()
            store.close()
            app.close()
    from pypdf import PdfReader
    import io

    read = PdfReader(io.BytesIO(pdf.data))
    pages, root = len(read.pages), read.trailer["/Root"]
    xmp = root["/Metadata"].get_object().get_data() if "/Metadata" in root else b""
    medians = {name: statistics.median(values) for name, values in times.items()}
    cpus = {name: statistics.median(values) for name, values in cpu.items()}
    print(f"store: sqlite (temporary file), case {case.number}: {len(events.get_json())} events, signed, "
          "checkpointed")
    print(f"GET /cases/{{id}}/events: {len(events.data)} bytes, median {medians['events'] * 1000:.1f} ms over "
          f"{args.repeat} (CPU {cpus['events'] * 1000:.1f} ms)")
    signed = "signed (PAdES)" if b"/ETSI.CAdES.detached" in pdf.data else "not signed"
    variant = "PDF/A-3b" if b'pdfaid:part="3"' in xmp else "not PDF/A"
    print(f"GET /cases/{{id}}/dossier.pdf: {pages} pages, {len(pdf.data)} bytes, {variant}, {signed}, median "
          f"{medians['dossier'] * 1000:.1f} ms over {args.repeat} (uncached; CPU {cpus['dossier'] * 1000:.1f} ms)")
    print(f"peak resident memory: {before:.0f} MiB before the PDFs, {parts_peak:.0f} MiB after them (in parts of "
          f"at most the module's rows), {whole_peak:.0f} MiB after one layout of the whole case "
          f"({whole_seconds * 1000:.0f} ms, {len(whole)} bytes)")
    print(f"ratio: {medians['dossier'] / medians['events']:.1f}")


if __name__ == "__main__":
    main()
