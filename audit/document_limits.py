"""How much the document store keeps, and for how long: a quota per body and the expiry of uncited documents.

A body (a token's role, with its municipality when the role is municipal: `body_of`) may add at most
`TRAMITA_DOCUMENT_QUOTA_BYTES_PER_DAY` bytes of new documents per legal day (Rio Branco's, as every date of the
system), at most `TRAMITA_DOCUMENT_QUOTA_DOCUMENTS_PER_DAY` new documents per legal day (each uncited one ends as a
removal recorded in the event log), and keep at most `TRAMITA_DOCUMENT_QUOTA_BYTES` bytes of the documents it
added; 0 lifts any of them.
Bytes already stored add nothing, whoever sends them again. A document that no act cites is removed
`TRAMITA_DOCUMENT_EXPIRY_DAYS` after its last upload (audit/documents.py `DocumentStore.expire`), which gives its
bytes back to the body's total. The settings are read here, below the API and the scheduler, which both use them.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from domain.acts import Actor
from domain.application import LEGAL_TIMEZONE as RIO_BRANCO

MIB = 1024 * 1024
#: A body's new documents per legal day by default: twenty documents of the largest default size (10 MiB).
DEFAULT_QUOTA_BYTES_PER_DAY = 200 * MIB
#: What a body's documents may hold in all by default: ten days at the daily quota, more than a week of them
#: (the expiry) keeps, so that the total binds only a body whose documents are cited.
DEFAULT_QUOTA_BYTES = 2048 * MIB
#: New documents a body may add per legal day by default: each one no act cites ends as one removal recorded in the
#: event log (forever), so their number is bounded as well as their bytes.
DEFAULT_QUOTA_DOCUMENTS_PER_DAY = 200
#: Days an uploaded document waits for an act to cite it before it is removed, by default.
DEFAULT_EXPIRY_DAYS = 7
#: The longest expiry accepted (ten years).
MAX_EXPIRY_DAYS = 3650
#: The largest quota that may be written (a petabyte: beyond, a mistyped number).
MAX_QUOTA_BYTES = 10**15
SETTINGS = {"TRAMITA_DOCUMENT_QUOTA_BYTES_PER_DAY": str(DEFAULT_QUOTA_BYTES_PER_DAY),
            "TRAMITA_DOCUMENT_QUOTA_BYTES": str(DEFAULT_QUOTA_BYTES),
            "TRAMITA_DOCUMENT_QUOTA_DOCUMENTS_PER_DAY": str(DEFAULT_QUOTA_DOCUMENTS_PER_DAY),
            "TRAMITA_DOCUMENT_EXPIRY_DAYS": str(DEFAULT_EXPIRY_DAYS)}


@dataclass(frozen=True)
class Quota:
    """The bytes of new documents a body may add per legal day and keep in all, and how many new documents it may
    add per legal day (0: no limit)."""

    per_day: int = DEFAULT_QUOTA_BYTES_PER_DAY
    total: int = DEFAULT_QUOTA_BYTES
    documents_per_day: int = DEFAULT_QUOTA_DOCUMENTS_PER_DAY

    def check(self, size: int, used_today: int, used_in_all: int, added_today: int, now: datetime) -> None:
        """QuotaExceededError when one more document of `size` bytes would pass a limit: the total first (waiting
        for the next day does not help with it), then the day's (documents, then bytes), with the seconds left until
        the day ends in Rio Branco."""
        if self.total and used_in_all + size > self.total:
            raise QuotaExceededError("TRAMITA_DOCUMENT_QUOTA_BYTES", used_in_all, self.total, size, None)
        if self.documents_per_day and added_today + 1 > self.documents_per_day:
            raise QuotaExceededError("TRAMITA_DOCUMENT_QUOTA_DOCUMENTS_PER_DAY", added_today, self.documents_per_day,
                                     1, seconds_to_next_day(now))
        if self.per_day and used_today + size > self.per_day:
            raise QuotaExceededError("TRAMITA_DOCUMENT_QUOTA_BYTES_PER_DAY", used_today, self.per_day, size,
                                     seconds_to_next_day(now))


class QuotaExceededError(Exception):
    """A new document would take its body past a quota (`quota`: the setting's name; `used`, `limit` and `size` in
    its unit: bytes, or documents for TRAMITA_DOCUMENT_QUOTA_DOCUMENTS_PER_DAY); nothing was stored."""

    def __init__(self, quota: str, used: int, limit: int, size: int, retry_after: int | None) -> None:
        super().__init__(f"{quota}: {used} of {limit} used, {size} more asked")
        self.quota, self.used, self.limit, self.size, self.retry_after = quota, used, limit, size, retry_after


def body_of(actor: Actor) -> str:
    """The body a token acts for, as its quota is counted: the role, and the municipality of a municipal role."""
    return f"{actor.role}:{actor.municipality}" if actor.municipality else actor.role


def legal_day(now: datetime) -> date:
    """The day `now` is in Rio Branco (a naive `now` is taken as UTC)."""
    aware = now if now.tzinfo is not None else now.replace(tzinfo=ZoneInfo("UTC"))
    return aware.astimezone(RIO_BRANCO).date()


def seconds_to_next_day(now: datetime) -> int:
    """Whole seconds, at least 1, from `now` to the next midnight in Rio Branco."""
    aware = now if now.tzinfo is not None else now.replace(tzinfo=ZoneInfo("UTC"))
    midnight = datetime.combine(legal_day(now) + timedelta(days=1), time(), RIO_BRANCO)
    return max(1, math.ceil((midnight - aware).total_seconds()))


def quota_lock_key(body: str) -> int:
    """The PostgreSQL advisory lock a body's uploads take in turn (a signed 64-bit number from its name)."""
    return int.from_bytes(hashlib.sha256(f"tramita-document-quota:{body}".encode()).digest()[:8], "big", signed=True)


def _whole(settings: Mapping[str, str], name: str, low: int, high: int, unit: str) -> int:
    text = settings.get(name, SETTINGS[name]).strip()
    if not re.fullmatch(r"[0-9]{1,16}", text) or not low <= int(text) <= high:
        raise ValueError(f"{name}: {settings.get(name)!r} is not a whole number of {unit} from {low} to {high}")
    return int(text)


def quota_from(settings: Mapping[str, str]) -> Quota:
    """The quota the `TRAMITA_*` settings give (refused by name when not a number of bytes)."""
    return Quota(_whole(settings, "TRAMITA_DOCUMENT_QUOTA_BYTES_PER_DAY", 0, MAX_QUOTA_BYTES, "bytes (0: no limit)"),
                 _whole(settings, "TRAMITA_DOCUMENT_QUOTA_BYTES", 0, MAX_QUOTA_BYTES, "bytes (0: no limit)"),
                 _whole(settings, "TRAMITA_DOCUMENT_QUOTA_DOCUMENTS_PER_DAY", 0, MAX_QUOTA_BYTES,
                        "documents (0: no limit)"))


def expiry_days_from(settings: Mapping[str, str]) -> int:
    """TRAMITA_DOCUMENT_EXPIRY_DAYS: at least a day, so that a document never expires on the legal day it was
    added (and so never gives back bytes of the day's quota)."""
    return _whole(settings, "TRAMITA_DOCUMENT_EXPIRY_DAYS", 1, MAX_EXPIRY_DAYS, "days")
