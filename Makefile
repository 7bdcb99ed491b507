# The two commands of the README: `make demo` and `make test`. Each sets up .venv itself.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint bench clean browser

# setup.py compiles the replay engine's modules (_compiled.py lists them) with mypyc: an
# edit to one of them re-runs the install, which rebuilds them (until then the edited
# sources run as plain Python, with a warning)
ENGINE_SRC := _compiled.py setup.py events/hashing.py events/timestamps.py replay/findings.py \
	replay/variant.py replay/engine.py $(wildcard replay/rules/*.py) fraud/handeval.py

$(STAMP): pyproject.toml $(ENGINE_SRC)
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev,ray,bench]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/rummyguard demo

# Two passes: everything on the engine as installed (compiled, when the build worked),
# then the tests that need its Python sources (marked pure_source) on those sources.
# --dist loadfile: a file's tests run in one worker, so a module fixture (a simulated
# world, a scanned store) is built once; xdist's default spread some files over both
# workers, and each built the file's world again (audit 28's, ~140 s, twice).
test: $(STAMP) browser
	$(BIN)/ruff check .
	$(BIN)/pytest -n 2 --dist loadfile
	RUMMYGUARD_PURE=1 $(BIN)/pytest -n 2 --dist loadfile -m pure_source

# The HTML replay page is tested in a real headless Chromium (Debian's package, driven by
# Playwright from the dev extra; never `playwright install`). Installed once, as root, when
# missing; if that cannot be done the browser tests skip and say why.
CHROMIUM := /usr/bin/chromium
browser:
	@if [ ! -x $(CHROMIUM) ] && [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		echo "installing chromium for the browser tests (apt-get)"; \
		{ DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
		  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
		    chromium chromium-driver fonts-dejavu-core >/dev/null; } \
		|| echo "could not install chromium: the browser tests will be skipped"; \
	fi

lint: $(STAMP)
	$(BIN)/ruff check .

# Every speed harness in turn (each prints JSON; RESULTS.md records machine and command).
BENCHES := bench_ingest bench_insert_schema bench_replay bench_sim bench_scan bench_merkle bench_e2e bench_eventsourcing bench_fit
bench: $(STAMP)
	@for b in $(BENCHES); do echo "== $$b"; $(BIN)/python -m benchmarks.$$b || exit 1; done

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .ruff_cache native.json
	find . -name "*.so" -not -path "./.venv/*" -delete
