"""tramita's wiring and command line: the one place where the store, the clock, the statute and the signing key
meet (`tramita.bootstrap`), the database URL's settings (`infrastructure.persistence`), and the `tramita` command
(`tramita.cli`) that every process (API, projector, scheduler, administration) starts from.
"""
