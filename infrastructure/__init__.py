"""The adapters every outer package shares: the read models' database (`store`), the database URL's settings
(`persistence`), the SQLite event store's connections (`sqlite`) and the signed webhook POST (`webhook`).

It imports the domain and nothing else of tramita, so the audit log, the projections, the scheduler and the API
can all stand on it without importing each other.
"""
