# Set-up and checks for kafka-topic-operator.
#
#   make demo   install what is missing, then run `kto demo` against a throwaway local ZooKeeper
#   make test   install what is missing, lint, then run the whole test suite (what CI runs)
#   make dist   build kto's wheel into dist/, and beside it the wheels it installs from with no index
#
# Every target is safe to re-run: system packages are installed only when missing, and the virtualenv is
# rebuilt only when pyproject.toml changed since the last install (the stamp file records when that was).

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help
MAKEFLAGS += --no-print-directory

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
INSTALL_STAMP := $(VENV)/.installed-extras-dev-spark-docs
LINT_PATHS := $(wildcard operator tests bench tools)
PYTEST_ARGS ?=
DIST := dist
WHEELHOUSE := $(DIST)/wheels
WHEELHOUSE_STAMP := $(WHEELHOUSE)/.built-from-pyproject
PIP_QUIET := --disable-pip-version-check --progress-bar off -q

# apt needs root; sudo only when we are not root already (CI and the dev machines run as root).
SUDO := $(if $(filter 0,$(shell id -u)),,sudo)
APT_GET := $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get

.PHONY: help system-deps venv lint test test-fast demo dist bench docs docs-reference clean

help:
	@echo "make demo       run 'kto demo' (installs what is missing first)"
	@echo "make test       lint + the whole test suite (what CI runs)"
	@echo "make test-fast  tests without the slow (ensemble) and Spark ones"
	@echo "make dist       build kto's wheel into dist/ (install it with: pipx install dist/kafka_topic_operator-*.whl)"
	@echo "make lint       ruff check, ruff format --check, mypy --strict"
	@echo "make bench      run every bench/*.py"
	@echo "make docs       build the documentation site into site/ (strict: a broken link or anchor fails)"
	@echo "make docs-reference  regenerate docs/reference/ from the code (CRDs, CLI, metrics, reasons, settings, Helm values)"
	@echo "make venv       create .venv and install the project with its dev and spark extras"
	@echo "make system-deps  Debian's zookeeper (brings Java), etcd-server, prometheus (promtool), python3-venv when missing"

# Debian's zookeeper package provides the real server the tests and the demo start, and pulls in a JRE (which
# Spark and the real Kafka brokers of ../shared/servers need too); etcd-server is the store of the real
# kube-apiserver that the tests/real tier starts; prometheus provides promtool, which checks and unit-tests the
# alert rules; graphviz renders the documentation site's pictures when it is built, and Debian's chromium opens
# the built site headless in the tests (it renders, and its search finds what it should). `dpkg-query` rather than `dpkg -s`: the latter also succeeds for a package that was removed but
# left its configuration files behind.
system-deps:
	@missing=""; \
	for package in zookeeper etcd-server prometheus graphviz chromium; do \
		dpkg-query -W -f='$${Status}' $$package 2>/dev/null | grep -q 'ok installed' || missing="$$missing $$package"; \
	done; \
	$(PYTHON) -c 'import ensurepip, venv' >/dev/null 2>&1 || missing="$$missing python3-venv"; \
	if [ -n "$$missing" ]; then \
		echo "system-deps: installing Debian packages:$$missing"; \
		$(APT_GET) update -q; \
		$(APT_GET) install -y -q --no-install-recommends $$missing; \
	fi; \
	command -v java >/dev/null || { echo "system-deps: no java on PATH after installing zookeeper" >&2; exit 1; }; \
	command -v promtool >/dev/null || { echo "system-deps: no promtool on PATH after installing prometheus" >&2; exit 1; }; \
	command -v dot >/dev/null || { echo "system-deps: no dot on PATH after installing graphviz" >&2; exit 1; }

venv: $(INSTALL_STAMP)

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(INSTALL_STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --disable-pip-version-check --progress-bar off -e '.[dev,spark,docs]'
	@touch $@

lint: venv
	$(BIN)/ruff check $(LINT_PATHS)
	$(BIN)/ruff format --check $(LINT_PATHS)
	$(BIN)/mypy
	@if grep -q '^\[tool\.importlinter\]' pyproject.toml || [ -f .importlinter ]; then \
		$(BIN)/lint-imports; \
	else \
		echo "lint: no import-linter contracts configured yet"; \
	fi

# pytest exits non-zero (5) when it collects no test: that must stay a failure, so nothing here masks it. The
# wheelhouse of `make dist` is there for the test of a user's install, which builds and installs kto offline.
test: system-deps venv lint dist
	$(BIN)/pytest -n 2 --dist loadgroup $(PYTEST_ARGS)

test-fast: system-deps venv
	$(BIN)/pytest -m "not slow and not spark" $(PYTEST_ARGS)

demo: system-deps venv
	$(BIN)/kto demo

# dist/ holds kto's wheel, for `pipx install` on any machine, and dist/wheels/ every wheel it needs (with pip,
# setuptools and wheel): `PIP_NO_INDEX=1 PIP_FIND_LINKS=dist/wheels pipx install dist/kafka_topic_operator-*.whl`
# installs it with no index (pipx's own pip included), and the wheel itself is built from that wheelhouse. The wheelhouse is fetched again
# only when pyproject.toml changes; the project's wheel is built each time, from the source as it is.
dist: $(WHEELHOUSE_STAMP)
	rm -f $(DIST)/kafka_topic_operator-*.whl
	$(BIN)/pip wheel $(PIP_QUIET) --no-deps --no-index --find-links $(WHEELHOUSE) -w $(DIST) .

$(WHEELHOUSE_STAMP): pyproject.toml | $(INSTALL_STAMP)
	rm -rf $(WHEELHOUSE)
	$(BIN)/pip wheel $(PIP_QUIET) -w $(WHEELHOUSE) . pip setuptools wheel
	rm -f $(WHEELHOUSE)/kafka_topic_operator-*.whl
	@touch $@

bench: system-deps venv
	@shopt -s nullglob; benches=(bench/*.py); \
	if [ $${#benches[@]} -eq 0 ]; then echo "bench: no bench/*.py yet"; exit 0; fi; \
	for bench in "$${benches[@]}"; do \
		echo "== $$bench"; \
		$(BIN)/python "$$bench"; \
	done

# The site is built with nothing from the network: its pictures are rendered here by Graphviz, its fonts are the
# reader's own, and its search index is built into the site.
docs: system-deps venv
	$(BIN)/mkdocs build --strict --site-dir site

# The reference pages are generated from the code, never edited by hand; tests/docs/test_reference_is_current.py
# fails when one is stale and names this target.
docs-reference: venv
	$(BIN)/python -m tools.docs_reference

clean:
	rm -rf $(VENV) $(DIST) build site .pytest_cache .mypy_cache .ruff_cache .hypothesis operator/*.egg-info
