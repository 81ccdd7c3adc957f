"""The dossier's PDF: the gathered case file (audit/dossier.py) as pages in Portuguese, with WeasyPrint.

Cost. WeasyPrint lays out a page in memory before it writes it, at some milliseconds and some tens of kilobytes
per table row; a whole 1,000-event case laid out at once would hold every page's boxes together. So the dossier
is rendered in parts of at most PART_ROWS rows (the termo de abertura and the cover; the timeline, the deadlines
and the documents in slices; the verification; the termo de encerramento), each laid out, written to PDF bytes
and let go before the next: the memory a rendering holds is one part's layout plus the finished bytes, whatever
the case's length. Each part numbers its sheets on from the previous part's last (`fls. N`, a CSS page counter
reset on its first page), and the pages are joined with pypdf after the first part's, whose catalogue carries
the PDF/A-3b identification and the attached documents for the whole file. The parts are not tagged: a
structure tree would describe one part's pages only, and a joined file would claim a structure it does not have.

Abuse. Rendering costs CPU for seconds on a long case, so each process renders at most RENDERS dossiers at
once; a request that finds them all busy is answered 503 with `Retry-After` at once rather than holding one of
the worker's threads while it waits (the other threads go on serving acts and reads). A dossier whose data is
unchanged (same events, deadlines' status on the same legal day, verdict and checkpoint: `fingerprint`) is
answered from a per-process cache of at most CACHE_BYTES, with the pages of its first rendering: the same file,
with the same verification code, whose issuance is already recorded.
"""

from __future__ import annotations

import io
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape

from api.dossier_words import Words

#: The PDF variant written: PDF/A-3b, the archival PDF that may carry other files (the acts' documents) inside.
PDF_VARIANT = "pdf/a-3b"
#: Rows (events, deadlines, documents) laid out in one part at most.
PART_ROWS = 200
#: Dossiers one process renders at once; one more is answered 503.
RENDERS = 1
#: Seconds a client is told to wait when every rendering slot is busy.
RETRY_AFTER = 5
#: Bytes of finished PDFs a process keeps for dossiers asked again with unchanged data.
CACHE_BYTES = 32 * 1024 * 1024


@dataclass(frozen=True)
class Attached:
    """A document the dossier carries inside it: its bytes, as an act attached them, and the act citing it."""

    sha256: str
    name: str
    media_type: str
    content: bytes
    cited_by: str


@dataclass(frozen=True)
class Seal:
    """What every sheet prints so that a paper copy can be checked: the verification code, the public page's URL,
    and that URL as a QR code (an SVG image's `data:` URL)."""

    code: str
    url: str
    qr: str


_TEMPLATES = Environment(loader=PackageLoader("api", "templates"), autoescape=select_autoescape(["html"]),
                         undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True)


def parts(dossier: dict[str, Any], rows_per_part: int = PART_ROWS) -> Iterator[dict[str, Any]]:
    """The dossier cut into parts of at most `rows_per_part` rows: the cover, the sections' slices, the
    verification (a section's later slices are `continued`)."""
    yield {"cover": True, "pieces": [], "verification": False, "closing": False}
    pieces: list[dict[str, Any]] = []
    room = rows_per_part
    for section in ("timeline", "deadlines", "documents"):
        rows = dossier[section if section != "timeline" else "events"]
        start = 0
        while True:
            taken = rows[start:start + room]
            pieces.append({"section": section, "rows": taken, "continued": start > 0})
            start += len(taken)
            room -= max(len(taken), 1)
            if room <= 0:
                yield {"cover": False, "pieces": pieces, "verification": False, "closing": False}
                pieces, room = [], rows_per_part
            if start >= len(rows):
                break
    yield {"cover": False, "pieces": pieces, "verification": True, "closing": False}
    yield {"cover": False, "pieces": [], "verification": False, "closing": True}


def html_of(dossier: dict[str, Any], part: dict[str, Any], *, first_sheet: int = 1, seal: Seal | None = None,
            files: Sequence[Attached] = (), signed: bool = False) -> str:
    """One part as HTML: its sheets numbered from `first_sheet` (`fls. N`), each sheet with the seal's code."""
    return _TEMPLATES.get_template("dossier.html").render(dossier=dossier, case=dossier["case"], part=part,
                                                          words=Words, first_sheet=first_sheet, seal=seal,
                                                          files={f.sha256: f for f in files}, signed=signed,
                                                          names=dossier.get("names", {}), css=css_text)


def render(dossier: dict[str, Any], rows_per_part: int = PART_ROWS, *, files: Sequence[Attached] = (),
           seal: Seal | None = None, signed: bool = False) -> bytes:
    """The dossier's PDF/A-3b: each part laid out and written on its own, its sheets numbered on from the last
    part's, then the parts' pages joined after the first part's, which carries the attached documents and the
    PDF/A identification (output intent, XMP metadata) for the whole file."""
    from pypdf import PdfReader, PdfWriter
    from weasyprint import HTML

    written, sheet = [], 1
    for part in parts(dossier, rows_per_part):
        html = html_of(dossier, part, first_sheet=sheet, seal=seal, files=files, signed=signed)
        document = HTML(string=html).render()
        sheet += len(document.pages)
        embedded = [_attachment(f, dossier["generated_at"]) for f in files] if part["cover"] else []
        written.append(document.write_pdf(pdf_variant=PDF_VARIANT, attachments=embedded))
        del document  # let the part's layout go before the next is laid out
    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(written[0])))
    _once_each(writer.root_object)
    if signed:  # pyHanko names itself the producer in both the Info and the XMP metadata, which PDF/A keeps equal
        writer.metadata = {key: value for key, value in (writer.metadata or {}).items() if key != "/Producer"}
    for pdf in written[1:]:
        for page in PdfReader(io.BytesIO(pdf)).pages:
            writer.add_page(page)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def _once_each(catalog: Any) -> None:
    """The catalogue's associated files (/AF) each listed once: WeasyPrint 70 lists an attachment's file
    specification twice (once from the name tree, once from its objects)."""
    from pypdf.generic import ArrayObject, NameObject

    if "/AF" in catalog:
        seen = {(ref.idnum, ref.generation): ref for ref in catalog["/AF"]}
        catalog[NameObject("/AF")] = ArrayObject(seen.values())


def css_text(text: str) -> str:
    """Text inside a CSS string (and so inside an HTML <style>): quotes, backslashes and tags escaped."""
    return "".join(c if c.isalnum() or c in " -_./:" else f"\\{ord(c):x} " for c in text)


def _attachment(file: Attached, generated_at: str) -> Any:
    """A document as an associated file of the PDF/A-3 (relationship Source: the act's own document), its
    description naming the act that cites it and its SHA-256, which a reader checks against the bytes."""
    from weasyprint import Attachment

    moment = datetime.fromisoformat(generated_at)
    return Attachment(file_obj=io.BytesIO(file.content), name=file.name, created=moment, modified=moment,
                      description=f"{file.cited_by} · SHA-256 {file.sha256} · {file.media_type}",
                      relationship="Source")


class Busy(Exception):
    """Every rendering slot of this process is taken."""


class Renderer:
    """Renders dossiers, at most `renders` at once, keeping the latest PDFs within `cache_bytes`."""

    def __init__(self, renders: int = RENDERS, cache_bytes: int = CACHE_BYTES) -> None:
        self._slots = threading.BoundedSemaphore(renders)
        self._cache: OrderedDict[str, bytes] = OrderedDict()
        self._cached_bytes, self._cache_limit = 0, cache_bytes
        self._lock = threading.Lock()

    def pdf(self, fingerprint: str, make: Callable[[], bytes]) -> bytes:
        """The finished PDF of a dossier whose data has `fingerprint`: the one kept, or `make()`'s (which lays it
        out, seals and signs it and records its issuance) in one of the process's slots, or Busy."""
        with self._lock:
            if fingerprint in self._cache:
                self._cache.move_to_end(fingerprint)
                return self._cache[fingerprint]
        if not self._slots.acquire(blocking=False):
            raise Busy
        try:
            pdf = make()
        finally:
            self._slots.release()
        self._keep(fingerprint, pdf)
        return pdf

    def _keep(self, fingerprint: str, pdf: bytes) -> None:
        if len(pdf) > self._cache_limit // 4:
            return
        with self._lock:
            if fingerprint not in self._cache:
                self._cache[fingerprint] = pdf
                self._cached_bytes += len(pdf)
            while self._cached_bytes > self._cache_limit:
                _, dropped = self._cache.popitem(last=False)
                self._cached_bytes -= len(dropped)
