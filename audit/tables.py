"""The audit record's tables, on SQLite and PostgreSQL: the Merkle log's (what each holds: `audit/log.py`'s
docstring), the documents acts cite (`audit/documents.py`'s) and the pages' ended sessions
(`api/pages/session.py`'s), all created by `tramita migrate`."""

DDL = {
    "sqlite": [
        "CREATE TABLE IF NOT EXISTS audit_state (id INTEGER PRIMARY KEY CHECK (id = 1), size INTEGER NOT NULL, "
        "position INTEGER NOT NULL)",
        "CREATE TABLE IF NOT EXISTS audit_leaves (leaf_index INTEGER PRIMARY KEY, notification_id INTEGER NOT NULL, "
        "originator_id TEXT NOT NULL, originator_version INTEGER NOT NULL, event_hash TEXT NOT NULL)",
        "CREATE INDEX IF NOT EXISTS ix_audit_leaves_event ON audit_leaves (originator_id, originator_version)",
        "CREATE TABLE IF NOT EXISTS audit_nodes (level INTEGER NOT NULL, idx INTEGER NOT NULL, hash BLOB NOT NULL, "
        "PRIMARY KEY (level, idx))",
        "CREATE TABLE IF NOT EXISTS audit_checkpoints (size INTEGER PRIMARY KEY, root TEXT NOT NULL, "
        "note TEXT NOT NULL, signed_at TEXT NOT NULL, legal_date TEXT NOT NULL)",
        "CREATE TABLE IF NOT EXISTS audit_witnessed (size INTEGER NOT NULL, witness TEXT NOT NULL, "
        "delivered_at TEXT NOT NULL, PRIMARY KEY (size, witness))",
    ],
    "postgresql": [
        "CREATE TABLE IF NOT EXISTS audit_state (id INTEGER PRIMARY KEY CHECK (id = 1), size BIGINT NOT NULL, "
        "position BIGINT NOT NULL)",
        "CREATE TABLE IF NOT EXISTS audit_leaves (leaf_index BIGINT PRIMARY KEY, notification_id BIGINT NOT NULL, "
        "originator_id TEXT NOT NULL, originator_version BIGINT NOT NULL, event_hash TEXT NOT NULL)",
        "CREATE INDEX IF NOT EXISTS ix_audit_leaves_event ON audit_leaves (originator_id, originator_version)",
        "CREATE TABLE IF NOT EXISTS audit_nodes (level INTEGER NOT NULL, idx BIGINT NOT NULL, hash BYTEA NOT NULL, "
        "PRIMARY KEY (level, idx))",
        "CREATE TABLE IF NOT EXISTS audit_checkpoints (size BIGINT PRIMARY KEY, root TEXT NOT NULL, "
        "note TEXT NOT NULL, signed_at TEXT NOT NULL, legal_date TEXT NOT NULL)",
        "CREATE TABLE IF NOT EXISTS audit_witnessed (size BIGINT NOT NULL, witness TEXT NOT NULL, "
        "delivered_at TEXT NOT NULL, PRIMARY KEY (size, witness))",
    ],
}

DOCUMENT_DDL = {
    "sqlite": [
        "CREATE TABLE IF NOT EXISTS documents (sha256 TEXT PRIMARY KEY, media_type TEXT NOT NULL, "
        "size INTEGER NOT NULL, content BLOB NOT NULL, stored_at TEXT NOT NULL)",
        "CREATE TABLE IF NOT EXISTS document_uploads (sha256 TEXT NOT NULL, token_id TEXT NOT NULL, "
        "uploaded_at TEXT NOT NULL, PRIMARY KEY (sha256, token_id))",
        "CREATE TABLE IF NOT EXISTS document_additions (sha256 TEXT PRIMARY KEY, body TEXT NOT NULL, "
        "size INTEGER NOT NULL, added_on TEXT NOT NULL)",
        "CREATE INDEX IF NOT EXISTS ix_document_additions_body ON document_additions (body, added_on)",
        "CREATE TABLE IF NOT EXISTS document_removals (sha256 TEXT NOT NULL, stored_at TEXT NOT NULL, "
        "removed_at TEXT NOT NULL, message TEXT NOT NULL, recorded INTEGER NOT NULL, PRIMARY KEY (sha256, stored_at))",
    ],
    "postgresql": [
        "CREATE TABLE IF NOT EXISTS documents (sha256 TEXT PRIMARY KEY, media_type TEXT NOT NULL, "
        "size BIGINT NOT NULL, content BYTEA NOT NULL, stored_at TEXT NOT NULL)",
        "CREATE TABLE IF NOT EXISTS document_uploads (sha256 TEXT NOT NULL, token_id TEXT NOT NULL, "
        "uploaded_at TEXT NOT NULL, PRIMARY KEY (sha256, token_id))",
        "CREATE TABLE IF NOT EXISTS document_additions (sha256 TEXT PRIMARY KEY, body TEXT NOT NULL, "
        "size BIGINT NOT NULL, added_on TEXT NOT NULL)",
        "CREATE INDEX IF NOT EXISTS ix_document_additions_body ON document_additions (body, added_on)",
        "CREATE TABLE IF NOT EXISTS document_removals (sha256 TEXT NOT NULL, stored_at TEXT NOT NULL, "
        "removed_at TEXT NOT NULL, message TEXT NOT NULL, recorded INTEGER NOT NULL, PRIMARY KEY (sha256, stored_at))",
    ],
}
#: The pages' sessions ended by signing out (api/pages/session.py): each session's id until the session would have
#: expired anyway (`ends_at`, seconds since the epoch), then pruned.
SESSION_DDL = {
    "sqlite": ["CREATE TABLE IF NOT EXISTS ended_sessions (session_id TEXT PRIMARY KEY, ends_at INTEGER NOT NULL)"],
    "postgresql": ["CREATE TABLE IF NOT EXISTS ended_sessions (session_id TEXT PRIMARY KEY, ends_at BIGINT NOT NULL)"],
}
for _extra in (DOCUMENT_DDL, SESSION_DDL):
    for _dialect, _statements in _extra.items():
        DDL[_dialect] = DDL[_dialect] + _statements


def text_of(dialect: str, column: str) -> str:
    """A text column as a read must take it whatever it holds (`read_text` turns it back into text): SQLite's columns
    take any value, and its driver raises on text that is not UTF-8, so there text is read as its bytes and any
    other type as NULL. PostgreSQL refuses such text when it is written: the column itself."""
    return f"CASE WHEN typeof({column}) = 'text' THEN CAST({column} AS BLOB) END" if dialect == "sqlite" else column


def count_of(dialect: str, column: str) -> str:
    """An integer column as a read must take it whatever it holds: on SQLite, anything but an integer as NULL."""
    return f"CASE WHEN typeof({column}) = 'integer' THEN {column} END" if dialect == "sqlite" else column


def read_text(value: object) -> str | None:
    """What `text_of` read, as text (bytes that are not UTF-8 as U+FFFD); None for NULL or a value of another type."""
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return value if isinstance(value, str) else None
