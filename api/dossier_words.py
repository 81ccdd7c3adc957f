"""The words of the printable case file (api/dossier_pdf.py): the language a Tribunal de Contas files, in pt-BR
whatever the reader's locale, since the file is one document for everyone.

Times are Rio Branco's, written as the pages write them (`30/11/2026 10:00`), with the UTC moment to the second
beside them; dates dd/mm/aaaa; bodies, deadlines and municipalities by their names; articles as the law writes them
(`Art. 26, parágrafo único`); numbers in Brazilian notation (Babel: `12.345`, `R$ 1.234,50`). The bodies' and the
deadlines' names are the pages' msgids (domain/words.py), translated by the same catalogue.
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Any

from babel.dates import format_date
from babel.numbers import format_currency, format_decimal

from api.i18n import compiled_catalogue
from domain.application import LEGAL_TIMEZONE
from domain.words import DEADLINE_NAMES, ROLE_NAMES, article_words, deadline_parts

LOCALE = "pt_BR"
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
#: The fields by which an act names a document (audit/dossier.py REFERENCE_FIELDS).
ITEMS = {"documents": "documentos", "document": "documento", "decree": "decreto", "resolution": "resolução",
         "law": "lei", "bill": "projeto de lei"}
#: What the cover says of a case whose stored events do not all decode.
UNREADABLE = "ilegível: um evento armazenado não pode ser lido (ver a verificação)"
DEADLINE_STATUSES = {
    "open": "em aberto", "due-soon": "vence em breve", "missed": "descumprido",
    "met-on-time": "cumprido no prazo", "met-late": "cumprido com atraso", "ended": "encerrado com o arquivamento",
}


def _said(message: str) -> str:
    return compiled_catalogue(LOCALE).gettext(message)


class Words:
    """The Portuguese words the template shows for the data's identifiers, dates, times, numbers and verdict."""

    @staticmethod
    def kind(kind: str | None) -> str:
        return UNREADABLE if kind is None else KINDS.get(kind, kind)

    @staticmethod
    def stage(stage: str | None) -> str:
        return UNREADABLE if stage is None else STAGES.get(stage, stage)

    @staticmethod
    def day(iso: str | None) -> str:
        """dd/mm/aaaa."""
        if not iso:
            return "—"
        year, month, day = iso[:10].split("-")
        return f"{day}/{month}/{year}"

    @staticmethod
    def long_day(iso: str) -> str:
        """The day of a moment in Rio Branco in full words (`7 de dezembro de 2026`), as a termo is dated."""
        return format_date(datetime.fromisoformat(iso).astimezone(LEGAL_TIMEZONE).date(), "long", locale=LOCALE)

    @staticmethod
    def moment(iso: str | None) -> str:
        """A recorded moment in Rio Branco's time, to the minute, as the pages write it (`30/11/2026 10:00`)."""
        if not iso:
            return "—"
        local = datetime.fromisoformat(iso).astimezone(LEGAL_TIMEZONE)
        return f"{local:%d/%m/%Y %H:%M}"

    @staticmethod
    def utc(iso: str | None) -> str:
        """The same moment in UTC, to the second (`30/11/2026 15:00:00 UTC`): the event's detail."""
        if not iso:
            return "—"
        moment = datetime.fromisoformat(iso)
        if moment.utcoffset() is not None:
            moment = (moment - moment.utcoffset()).replace(tzinfo=None)
        return f"{moment:%d/%m/%Y %H:%M:%S} UTC"

    @staticmethod
    def role(role: str | None) -> str:
        return _said(ROLE_NAMES[role]) if role in ROLE_NAMES else (role or "—")

    @staticmethod
    def article(article: str | None) -> str:
        return article_words(article, _said("sole paragraph")) or "—"

    @staticmethod
    def municipality(code: str | None, names: dict[str, str]) -> str:
        return names.get(code or "", code or "")

    @staticmethod
    def item(item: str | None) -> str:
        """Where an act names a document: an item of Art. 4 as the law writes it (`Art. 4, I`), a field by its
        name (`decreto`), the n-th attached file as `anexo n`."""
        if not item:
            return "—"
        if item.startswith(("art-", "cf-art-")):
            return Words.article(item)
        field, _, index = item.partition(".")
        if field == "documents" and index.isdigit():
            return f"anexo {int(index) + 1}"
        return ITEMS.get(field, item)

    @staticmethod
    def code(code: str) -> str:
        """A municipality's IBGE code; one a law created and the IBGE has not coded (`new:<case>`) in words."""
        if code.startswith("new:"):
            return f"sem código do IBGE ainda: criado pelo processo {code[4:]}"
        return f"IBGE {code}"

    @staticmethod
    def deadline(key: str | None, names: dict[str, str]) -> str:
        """A deadline by what is due (`resposta à requisição R1`, `livros contábeis enviados por Senador
        Guiomard`); an unknown key as it is."""
        rule, which = deadline_parts(key)
        if rule not in DEADLINE_NAMES:
            return key or "—"
        origin = names.get(which or "", which or _said("the origin municipality"))
        return _said(DEADLINE_NAMES[rule]) % {"which": origin}

    @staticmethod
    def number(value: int | float | Decimal | None) -> str:
        return "—" if value is None else format_decimal(value, locale=LOCALE)

    @staticmethod
    def money(value: int | float | Decimal | None) -> str:
        return "—" if value is None else format_currency(value, "BRL", locale=LOCALE)

    @staticmethod
    def status(row: dict[str, Any]) -> str:
        words = DEADLINE_STATUSES.get(row["status"], row["status"])
        if row["status"] == "met-late" and row.get("days_late"):
            words += f" ({row['days_late']} dias)"
        if row["status"] == "missed" and row.get("days_overdue"):
            words += f" (há {row['days_overdue']} dias)"
        return words

    @staticmethod
    def said(message: str) -> str:
        """What the domain states in English (an open impediment), in Portuguese from the catalogue."""
        return _said(message)

    @staticmethod
    def verdict(report: dict[str, Any]) -> str:
        if report["ok"]:
            return ("a cadeia de hashes confere do primeiro ao último evento, e cada evento está sob o checkpoint "
                    "assinado ou traz assinatura válida da implantação.")
        if report.get("reason"):
            return f"a cadeia não confere a partir do evento {report.get('first_bad_version')}: {report['reason']}."
        return "há achados: " + "; ".join(f["message"] for f in report.get("findings", [])) + "."
