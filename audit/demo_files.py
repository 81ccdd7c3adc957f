"""`tramita seed-demo` with the files of its acts: the demo's documents rendered, stored, then attached.

The demo (domain/demo.py) cites documents by reference; three of case 1's (the legislative decree, the TRE's
resolution, the state law: DOCUMENTS_1991) are attached to their acts as files here. Each is a one-page PDF that
WeasyPrint lays out at seed time, saying on its page and in its metadata that it is an illustrative demo document
standing for that act, not an official text; it reproduces no official act. The files are stored as any upload is
(audit/documents.py, `Documents.upload`: in the database, by SHA-256) and attached through the path the API takes
(`Tramita.idempotently` with an `Attaching`), so that the case file links them, the dossier lists their digests and
the export carries their bytes. The domain never sees the bytes: it records their digest, type and size.

The rendering is deterministic (no date or random identifier in the file), so the same library on the same
machine gives the same bytes, hence the same digests, in every process: the API's request examples (api/examples.py)
name the documents a `tramita seed-demo` of that machine stored. Seeding again stores nothing new (the same bytes
are the same document) and records nothing (the demo is seeded once).
"""

from __future__ import annotations

import functools
import html
from collections.abc import Callable
from typing import Any

from audit.documents import PDF, Documents, StoredDocument
from domain.demo import CASE_1991, DOCUMENTS_1991, attachment_name, seed_demo
from domain.errors import Sentence

#: Who the demo's documents are recorded as uploaded by (no token uploads them: `tramita seed-demo` does).
DEMO_UPLOADER = "tramita seed-demo"
#: What every page and every file's metadata says first.
NOTICE = "Documento ilustrativo (demo)"

PAGE = """<!doctype html>
<html lang="pt-BR"><head><meta charset="utf-8"><title>{title}</title>
<meta name="author" content="tramita (demo)"><meta name="description" content="{subject}">
<meta name="keywords" content="documento ilustrativo, demo, não oficial, {act}">
<style>
@page {{ size: A4; margin: 25mm 22mm; }}
body {{ font-family: "DejaVu Sans", sans-serif; font-size: 11pt; line-height: 1.45; color: #111; }}
.notice {{ border: 2pt solid #8a1c1c; color: #8a1c1c; padding: 4mm; font-weight: bold; text-align: center;
          letter-spacing: .04em; }}
h1 {{ font-size: 16pt; margin: 12mm 0 4mm; }}
dl {{ margin: 6mm 0; }} dt {{ font-weight: bold; margin-top: 2mm; }} dd {{ margin: 0 0 0 6mm; }}
.small {{ font-size: 9pt; color: #333; margin-top: 14mm; }}
</style></head><body>
<p class="notice">{notice_upper}: NÃO É UM DOCUMENTO OFICIAL</p>
<h1>{reference}</h1>
<p>Este arquivo representa {stands_for}.</p>
<dl><dt>Processo</dt><dd>{case} (caso de demonstração do tramita)</dd>
<dt>Ato a que está anexado</dt><dd>{act}</dd>
<dt>Nome do anexo</dt><dd>{name}</dd></dl>
<p>Foi gerado pelo comando <code>tramita seed-demo</code> para mostrar um documento anexado a um ato: o ato o cita
pelo SHA-256 destes bytes, e o dossiê e a exportação do processo o listam. Não reproduz nem substitui o texto de
nenhum ato oficial do Estado do Acre, da Assembleia Legislativa ou do Tribunal Regional Eleitoral.</p>
<p class="small">{notice}. Os dados do caso de demonstração são ilustrativos, não verificados.</p>
</body></html>"""


def render_document(reference: str) -> bytes:
    """The illustrative PDF of one of DOCUMENTS_1991: one page naming the act it stands for, and saying it is
    a demo document (title, subject and keywords of its metadata say so too)."""
    from weasyprint import HTML

    act, stands_for = DOCUMENTS_1991[reference]
    fields = {"reference": reference, "stands_for": stands_for, "act": act, "case": CASE_1991,
              "name": attachment_name(reference), "notice": NOTICE, "notice_upper": NOTICE.upper(),
              "title": f"{reference}: {NOTICE.lower()}",
              "subject": f"{NOTICE.lower()}, não oficial: representa {stands_for}"}
    return HTML(string=PAGE.format(**{k: html.escape(v) for k, v in fields.items()})).write_pdf()


@functools.cache
def demo_files() -> dict[str, bytes]:
    """reference -> the PDF's bytes, for every document the demo attaches (rendered once per process)."""
    return {reference: render_document(reference) for reference in DOCUMENTS_1991}


def described(files: dict[str, bytes]) -> dict[str, dict[str, Any]]:
    """reference -> the document as stored (sha256, type, size), computed from the bytes alone."""
    import hashlib

    return {reference: StoredDocument(hashlib.sha256(content).hexdigest(), PDF, len(content)).as_dict()
            for reference, content in files.items()}


def store_demo_documents(documents: Documents) -> dict[str, dict[str, Any]]:
    """Store the demo's files (once: the same bytes are the same document); reference -> the stored document."""
    return {reference: documents.upload(content, PDF, DEMO_UPLOADER)[0].as_dict()
            for reference, content in demo_files().items()}


def seed_demo_with_documents(app: Any, documents: Documents, say: Callable[[Sentence], None] = print) -> bool:
    """The demo (`seed_demo`) with case 1's documents stored and attached to the acts that cite them."""
    stored = store_demo_documents(documents)
    say(Sentence("documents: %(count)s illustrative PDFs of the demo stored (by SHA-256)", count=len(stored)))
    return seed_demo(app, say, documents=stored)
