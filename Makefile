# Two commands do all the set-up on a fresh machine with Python 3.11+: `make run` and `make test`.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

export TRAMITA_DATABASE_URL ?= sqlite:///var/tramita.sqlite
# The port `make run` serves on, on 127.0.0.1: `make run PORT=8080` when 8000 is taken.
PORT ?= 8000

.PHONY: run test bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# Reinstall whenever the project's metadata changes.
$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

var:
	mkdir -p var

## make run: migrate, seed the demo on SQLite (once), then the API (on 127.0.0.1:$(PORT)), the projector and the
## scheduler until Ctrl-C; the demo's tokens are printed last and kept in var/demo-tokens.json across restarts.
## The demo's audit log is signed with var/tramita-signing.key (made at the first run) and its checkpoints are
## copied to var/witness (in production both live off the database's machine: docs/audit.md).
run: $(STAMP) | var
	TRAMITA_SIGNING_KEY=$${TRAMITA_SIGNING_KEY:-var/tramita-signing.key} \
	TRAMITA_WITNESS_DIR=$${TRAMITA_WITNESS_DIR:-var/witness} $(BIN)/tramita up --bind 127.0.0.1:$(PORT)

## make test: every test.
test: $(STAMP)
	$(BIN)/python -m pytest

## make bench: recording acts against the library's saves on SQLite (wall ratio, CPU per act; an act's cost on a
## 1,000-event case, warm and first in a fresh process, and at the 400th case on one municipality), on a throwaway
## PostgreSQL cluster (where its server binaries are found; make goes on without it) and, for information, in
## memory; the same comparison counted in instructions (where valgrind is installed); rebuilding the projections
## from a 1,000,000-event log (EVENTS=N for fewer) against the same decoder's read, in rounds, with its RSS; the
## scheduler's scan per due deadline with 1,000 and 100,000 open deadlines (1% due); what the scheduler pays
## to read 10,000 alerts' events at a restart, then the HTTP API
## under 16 concurrent clients (gunicorn on SQLite) against the same acts
## in-process, then a normal request while hostile clients hold the HTTP edge (nginx in front, the servers alone),
## then the full verification of a signed, checkpointed log against the library's decoded read, and an
## act's CPU with signing and the tree's append against without, then a case read as of a legal date against the
## raw replay of the same events, then the printable case file of a 1,000-event case against its JSON timeline,
## then the case file page of a 200-act case against its JSON timeline, and last the writer ceiling on PostgreSQL
## (where its server binaries are found; make goes on without it otherwise); then a cosigning witness's
## add-checkpoint over HTTP against its own work in process.
bench: $(STAMP)
	$(BIN)/python bench/record_acts.py --store sqlite
	-$(BIN)/python bench/record_acts.py --store postgres
	$(BIN)/python bench/record_acts.py --store memory --no-growth
	-$(BIN)/python bench/record_acts.py --instructions --store memory
	$(BIN)/python bench/rebuild.py $(if $(EVENTS),--events $(EVENTS))
	$(BIN)/python bench/alert_scan.py
	$(BIN)/python bench/alert_events.py
	$(BIN)/python bench/api_load.py
	$(BIN)/python bench/edge.py
	$(BIN)/python bench/verify.py $(if $(EVENTS),--events $(EVENTS))
	$(BIN)/python bench/as_of.py
	$(BIN)/python bench/dossier.py
	$(BIN)/python bench/pages.py
	-$(BIN)/python bench/pg_writers.py
	$(BIN)/python bench/witness.py

clean:
	rm -rf $(VENV) var .pytest_cache
