"""The read models' tables: one definition, created on SQLite and PostgreSQL alike.

Dates are ISO text (they sort as dates), lists and maps are JSON text. Constraint and index names carry a
build token, so that `rebuild` can build a projection's tables beside the live ones and swap them in.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Table:
    name: str
    columns: tuple[tuple[str, str], ...]
    key: tuple[str, ...]
    owner: str
    """The column naming the aggregate whose state the row comes from (rows are replaced per aggregate)."""
    indexes: tuple[tuple[str, ...], ...] = ()

    @property
    def column_names(self) -> list[str]:
        return [name for name, _ in self.columns]

    def ddl(self, physical: str, token: str) -> list[str]:
        """The statements that create the table (named `physical`) and its indexes."""
        return [self.table_ddl(physical, token), *self.index_ddl(physical, token)]

    def table_ddl(self, physical: str, token: str) -> str:
        """The table with its primary key, without its other indexes (a rebuild fills it first, then indexes it)."""
        columns = ", ".join(f"{name} {kind}" for name, kind in self.columns)
        key = f"CONSTRAINT pk_{self.name}_{token} PRIMARY KEY ({', '.join(self.key)})"
        return f"CREATE TABLE {physical} ({columns}, {key})"

    def index_ddl(self, physical: str, token: str) -> list[str]:
        return [f"CREATE INDEX ix_{self.name}_{'_'.join(index)}_{token} ON {physical} ({', '.join(index)})"
                for index in self.indexes]


@dataclass(frozen=True)
class Projection:
    name: str
    aggregates: tuple[str, ...]
    """The aggregate kinds whose rows it holds ("case", "municipality", "alert")."""
    tables: tuple[Table, ...] = field(default_factory=tuple)
    amended_by: tuple[str, ...] = ()
    """Aggregate kinds that own no row of it but whose state sets columns of rows another aggregate owns
    (`rows.AMENDS`): an alert `missed` ends its deadline's alerts."""
    reading: int = 1
    """Which reading of the aggregates' state its rows are (projections/rows.py): raised when the same state gives
    other rows, so that `tramita migrate` rebuilds tables written by the reading before."""

    @property
    def fingerprint(self) -> str:
        """A digest of the tables' definitions (and of the kinds that amend them, and of the rows' reading): live
        tables built from another one must be rebuilt."""
        shape = [(t.name, t.columns, t.key, t.owner, t.indexes) for t in self.tables]
        if self.amended_by:  # a projection no aggregate amends keeps the fingerprint it had before amendments
            shape.append(self.amended_by)
        if self.reading > 1:  # a projection read as at first keeps the fingerprint it had before readings
            shape.append(("reading", self.reading))
        return hashlib.sha256(repr(shape).encode()).hexdigest()[:16]


TEXT, INT = "TEXT", "INTEGER"

PROJECTIONS: dict[str, Projection] = {p.name: p for p in (
    Projection("cases", ("case",), (
        Table("cases", (
            ("case_id", TEXT), ("number", TEXT), ("kind", TEXT), ("stage", TEXT), ("initiator", TEXT),
            ("municipalities", TEXT), ("receiving", TEXT), ("name", TEXT), ("district", TEXT), ("seat", TEXT),
            ("new_municipality", TEXT), ("impediments", TEXT), ("open_impediments", INT),
            ("frozen_municipalities", TEXT), ("open_deadlines", INT), ("next_due_on", TEXT),
            ("next_due_deadline", TEXT), ("next_due_article", TEXT), ("next_due_who", TEXT), ("last_act", TEXT),
            ("last_act_on", TEXT), ("last_recorded_at", TEXT), ("opened_on", TEXT), ("law", TEXT), ("law_on", TEXT),
            ("concluded_on", TEXT), ("archived_on", TEXT), ("version", INT), ("search", TEXT), ("breaches", TEXT),
        ), key=("case_id",), owner="case_id", indexes=(("kind", "stage"), ("stage",), ("number",), ("breaches",))),
        Table("case_municipalities", (("case_id", TEXT), ("municipality", TEXT), ("role", TEXT)),
              key=("case_id", "municipality", "role"), owner="case_id", indexes=(("municipality",),)),
    )),
    Projection("deadlines", ("case",), (
        Table("deadlines", (
            ("case_id", TEXT), ("deadline", TEXT), ("case_number", TEXT), ("case_kind", TEXT), ("rule", TEXT),
            ("article", TEXT), ("who", TEXT), ("municipality", TEXT), ("starts_on", TEXT), ("due_on", TEXT),
            ("status", TEXT), ("closed_by", TEXT), ("closed_on", TEXT), ("days_late", INT), ("alerts_due_on", TEXT),
        ), key=("case_id", "deadline"), owner="case_id", indexes=(("status", "due_on"), ("alerts_due_on",))),
    ), amended_by=("alert",)),
    Projection("freezes", ("municipality",), (
        Table("freezes", (
            ("municipality", TEXT), ("case_id", TEXT), ("since", TEXT), ("municipality_name", TEXT),
            ("case_number", TEXT), ("lifted_on", TEXT), ("active", INT),
        ), key=("municipality", "case_id", "since"), owner="municipality", indexes=(("active", "municipality"),)),
    )),
    Projection("alerts", ("alert",), (
        Table("alerts", (
            ("alert_id", TEXT), ("case_id", TEXT), ("case_number", TEXT), ("deadline", TEXT), ("kind", TEXT),
            ("rule", TEXT), ("article", TEXT), ("who", TEXT), ("municipality", TEXT), ("due_on", TEXT),
            ("days_overdue", INT), ("raised_on", TEXT), ("raised_at", TEXT), ("delivery", TEXT),
            ("delivery_tries", INT), ("delivery_error", TEXT), ("subject", TEXT), ("message", TEXT),
        ), key=("alert_id",), owner="alert_id", indexes=(("raised_at",), ("case_id",), ("delivery",))),
    )),
    Projection("deliveries", ("alert",), (
        Table("alert_deliveries", (
            ("alert_id", TEXT), ("subscription_id", TEXT), ("delivery", TEXT), ("tries", INT), ("error", TEXT),
        ), key=("alert_id", "subscription_id"), owner="alert_id", indexes=(("subscription_id", "delivery"),)),
    )),
    Projection("attachments", ("case",), (
        Table("case_attachments", (
            ("case_id", TEXT), ("act_version", INT), ("sha256", TEXT), ("case_number", TEXT), ("act", TEXT),
            ("name", TEXT), ("media_type", TEXT), ("size", INT), ("occurred_on", TEXT),
        ), key=("case_id", "act_version", "sha256"), owner="case_id", indexes=(("sha256",),)),
    )),
    Projection("municipalities", ("municipality",), (
        Table("municipalities", (
            ("code", TEXT), ("name", TEXT), ("uf", TEXT), ("figures", TEXT), ("districts", TEXT),
            ("frozen", INT), ("frozen_by", TEXT), ("ceased", TEXT), ("created_by_case", TEXT), ("search", TEXT),
            ("version", INT),
        ), key=("code",), owner="code", indexes=(("search",),)),
    ), reading=2),  # 2: a figure as the rules read it now (`Municipality.entry_on`), not the first of its latest date
)}

TRACKING = ("CREATE TABLE IF NOT EXISTS projection_tracking "
            "(projection TEXT PRIMARY KEY, position BIGINT NOT NULL, token TEXT NOT NULL, fingerprint TEXT NOT NULL)")

#: The aggregates a projection could not write (projections/projector.py): one row per (projection, aggregate)
#: while its rows are stale; the first notification that failed, the last one, its event type and why.
FAILURES = ("CREATE TABLE IF NOT EXISTS projection_failures "
            "(projection TEXT NOT NULL, aggregate_id TEXT NOT NULL, aggregate_kind TEXT NOT NULL, "
            "notification_id BIGINT NOT NULL, last_notification_id BIGINT NOT NULL, topic TEXT NOT NULL, "
            "error TEXT NOT NULL, PRIMARY KEY (projection, aggregate_id))")
