# Two commands do all the set-up on a fresh machine with Python 3.11+: `make run` and `make test`.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

export TRAMITA_DATABASE_URL ?= sqlite:///var/tramita.sqlite

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

## make run: create the tables, seed the demo cases on SQLite (once), bring the projections up to date, verify.
run: $(STAMP) | var
	$(BIN)/tramita migrate
	$(BIN)/tramita seed-demo
	$(BIN)/tramita project --once
	$(BIN)/tramita verify

## make test: every test.
test: $(STAMP)
	$(BIN)/python -m pytest

## make bench: recording acts, rebuilding the projections from a 1,000,000-event log (EVENTS=N for fewer), then the
## HTTP API under 16 concurrent clients (gunicorn on SQLite) against the in-process service rate.
bench: $(STAMP)
	$(BIN)/python bench/record_acts.py
	$(BIN)/python bench/rebuild.py $(if $(EVENTS),--events $(EVENTS))
	$(BIN)/python bench/api_load.py

clean:
	rm -rf $(VENV) var .pytest_cache
