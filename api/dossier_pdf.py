"""The dossier's PDF: the gathered case file (audit/dossier.py) as pages in Portuguese, with WeasyPrint.

Cost. WeasyPrint lays out a page in memory before it writes it, at some milliseconds and some tens of kilobytes
per table row; a whole 1,000-event case laid out at once would hold every page's boxes together. So the dossier
is rendered in parts of at most PART_ROWS rows (the cover; the timeline, the deadlines and the documents in
slices; the verification), each laid out, written to PDF bytes and let go before the next: the memory a
rendering holds is one part's layout plus the finished bytes, whatever the case's length. The pages are then
joined with pypdf, and the footer ("LC35-… · página x de y", which needs the total) is laid out once for all
pages, as nearly empty pages, and stamped onto them.

Abuse. Rendering costs CPU for seconds on a long case, so each process renders at most RENDERS dossiers at
once; a request that finds them all busy is answered 503 with `Retry-After` at once rather than holding one of
the worker's threads while it waits (the other threads go on serving acts and reads). A dossier whose data is
unchanged (same events, deadlines' status on the same legal day, verdict and checkpoint: `fingerprint`) is
answered from a per-process cache of at most CACHE_BYTES, with the pages of its first rendering.
"""

from __future__ import annotations

import io
import threading
from collections import OrderedDict
from collections.abc import Iterator
from datetime import datetime
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape

from api.i18n import compiled_catalogue

#: Rows (events, deadlines, documents) laid out in one part at most.
PART_ROWS = 200
#: Dossiers one process renders at once; one more is answered 503.
RENDERS = 1
#: Seconds a client is told to wait when every rendering slot is busy.
RETRY_AFTER = 5
#: Bytes of finished PDFs a process keeps for dossiers asked again with unchanged data.
CACHE_BYTES = 32 * 1024 * 1024

KINDS = {
    "creation": "criação de Município", "incorporation": "incorporação de Município",
    "fusion": "fusão de Municípios", "dismemberment": "desmembramento de Município",
    "district_creation": "criação de Distrito", "district_suppression": "supressão de Distrito",
    "extinction": "extinção de Município",
}
STAGES = {
    "petition-filed": "petição protocolada", "instruction": "instrução (requisições e apurações)",
    "requirements-met": "requisitos atendidos", "plebiscite-dispensed": "plebiscito dispensado",
    "plebiscite-decreed": "plebiscito decretado", "plebiscite-scheduled": "plebiscito marcado pelo TRE",
    "result-homologated": "resultado homologado", "result-communicated": "resultado comunicado",
    "result-registered": "resultado registrado em plenário", "bill-drafted": "projeto de lei elaborado",
    "law-enacted": "lei promulgada", "administrator-appointed": "Administrador escolhido",
    "installed": "Município instalado", "concluded": "concluído", "archived": "arquivado",
}
#: What the cover says of a case whose stored events do not all decode.
UNREADABLE = "ilegível: um evento armazenado não pode ser lido (ver a verificação)"
DEADLINE_STATUSES = {
    "open": "em aberto", "due-soon": "vence em breve", "missed": "descumprido",
    "met-on-time": "cumprido no prazo", "met-late": "cumprido com atraso", "ended": "encerrado com o arquivamento",
}


class Words:
    """The Portuguese words the template shows for the data's identifiers, dates and verdict."""

    @staticmethod
    def kind(kind: str | None) -> str:
        return UNREADABLE if kind is None else KINDS.get(kind, kind)

    @staticmethod
    def stage(stage: str | None) -> str:
        return UNREADABLE if stage is None else STAGES.get(stage, stage)

    @staticmethod
    def day(iso: str | None) -> str:
        if not iso:
            return "—"
        year, month, day = iso[:10].split("-")
        return f"{day}/{month}/{year}"

    @staticmethod
    def moment(iso: str | None) -> str:
        """A recorded moment in UTC, to the second (`2026-11-30 15:00:00 UTC`)."""
        if not iso:
            return "—"
        moment = datetime.fromisoformat(iso)
        if moment.utcoffset() is not None:
            moment = (moment - moment.utcoffset()).replace(tzinfo=None)
        return moment.strftime("%Y-%m-%d %H:%M:%S") + " UTC"

    @staticmethod
    def deadline(row: dict[str, Any]) -> str:
        words = DEADLINE_STATUSES.get(row["status"], row["status"])
        if row["status"] == "met-late" and row.get("days_late"):
            words += f" ({row['days_late']} dias)"
        if row["status"] == "missed" and row.get("days_overdue"):
            words += f" (há {row['days_overdue']} dias)"
        return words

    @staticmethod
    def said(message: str) -> str:
        """What the domain states in English (an open impediment), in Portuguese from the catalogue."""
        return compiled_catalogue("pt_BR").gettext(message)

    @staticmethod
    def verdict(report: dict[str, Any]) -> str:
        if report["ok"]:
            return ("a cadeia de hashes confere do primeiro ao último evento, e cada evento está sob o checkpoint "
                    "assinado ou traz assinatura válida da implantação.")
        if report.get("reason"):
            return f"a cadeia não confere a partir do evento {report.get('first_bad_version')}: {report['reason']}."
        return "há achados: " + "; ".join(f["message"] for f in report.get("findings", [])) + "."


_TEMPLATES = Environment(loader=PackageLoader("api", "templates"), autoescape=select_autoescape(["html"]),
                         undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True)


def parts(dossier: dict[str, Any], rows_per_part: int = PART_ROWS) -> Iterator[dict[str, Any]]:
    """The dossier cut into parts of at most `rows_per_part` rows: the cover, the sections' slices, the
    verification (a section's later slices are `continued`)."""
    yield {"cover": True, "pieces": [], "verification": False}
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
                yield {"cover": False, "pieces": pieces, "verification": False}
                pieces, room = [], rows_per_part
            if start >= len(rows):
                break
    yield {"cover": False, "pieces": pieces, "verification": True}


def html_of(dossier: dict[str, Any], part: dict[str, Any]) -> str:
    return _TEMPLATES.get_template("dossier.html").render(dossier=dossier, case=dossier["case"], part=part,
                                                          words=Words)


FOOTER = """<!doctype html><html lang="pt-BR"><head><meta charset="utf-8"><style>
@page {{ size: A4; margin: 18mm 14mm 20mm 14mm;
  @bottom-center {{ content: "Processo {number} · página " counter(page) " de " counter(pages);
                   font-family: "DejaVu Sans", sans-serif; font-size: 7.5pt; color: #333; }} }}
div {{ break-after: page; height: 1pt; }} div:last-child {{ break-after: auto; }}
</style></head><body>{pages}</body></html>"""


def render(dossier: dict[str, Any], rows_per_part: int = PART_ROWS) -> bytes:
    """The dossier's PDF: each part laid out and written on its own, then joined and footed."""
    from pypdf import PdfReader, PdfWriter
    from weasyprint import HTML

    written = []
    for part in parts(dossier, rows_per_part):
        document = HTML(string=html_of(dossier, part)).render()
        written.append(document.write_pdf())
        del document  # let the part's layout go before the next is laid out
    readers = [PdfReader(io.BytesIO(pdf)) for pdf in written]
    total = sum(len(reader.pages) for reader in readers)
    number = _css_string(dossier["case"]["number"])
    footer = PdfReader(io.BytesIO(HTML(string=FOOTER.format(number=number, pages="<div></div>" * total))
                                  .write_pdf()))
    writer = PdfWriter()
    index = 0
    for reader in readers:
        for page in reader.pages:
            joined = writer.add_page(page)  # pypdf merges onto a page of a writer
            joined.merge_page(footer.pages[index])
            joined.compress_content_streams()  # merging leaves the page's drawing uncompressed
            index += 1
    number = dossier["case"]["number"]
    writer.add_metadata({"/Title": f"Dossiê do processo {number}", "/Subject": "LC 35/1991 (Acre)",
                         "/Creator": "tramita"})
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def _css_string(text: str) -> str:
    """Text inside a CSS string (and so inside an HTML <style>): quotes, backslashes and tags escaped."""
    return "".join(c if c.isalnum() or c in " -_./" else f"\\{ord(c):x} " for c in text)


class Busy(Exception):
    """Every rendering slot of this process is taken."""


class Renderer:
    """Renders dossiers, at most `renders` at once, keeping the latest PDFs within `cache_bytes`."""

    def __init__(self, renders: int = RENDERS, cache_bytes: int = CACHE_BYTES) -> None:
        self._slots = threading.BoundedSemaphore(renders)
        self._cache: OrderedDict[str, bytes] = OrderedDict()
        self._cached_bytes, self._cache_limit = 0, cache_bytes
        self._lock = threading.Lock()

    def pdf(self, dossier: dict[str, Any], fingerprint: str) -> bytes:
        with self._lock:
            if fingerprint in self._cache:
                self._cache.move_to_end(fingerprint)
                return self._cache[fingerprint]
        if not self._slots.acquire(blocking=False):
            raise Busy
        try:
            pdf = render(dossier)
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
