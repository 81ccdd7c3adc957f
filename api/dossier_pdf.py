"""The dossier's PDF: the gathered case file (audit/dossier.py) as pages in Portuguese, with WeasyPrint.

Cost. WeasyPrint lays out a page in memory before it writes it, at some milliseconds and some tens of kilobytes
per table row; a whole 1,000-event case laid out at once would hold every page's boxes together. So the dossier
is rendered in parts of at most PART_ROWS rows (the termo de abertura and the cover; the timeline, the deadlines
and the documents in slices; the verification; the termo de encerramento), each laid out, written to PDF bytes
and let go before the next: the memory a rendering holds is one part's layout plus the joined file's objects
(its structure tree grows with the case, far more slowly than a layout would). Each part numbers its sheets on
from the previous part's last (`fls. N`, a CSS page counter reset on its first page), and the pages are joined
with pypdf after the first part's, whose catalogue carries the PDF/A-3b identification and the attached
documents for the whole file. The joined file is then rewritten with pyHanko's writer (`packed`), its objects in
a compressed object stream, as WeasyPrint writes a part: pypdf writes none, and the joined structure's elements,
each an uncompressed object of its own, would make the file several times larger (docs/benchmarks.md).

Tagged (for accessibility, pt-BR). Each part is laid out tagged (WeasyPrint's `pdf_tags`), and its structure
tree joins the first part's: its elements cloned under the first part's document element, its pages' keys in the
parent tree moved past the last, so that the whole file is one structure. Tagging one layout of the whole case
instead would hold every page's boxes at once, the memory the parts exist to avoid (docs/benchmarks.md). Each
part's reader is let go once joined (`reset_translation`), or the writer would keep its parsed objects alive.

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
    """The dossier's tagged PDF/A-3b: each part laid out and written on its own, its sheets numbered on from the
    last part's, then its pages and structure joined after the first part's, which carries the attached documents,
    the PDF/A identification (output intent, XMP metadata) and the structure's root for the whole file."""
    from pypdf import PdfReader, PdfWriter
    from weasyprint import HTML

    writer, sheet = None, 1
    for number, part in enumerate(parts(dossier, rows_per_part)):
        html = html_of(dossier, part, first_sheet=sheet, seal=seal, files=files, signed=signed)
        document = HTML(string=html).render()
        sheet += len(document.pages)
        embedded = [_attachment(f, dossier["generated_at"]) for f in files] if part["cover"] else []
        pdf = document.write_pdf(pdf_variant=PDF_VARIANT, pdf_tags=True, attachments=embedded)
        del document  # let the part's layout go before the next is laid out
        reader = PdfReader(io.BytesIO(pdf))
        if writer is None:
            writer = PdfWriter(clone_from=reader)
            _once_each(writer.root_object)
        else:
            join_tagged(writer, reader, f"parte{number}-")
        writer.reset_translation(reader)  # the writer no longer keeps the part's reader, and its objects, alive
        del reader, pdf
    assert writer is not None, "parts() yields the cover first"
    index_ids(writer)
    # pyHanko (packed, then the signature) names itself the producer in the XMP metadata and appends itself to the
    # Info's: without WeasyPrint's there, both say the same, as PDF/A asks
    writer.metadata = {key: value for key, value in (writer.metadata or {}).items() if key != "/Producer"}
    out = io.BytesIO()
    writer.write(out)
    joined = out.getvalue()
    del writer, out  # the joined objects let go before they are read again to be packed
    return packed(joined)


def packed(pdf: bytes) -> bytes:
    """The same document rewritten with its objects in a compressed object stream and its cross-references in a
    stream (pyHanko's writer), as WeasyPrint writes a part: pypdf writes each of the joined structure's tens of
    thousands of elements as an uncompressed object of its own in a classic xref table. The catalogue, its XMP
    metadata (PDF/A identification) and the Info dictionary are carried over; streams keep their encoded bytes."""
    from pyhanko.pdf_utils.reader import PdfFileReader
    from pyhanko.pdf_utils.writer import PdfFileWriter

    reader = PdfFileReader(io.BytesIO(pdf))
    writer = PdfFileWriter(stream_xrefs=True, init_page_tree=False)
    objects = writer.prepare_object_stream()
    writer.root.update(writer.import_object(reader.root, obj_stream=objects))
    if "/Info" in reader.trailer_view:
        writer.set_info(writer.import_object(reader.trailer_view["/Info"], obj_stream=objects))
    del reader  # its parsed objects, copied, let go before the file is written
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def join_tagged(writer: Any, part: Any, prefix: str) -> None:
    """A tagged part's pages after the writer's, and its structure under the writer's: its elements cloned under
    the writer's document element, its pages' and annotations' keys in the parent tree moved past the writer's
    last, its table headers' IDs prefixed with `prefix` (each part numbers them from its own objects)."""
    from pypdf.generic import IndirectObject, NameObject, NumberObject

    tree = writer.root_object["/StructTreeRoot"]
    nums, document = tree["/ParentTree"]["/Nums"], tree["/K"][0]
    offset = max((int(key) for key in nums[::2]), default=-1) + 1
    theirs = part.root_object["/StructTreeRoot"]
    their_document, their_nums = theirs["/K"][0], theirs["/ParentTree"]["/Nums"]
    adopt([*their_document.get_object()["/K"], *their_nums[1::2]], their_document.idnum, document, prefix)
    for page in part.pages:  # cloned first, so that the elements' /Pg point to the clones; not the part's /Parent
        added = writer.add_page(page.clone(writer, ignore_fields=("/Parent",)))
        added[NameObject("/StructParents")] = NumberObject(int(page["/StructParents"]) + offset)
        for annotation in added["/Annots"] if "/Annots" in added else ():
            annotation = annotation.get_object()
            if "/StructParent" in annotation:
                annotation[NameObject("/StructParent")] = NumberObject(int(annotation["/StructParent"]) + offset)
    kids = document.get_object()["/K"]
    for kid in their_document.get_object()["/K"]:
        kids.append(kid.clone(writer) if isinstance(kid, IndirectObject) else kid)
    for key, value in zip(their_nums[::2], their_nums[1::2]):
        nums.extend([NumberObject(int(key) + offset), value.clone(writer)])
    tree[NameObject("/ParentTreeNextKey")] = NumberObject(max(int(key) for key in nums[::2]) + 1)


def adopt(starts: Sequence[Any], their_document: int, document: Any, prefix: str) -> None:
    """Before a part's structure is cloned: the elements whose parent is the part's document element (object
    `their_document`) re-pointed to the writer's `document`, so that cloning never climbs to the part's own root;
    every /ID and /Headers prefixed. Walks down from `starts` and up from them (the sheets' margins are elements
    outside the document element's kids, reached from the parent tree only)."""
    from pypdf.generic import ArrayObject, DictionaryObject, IndirectObject, NameObject, TextStringObject

    refs = [ref for ref in starts if isinstance(ref, IndirectObject)]
    refs += [ref for value in starts if isinstance(value, ArrayObject)
             for ref in value if isinstance(ref, IndirectObject)]
    for _, element in structure_elements(refs, climb_short_of=their_document):
        parent = element.raw_get("/P")
        if isinstance(parent, IndirectObject) and parent.idnum == their_document:
            element[NameObject("/P")] = document
        if "/ID" in element:
            element[NameObject("/ID")] = TextStringObject(prefix + str(element["/ID"]))
        attributes = element["/A"] if "/A" in element else None
        if isinstance(attributes, DictionaryObject) and "/Headers" in attributes:
            attributes[NameObject("/Headers")] = ArrayObject(
                TextStringObject(prefix + str(header)) for header in attributes["/Headers"])


def structure_elements(starts: Sequence[Any], *, climb_short_of: int | None = None) -> Iterator[tuple[Any, Any]]:
    """Each structure element reachable from `starts` (references) once, with its reference: down through its
    kids, and with `climb_short_of` up through its parent too, unless the parent is the object of that number.
    The walk goes on from an element after the caller has seen it, from the parent it had before."""
    from pypdf.generic import DictionaryObject, IndirectObject

    stack, seen = list(starts), set()
    while stack:
        ref = stack.pop()
        if ref.idnum in seen:
            continue
        seen.add(ref.idnum)
        element = ref.get_object()
        if not isinstance(element, DictionaryObject) or "/S" not in element:
            continue
        parent = element.raw_get("/P") if climb_short_of is not None else None
        yield ref, element
        if isinstance(parent, IndirectObject) and parent.idnum != climb_short_of:
            stack.append(parent)
        stack += kids_of(element)


def kids_of(element: Any) -> list[Any]:
    """A structure element's kids that are objects of their own (its /K: one, or an array, perhaps indirect)."""
    from pypdf.generic import ArrayObject, IndirectObject

    kids = element.raw_get("/K") if "/K" in element else ArrayObject()
    if isinstance(kids, IndirectObject) and isinstance(kids.get_object(), ArrayObject):
        kids = kids.get_object()
    return [kid for kid in (kids if isinstance(kids, ArrayObject) else [kids]) if isinstance(kid, IndirectObject)]


def index_ids(writer: Any) -> None:
    """The structure root's /IDTree, which PDF asks for where elements have identifiers (WeasyPrint writes none):
    each table header's ID, which its cells' /Headers name, with its element."""
    from pypdf.generic import ArrayObject, DictionaryObject, NameObject, TextStringObject

    tree = writer.root_object["/StructTreeRoot"]
    named = {str(element["/ID"]): ref for ref, element in structure_elements(list(tree["/K"])) if "/ID" in element}
    if named:  # a name tree's keys in order
        tree[NameObject("/IDTree")] = DictionaryObject({NameObject("/Names"): ArrayObject(
            item for key in sorted(named) for item in (TextStringObject(key), named[key]))})


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
