# Two commands on a fresh machine: `make run` (the whole service, embedded default)
# and `make test` (the test suite against DATABASE_URL, SQLite when unset).
PYTHON ?= python3
PORT ?= 8000
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test lint format migrate bootstrap clean

$(STAMP): requirements/base.txt requirements/dev.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -r requirements/dev.txt
	touch $(STAMP)

migrate: $(STAMP)
	$(BIN)/python manage.py migrate --noinput
	$(BIN)/python manage.py collectstatic --noinput --verbosity 0

bootstrap: migrate
	$(BIN)/python manage.py bootstrap

run: bootstrap
	# honcho hands out PORT from its base port: -p keeps web on $(PORT).
	PATH=$(CURDIR)/$(BIN):$$PATH $(BIN)/honcho start -p $(PORT) web worker beat

test: $(STAMP)
	$(BIN)/pytest $(PYTEST_ARGS)

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports
	$(BIN)/python manage.py makemigrations --check --dry-run

format: $(STAMP)
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

clean:
	rm -rf $(VENV) var
