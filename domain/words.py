"""The words people read for the identifiers, kept below every layer that shows them (the pages, the alerts' e-mails
and webhook bodies, the command line): the bodies by name, the case kinds and stages, the deadlines by what is due
and the system's alerts by what happened, as English msgids that the pages' catalogue translates (api/translations),
and the articles of LC 35/1991 as the law writes them (`art-23-I` is `Art. 23, I`)."""

from __future__ import annotations

ROLE_NAMES = {
    "assembly-mesa": "Assembly (Mesa Diretora)", "assembly-president": "President of the Assembly",
    "ccj": "Constitution and Justice Committee (CCJ)", "council": "Municipal Council", "deputy": "State Deputy",
    "governor": "Governor", "ibge": "IBGE", "mayor": "Mayor", "municipality": "Municipality",
    "pge": "State Attorney General (PGE)", "sectma": "SECTMA", "sefaz": "SEFAZ", "setop": "SETOP",
    "tre": "Electoral Court (TRE)", "auditor": "Auditor", "origin-municipality": "origin municipality",
    "requisitioned-body": "requisitioned body", "scheduler": "tramita (scheduler)", "voters": "voters",
}

#: The case kinds (Art. 1) and the stages of a case's course, as the pages and the command line name them.
KIND_NAMES = {
    "creation": "creation of a municipality", "incorporation": "incorporation", "fusion": "fusion",
    "dismemberment": "dismemberment", "district_creation": "creation of a district",
    "district_suppression": "suppression of a district", "extinction": "extinction",
}
STAGE_NAMES = {
    "petition-filed": "petition filed", "instruction": "instruction", "requirements-met": "requirements met",
    "plebiscite-dispensed": "plebiscite dispensed", "plebiscite-decreed": "plebiscite decreed",
    "plebiscite-scheduled": "plebiscite scheduled", "result-homologated": "result homologated",
    "result-communicated": "result communicated", "result-registered": "result registered in plenary",
    "bill-drafted": "bill drafted", "law-enacted": "law enacted", "administrator-appointed": "administrator appointed",
    "installed": "municipality installed", "concluded": "concluded", "archived": "archived",
}

#: Each deadline of the statute (the `deadline.*` parameters of domain/statute/lc35.toml) by what is due, as the law
#: words it; a deadline's key is its rule, or `rule:qualifier` for one of several (a requisition, an origin).
DEADLINE_NAMES = {
    "requisition-answer": "answer to requisition %(which)s",
    "result-communication": "communication of the plebiscite's result to the Assembly",
    "plenary-registration": "registration of the result in plenary session",
    "creation-bill": "bill creating the municipality",
    "personnel-documents": "documents of the staff, sent by %(which)s",
    "ledger-transfer": "books of account sent by %(which)s",
    "budget-proposal": "budget proposal",
    "administrative-organization-bill": "bill of administrative organization",
    "civil-service-regime-bill": "bill of the civil service's single legal regime",
    "staff-framework-bill": "bill of the staff framework",
    "organic-law": "organic law",
}

#: The system's own alerts by what happened (their kinds: projections/failures.py and check.py, audit/service.py,
#: audit/documents.py), as the pages' alerts list and the webhook's body say them.
SYSTEM_ALERT_NAMES = {
    "projection-failure": "a read model could not apply an event",
    "tamper-alarm": "tamper alarm: the audit record was altered",
    "document-altered": "a stored document was altered or removed",
    "read-model-differs": "a read model differs from the events",
    "document-expired": "a document no act cited was removed after its expiry",
}


def deadline_parts(key: str | None) -> tuple[str, str | None]:
    """A deadline's key as its rule and its qualifier (`ledger-transfer:1200450` -> the rule, the origin's code)."""
    rule, _, qualifier = (key or "").partition(":")
    return rule, qualifier or None


def article_words(value: str | None, sole_paragraph: str = "sole paragraph") -> str:
    """`art-23-I` as `Art. 23, I`; `art-10-par-1` as `Art. 10, § 1`; `art-4-par-unico` as `Art. 4,` and
    `sole_paragraph` (the reader's words for it); `cf-art-18-par-4` as `CF, Art. 18, § 4`; anything else as it is."""
    if value and value.startswith("cf-art-"):  # the Federal Constitution's (the federal gate, CF art. 18 §4)
        return "CF, " + article_words(value[3:], sole_paragraph)
    if not value or not value.startswith("art-"):
        return value or ""
    parts = value[4:].split("-")
    words, index = [f"Art. {parts[0]}"], 1
    while index < len(parts):
        if parts[index] == "par" and index + 1 < len(parts):
            following = parts[index + 1]
            words.append(sole_paragraph if following == "unico" else f"§ {following}")
            index += 2
        else:
            words.append(parts[index])
            index += 1
    return ", ".join(words)
