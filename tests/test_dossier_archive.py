"""The case file as an archive a Tribunal de Contas files: every demo case's dossier is a PDF/A-3b (its
identification read back from the XMP metadata, its output intent present, `qpdf --check` clean) that carries
inside it exactly the documents the case's acts attach, each an associated file whose bytes give the SHA-256 that
`GET /documents/{sha256}` serves, and `pdftotext` finds "fls. N" on every sheet. Tools absent here skip with
their name (.ci/run installs poppler-utils and qpdf)."""

from __future__ import annotations

import hashlib
import io
import re
import shutil
import subprocess
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest
from pypdf import PdfReader

from tests.test_dossier import demo, demo_numbers, dossier_of  # noqa: F401 - the module's demo fixture

PDFAID = "{http://www.aiim.org/pdfa/ns/id/}"
RDF = "{http://www.w3.org/1999/02/22-rdf-syntax-ns#}"


def tool(name: str) -> str:
    found = shutil.which(name)
    if found is None:
        pytest.skip(f"{name} is not installed (poppler-utils / qpdf / libnss3-tools; .ci/run installs them)")
    return found


def saved(api, number: str, folder: Path) -> Path:  # noqa: ANN001
    response = dossier_of(api, number)
    assert response.status_code == 200, response.get_data(as_text=True)[:300]
    path = folder / f"{number}.pdf"
    path.write_bytes(response.data)
    return path


def attached_digests(api, number: str) -> set[str]:  # noqa: ANN001
    events = api.get(f"/cases/{number}/events").get_json()
    return {d["sha256"] for e in events if e["type"] == "Case.DocumentsAttached" for d in e["payload"]["documents"]}


def test_every_demo_dossier_is_pdf_a_3b_by_its_xmp_metadata_and_output_intent_and_qpdf_finds_no_error(demo,
                                                                                                      tmp_path):
    qpdf = tool("qpdf")
    for number in demo_numbers(demo):
        path = saved(demo, number, tmp_path)
        checked = subprocess.run([qpdf, "--check", str(path)], capture_output=True, text=True, timeout=120)
        assert checked.returncode == 0, checked.stdout + checked.stderr
        read = PdfReader(path)
        root, producer = read.trailer["/Root"], (read.metadata or {}).get("/Producer")
        data = root["/Metadata"].get_object().get_data()
        assert producer is None or f'pdf:Producer="{producer}"'.encode() in data, number  # PDF/A: Info = XMP
        xmp = ElementTree.fromstring(data)
        identification = {key.removeprefix(PDFAID): value for node in xmp.iter(f"{RDF}Description")
                          for key, value in node.attrib.items() if key.startswith(PDFAID)}
        assert identification == {"part": "3", "conformance": "B"}, number
        intents = [intent.get_object() for intent in root["/OutputIntents"]]
        assert [intent["/S"] for intent in intents] == ["/GTS_PDFA1"] and "/DestOutputProfile" in intents[0]


def test_pdfdetach_lists_exactly_the_case_s_attached_documents_with_the_bytes_the_document_store_serves(demo,
                                                                                                        tmp_path):
    pdfdetach = tool("pdfdetach")
    for number in demo_numbers(demo):
        path = saved(demo, number, tmp_path)
        listed = subprocess.run([pdfdetach, "-list", str(path)], capture_output=True, text=True, timeout=60)
        assert listed.returncode == 0, listed.stderr
        names = [line.split(": ", 1)[1] for line in listed.stdout.splitlines()[1:]]
        out = tmp_path / number
        out.mkdir()
        subprocess.run([pdfdetach, "-saveall", "-o", str(out), str(path)], check=True, timeout=60)
        found = {hashlib.sha256((out / name).read_bytes()).hexdigest() for name in names}
        expected = attached_digests(demo, number)
        assert len(names) == len(expected) and found == expected, number
        for digest in expected:
            served = demo.client.get(f"/documents/{digest}", headers=demo.headers("auditor"))
            assert served.status_code == 200 and hashlib.sha256(served.data).hexdigest() == digest
    assert attached_digests(demo, "LC35-1991-0001")  # the 1991 case attaches its decree, resolution and law


def test_each_embedded_document_is_an_associated_source_file_named_typed_and_described_by_its_sha256(demo):
    response = dossier_of(demo, "LC35-1991-0001")
    root = PdfReader(io.BytesIO(response.data)).trailer["/Root"]
    associated = [spec.get_object() for spec in root["/AF"]]
    expected = attached_digests(demo, "LC35-1991-0001")
    assert len(associated) == len(expected) == 3
    for spec in associated:
        stream = spec["/EF"]["/F"].get_object()
        digest = hashlib.sha256(stream.get_data()).hexdigest()
        assert digest in expected and f"SHA-256 {digest}" in spec["/Desc"]
        assert spec["/AFRelationship"] == "/Source" and stream["/Subtype"] == "/application/pdf"
        assert spec["/UF"].endswith(".pdf") and "(evento " in spec["/Desc"]


def test_pdftotext_finds_the_sheet_s_folha_and_the_one_verification_code_on_every_page_of_every_demo_dossier(
        demo, tmp_path):
    pdftotext = tool("pdftotext")
    for case in demo_numbers(demo):
        path = saved(demo, case, tmp_path)
        text = subprocess.run([pdftotext, "-layout", str(path), "-"], capture_output=True, text=True, timeout=60,
                              check=True).stdout
        pages = text.split("\f")[:-1]  # pdftotext ends every page with a form feed
        assert len(pages) == len(PdfReader(path).pages) >= 3
        codes = {re.search(r"código de verificação (\S{19})", page).group(1) for page in pages}
        assert len(codes) == 1, (case, codes)
        for number, page in enumerate(pages, start=1):
            assert f"fls. {number}" in page and f"/verificar/{next(iter(codes))}" in page, (case, number)
