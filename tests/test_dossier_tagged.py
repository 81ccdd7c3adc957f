"""The case file tagged for accessibility: every sheet of the delivered PDF/A-3b, signed or not, belongs to one
structure tree (the parts are laid out tagged and their trees joined under the first part's document element):
the catalogue is marked, in pt-BR, each page's key in the parent tree present and distinct, the table headers'
IDs unique and indexed; poppler reads it as tagged and finds the headings in order, the tables with their column
headers and the QR code's alternative text; `qpdf --check` finds no error and the signature still validates.
Tools absent here skip with their name."""

from __future__ import annotations

import io
import re
import subprocess
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from pypdf import PdfReader
from pypdf.generic import ArrayObject, IndirectObject

from api.dossier import attached, seal_for
from api.dossier_pdf import render
from projections.queries import case_deadlines
from tests.test_dossier import demo, demo_numbers, dossier_of  # noqa: F401 - the module's demo fixture
from tests.test_dossier_archive import tool
from tests.test_dossier_signed import signed  # noqa: F401 - the signed deployment's fixture

LONG_CASE = "LC35-1991-0001"
HEADINGS = ["H1 Dossiê do processo", "H2 Termo de abertura", "H2 1. Linha do tempo dos atos", "H2 2. Prazos",
            "H2 3. Documentos", "H2 4. Verificação e checkpoint", "H3 Último checkpoint assinado",
            "H2 Termo de encerramento"]


def in_parts(api, number: str, rows: int) -> bytes:  # noqa: ANN001
    """The case's dossier as the view makes it (its documents inside, sealed, signed where the deployment signs),
    laid out in parts of at most `rows` rows."""
    with api.flask.app_context():
        dossier = api.flask.extensions["tramita.audit"].dossier(number, due_soon_days=5, deadlines=case_deadlines)
        signer = api.flask.extensions.get("tramita.dossier_signer")
        pdf = render(dossier, rows_per_part=rows, files=attached(dossier), seal=seal_for("K7QM-2XHD-9RTA-B3CE"),
                     signed=signer is not None)
    return pdf if signer is None else signer.sign(pdf)


def elements(root: IndirectObject) -> list:
    """Every structure element under `root`, each once."""
    found, seen, stack = [], set(), [root]
    while stack:
        ref = stack.pop()
        if ref.idnum in seen:
            continue
        seen.add(ref.idnum)
        element = ref.get_object()
        found.append(element)
        kids = element.raw_get("/K") if "/K" in element else ArrayObject()
        stack += [kid for kid in (kids if isinstance(kids, ArrayObject) else [kids]) if isinstance(kid, IndirectObject)
                  and "/S" in kid.get_object()]
    return found


def assert_tagged_throughout(pdf: bytes) -> None:
    read = PdfReader(io.BytesIO(pdf))
    root = read.trailer["/Root"]
    assert root["/MarkInfo"]["/Marked"].value is True and root["/Lang"] == "pt-BR"
    tree = root["/StructTreeRoot"]
    [document] = tree["/K"]
    assert document.get_object()["/S"] == "/Document"
    nums = tree["/ParentTree"]["/Nums"]
    keys = [int(key) for key in nums[::2]]
    assert keys == sorted(set(keys)) and int(tree["/ParentTreeNextKey"]) > keys[-1]
    pages = read.pages
    own = [int(page["/StructParents"]) for page in pages]
    assert len(set(own)) == len(pages) >= 3 and set(own) <= set(keys)
    placed = {element.raw_get("/Pg").idnum for element in elements(document) if "/Pg" in element}
    assert placed == {page.indirect_reference.idnum for page in pages}  # the document's elements cover every page
    for page, key in zip(pages, own):
        marked = nums[2 * keys.index(key) + 1]
        assert len(marked) and all(ref.get_object()["/Pg"].indirect_reference == page.indirect_reference
                                   for ref in marked)
    ids = [str(element["/ID"]) for element in elements(document) if "/ID" in element]
    assert ids and len(ids) == len(set(ids))  # each part's table headers keep IDs of their own
    names = tree["/IDTree"]["/Names"]
    assert [str(key) for key in names[::2]] == sorted(ids)
    assert all(str(ref.get_object()["/ID"]) == str(key) for key, ref in zip(names[::2], names[1::2]))


def structure(path: Path) -> list[str]:
    """`pdfinfo -struct-text`'s lines, each element with the text it holds (its first run) on one line."""
    listed = subprocess.run([tool("pdfinfo"), "-struct-text", str(path)], capture_output=True, text=True,
                            timeout=120, check=True).stdout.splitlines()
    lines = []
    for number, line in enumerate(listed):
        name = line.strip().split(" ")[0].rstrip(":")
        text = next((later.strip().strip('"') for later in listed[number + 1:number + 4] if '"' in later), "")
        lines.append(f"{name} {text}")
    return lines


def test_every_demo_dossier_signed_or_not_is_tagged_on_every_sheet_and_poppler_and_qpdf_read_it(demo, signed,
                                                                                                   tmp_path):
    pdfinfo, qpdf = tool("pdfinfo"), tool("qpdf")
    for api in (demo, signed):
        for number in demo_numbers(api):
            pdf = dossier_of(api, number).data
            assert_tagged_throughout(pdf)
            path = tmp_path / f"{number}.pdf"
            path.write_bytes(pdf)
            info = subprocess.run([pdfinfo, str(path)], capture_output=True, text=True, timeout=60, check=True)
            assert re.search(r"^Tagged:\s+yes$", info.stdout, re.MULTILINE), (number, info.stdout)
            checked = subprocess.run([qpdf, "--check", str(path)], capture_output=True, text=True, timeout=120)
            assert checked.returncode == 0, checked.stdout + checked.stderr


def test_a_case_laid_out_in_many_parts_is_one_structure_with_its_headings_in_order_and_its_tables_headed(demo,
                                                                                                       tmp_path):
    pdf = in_parts(demo, LONG_CASE, rows=10)
    assert_tagged_throughout(pdf)
    path = tmp_path / "parts.pdf"
    path.write_bytes(pdf)
    lines = structure(path)
    headings = [line for line in lines if re.match(r"H\d ", line)]
    assert [h.split(" LC35")[0] for h in headings] == HEADINGS, headings
    names = [line.split(" ")[0] for line in lines]
    tables = names.count("Table")
    assert tables >= 4  # the timeline's slices each a table of its own, then the deadlines' and the documents'
    assert names.count("THead") == tables and names.count("TH") >= 5 * tables and names.count("TD") > 100
    [figure] = [element for element in elements(PdfReader(path).trailer["/Root"]["/StructTreeRoot"]["/K"][0])
                if element["/S"] == "/Figure"]
    assert figure["/Alt"].startswith("Código QR do endereço de verificação deste dossiê")
    assert figure["/Alt"].endswith("/verificar/K7QM-2XHD-9RTA-B3CE")


def test_a_signed_dossier_in_many_parts_is_tagged_and_its_signature_still_validates(signed, tmp_path):
    pdfsig, certutil, qpdf = tool("pdfsig"), tool("certutil"), tool("qpdf")
    pdf = in_parts(signed, LONG_CASE, rows=10)
    assert_tagged_throughout(pdf)
    database = tmp_path / "nss"
    database.mkdir()
    (tmp_path / "ca.pem").write_bytes(signed.ca.public_bytes(serialization.Encoding.PEM))
    subprocess.run([certutil, "-N", "-d", f"sql:{database}", "--empty-password"], check=True, timeout=60)
    subprocess.run([certutil, "-A", "-d", f"sql:{database}", "-n", "AC de teste", "-t", "C,C,C", "-i",
                    str(tmp_path / "ca.pem")], check=True, timeout=60)
    path = tmp_path / "signed.pdf"
    path.write_bytes(pdf)
    checked = subprocess.run([pdfsig, "-nssdir", f"sql:{database}", str(path)], capture_output=True, text=True,
                             timeout=120)
    assert "Signature is Valid." in checked.stdout and "Certificate is Trusted." in checked.stdout, checked.stdout
    assert "Tagged: yes" in " ".join(subprocess.run([tool("pdfinfo"), str(path)], capture_output=True, text=True,
                                                    timeout=60, check=True).stdout.split())
    structure_check = subprocess.run([qpdf, "--check", str(path)], capture_output=True, text=True, timeout=120)
    assert structure_check.returncode == 0, structure_check.stdout + structure_check.stderr
    assert [line for line in structure(path) if line.startswith("H1 ")]


def test_a_tagged_dossier_signed_or_not_keeps_most_of_its_objects_in_compressed_object_streams(demo, signed,
                                                                                                tmp_path):
    qpdf = tool("qpdf")
    for api in (demo, signed):
        path = tmp_path / "packed.pdf"
        path.write_bytes(in_parts(api, LONG_CASE, rows=10))
        listed = subprocess.run([qpdf, "--show-xref", str(path)], capture_output=True, text=True, timeout=120,
                                check=True).stdout
        entries = re.findall(r"^\d+/\d+: (compressed|uncompressed)", listed, re.MULTILINE)
        # the structure's elements, most of the file's objects, in object streams; pages' contents, images, fonts,
        # the embedded documents and the signature's update are streams or objects of their own
        assert entries.count("compressed") > 4 * entries.count("uncompressed"), listed[-300:]
