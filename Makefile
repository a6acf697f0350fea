# Two entry points for a fresh machine: `make demo` (install, run the example end to end)
# and `make test` (install the dev extra, lint, run the tests). `.ci/run` calls `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STORE ?= prove-runs
PYTEST_ARGS ?=
# the suite is mostly console scripts in child processes: one pytest worker per core, and a
# worker that runs dry takes tests from the other (a few take 10-17 s each)
PYTEST_WORKERS ?= auto

.PHONY: demo test install install-dev system-deps lint bench test-ray test-real-model clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

install: $(BIN)/python
	$(BIN)/python -m pip install --quiet -e .

# Debian's Chromium drives the HTML report's browser test; installed only where we may (root + apt).
system-deps:
	@sh scripts/system-deps.sh

install-dev: $(BIN)/python system-deps
	$(BIN)/python -m pip install --quiet -e '.[dev]'

demo: install
	rm -rf $(STORE)
	$(BIN)/poisson-prove --store $(STORE) init --example --force
	$(BIN)/poisson-prove --store $(STORE) sweep prove.toml --yes
	$(BIN)/poisson-prove --store $(STORE) sweep prove.toml --yes --target poisson_prove.examples.mock_agent:rollout_patched --pair-with latest
	$(BIN)/poisson-prove --store $(STORE) diff
	$(BIN)/poisson-prove --store $(STORE) dashboard

lint: install-dev
	$(BIN)/ruff check --no-cache src tests benchmarks scripts
	$(BIN)/mypy

test: install-dev
	$(BIN)/ruff check --no-cache src tests benchmarks scripts
	$(BIN)/mypy
	$(BIN)/python -m pytest -n $(PYTEST_WORKERS) --dist worksteal --durations=25 $(PYTEST_ARGS)

test-ray: install-dev
	$(BIN)/python -m pip install --quiet -e '.[ray]'
	$(BIN)/python -m pytest -m ray $(PYTEST_ARGS)

# Opt-in: a real small model (SmolLM2-135M via llama-cpp-python, ~10 min to build) on 127.0.0.1.
test-real-model: install-dev
	bash scripts/real-model.sh $(PYTEST_ARGS)

bench: install-dev
	for f in benchmarks/bench_*.py; do $(BIN)/python $$f || exit 1; done

clean:
	rm -rf $(VENV) .venv-llm build dist src/*.egg-info
