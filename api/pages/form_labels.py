"""The words of the forms: one label and one help per field name, shared by every act's form and the petition's.

Keyed by the field's name in the act schemas (api/schemas.py, nested schemas included), English msgids translated
by the catalogue as every text of the pages is; a field of the same name means the same in every act that has it
(a `document` is the reference of the paper the act cites). tests/test_forms.py checks that every field of every
act schema has its entry here, so a new field cannot reach a form unlabelled.
"""

from __future__ import annotations

from flask_babel import lazy_gettext as _l

#: field name -> (label, help).
FIELDS = {
    "occurred_on": (_l("Legal date of the act"), _l("The day the act happened (not today's date unless it was "
                                                    "today), as dd/mm/aaaa.")),
    "attachments": (_l("Attached documents"), _l("PDF, PNG or JPEG files the act cites; each is kept by its SHA-256 "
                                                 "and cited with its file name.")),
    "sha256": (_l("SHA-256 of the document"), _l("The document's digest, as its upload answered it.")),
    "name": (_l("Name"), _l("The name as the act writes it: the new municipality's (Art. 17) or the document's.")),
    "body": (_l("Requisitioned body"), _l("The body the statute names to answer the items requisitioned.")),
    "items": (_l("Items requisitioned"), _l("The items of the article the body must answer.")),
    "requisition": (_l("Requisition"), _l("The requisition's identifier, as its issue recorded it.")),
    "reason": (_l("Reason"), _l("The stated reason, as the act records it.")),
    "item": (_l("Item"), _l("The item of the article the act concerns.")),
    "value": (_l("Value found"), _l("A figure in Brazilian notation (1.234,56), or yes/no for Art. 4-V and VI.")),
    "document": (_l("Document"), _l("The reference of the document the act cites (ofício, laudo, termo).")),
    "by_origin": (_l("Part of each origin municipality"), _l("One line per municipality: IBGE code: figure.")),
    "state_tax_revenue": (_l("State tax revenue"), _l("Art. 4-III: the State's tax revenue, in Brazilian notation.")),
    "municipality": (_l("Municipality"), _l("The municipality (its IBGE code).")),
    "decree": (_l("Legislative decree"), _l("The decree's reference (Decreto Legislativo n.º ...).")),
    "seats": (_l("Council seats"), _l("The council's total number of seats.")),
    "yes_votes": (_l("Votes in favour"), _l("The council's votes in favour.")),
    "justification": (_l("Justification"), _l("Art. 1-II: natural boundaries, population, access, resources.")),
    "resolution": (_l("TRE resolution"), _l("The TRE resolution's reference.")),
    "plebiscite_date": (_l("Date of the plebiscite"), _l("The day set for the vote, as dd/mm/aaaa.")),
    "voted_on": (_l("Day of the vote"), _l("The day the plebiscite was held, as dd/mm/aaaa.")),
    "populations": (_l("Results by population"), _l('One line per population ("area", or each municipality\'s IBGE '
                                                    'code in a fusion).')),
    "registered": (_l("Registered voters"), _l("Voters registered in the population.")),
    "turnout": (_l("Turnout"), _l("Voters who voted, blank and void ballots included.")),
    "yes": (_l("Yes"), _l("Votes for yes.")),
    "no": (_l("No"), _l("Votes for no.")),
    "blank": (_l("Blank"), _l("Blank ballots.")),
    "void": (_l("Void"), _l("Void ballots.")),
    "seat_votes": (_l("Votes for each seat"), _l("Art. 30: one line per candidate seat: IBGE code: votes.")),
    "bill": (_l("Bill"), _l("The bill's reference (Projeto de Lei n.º ...).")),
    "law": (_l("Law"), _l("The law's reference (Lei n.º ...).")),
    "seat_origin": (_l("Origin of the seat"), _l("The IBGE code of the municipality whose locality becomes the "
                                                 "seat.")),
    "limits": (_l("Limits"), _l("The description of the limits, as the law gives it.")),
    "comarca": (_l("Comarca"), _l("The judicial district (comarca) the new municipality belongs to.")),
    "districts": (_l("Districts"), _l("One district per line.")),
    "living_person_declaration": (_l("Declaration on the name"), _l("Art. 17: the signed declaration that the name "
                                                                    "is not a living person's.")),
    "ibge_code": (_l("IBGE code"), _l("The IBGE code given to the new municipality, when known.")),
    "reintegration": (_l("Reintegration"), _l("Art. 37: one line per origin municipality: IBGE code: share (1/3 or "
                                              "0,5).")),
    "valid_signatures": (_l("Valid signatures"), _l("The signatures the TRE certified as valid.")),
    "registered_voters": (_l("Registered voters"), _l("The voters registered in the municipality.")),
    "names": (_l("Names"), _l("Art. 20: the three names, one per line.")),
    "administrator": (_l("Administrator"), _l("One of the three names of the list.")),
    "mayor": (_l("Mayor"), _l("The Mayor taking office.")),
    "vice_mayor": (_l("Vice-Mayor"), _l("The Vice-Mayor taking office.")),
    "councillors": (_l("Councillors"), _l("One councillor per line.")),
    "origin": (_l("Origin municipality"), _l("The origin municipality that delivers.")),
    "organic_law": (_l("Organic law"), _l("The organic law's reference.")),
    "act": (_l("Act of the Câmara"), _l("The Câmara's act fixing the remuneration.")),
    "subject": (_l("Subject"), _l("What is communicated (Art. 40).")),
    "recipient": (_l("Recipient"), _l("Who receives the communication (Art. 40).")),
    "kind": (_l("Kind of case"), _l("What the petition asks for.")),
    "municipalities": (_l("Municipalities concerned"), _l("The origin municipality or municipalities.")),
    "receiving": (_l("Receiving municipality"), _l("The municipality that receives the area.")),
    "areas": (_l("Areas"), _l("One line per part of the area to emancipate.")),
    "district": (_l("District"), _l("The district's name.")),
    "area_km2": (_l("Area (km²)"), _l("The area in km², in Brazilian notation (420,5).")),
    "description": (_l("Description"), _l("What the part is (a locality, a vila).")),
    "proposed_name": (_l("Proposed name"), _l("The name proposed for the new municipality.")),
    "signatures": (_l("Voters' signatures"), _l("Art. 8: one line per voter.")),
    "title": (_l("Voter title"), _l("12 digits, state code 24 for Acre.")),
    "zone": (_l("Zone"), _l("Electoral zone.")),
    "section": (_l("Section"), _l("Electoral section.")),
    "area": (_l("Part of the area"), _l("The IBGE code or the district of the part the voter lives in (may be left "
                                        "out when the area has one part).")),
    "documents": (_l("Art. 4 documents"), _l("Art. 9: the reference of the document proving each item of Art. 4 "
                                             "(Certidão IBGE 1/2026).")),
}


def label(name: str) -> str:
    found = FIELDS.get(name)
    return str(found[0]) if found else name


def help_of(name: str) -> str:
    found = FIELDS.get(name)
    return str(found[1]) if found else ""
