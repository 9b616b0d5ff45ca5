# tutor brain — the two commands a newcomer needs: `make demo` and `make test`.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: install test lint format demo serve dev migrate worker beat db-stop clean-db

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

# Reinstall when the dependency list changes.
$(STAMP): pyproject.toml | $(PY)
	$(PY) -m pip install --quiet -e '.[dev]'
	@touch $(STAMP)

install: $(STAMP)

test: $(STAMP)
	$(VENV)/bin/ruff check .
	$(PY) -m pytest

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy memory concepts beliefs tutorbrain config

format: $(STAMP)
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

migrate: $(STAMP)
	$(PY) manage.py migrate --no-input

# The production server: gunicorn, settings in config/gunicorn.py (2 processes x 4
# threads for 2 cores; each worker warms the embedder and the block path up first).
GUNICORN := $(VENV)/bin/gunicorn -c config/gunicorn.py --bind $(HOST):$(PORT) config.wsgi

# The main job: database, sample subject, a real memory block, then the server.
demo: migrate
	$(PY) manage.py demo --host $(HOST) --port $(PORT)
	$(GUNICORN)

serve: migrate
	$(GUNICORN)

# Django's development server: reloads on code changes; not for real traffic.
dev: migrate
	$(PY) manage.py runserver $(HOST):$(PORT)

worker: $(STAMP)
	$(VENV)/bin/celery -A config worker --loglevel=INFO --concurrency=2

beat: $(STAMP)
	$(VENV)/bin/celery -A config beat --loglevel=INFO

db-stop:
	@$(PY) -c "from config.embedded_db import stop; print('embedded PostgreSQL stopped' if stop() else 'embedded PostgreSQL was not running')"
