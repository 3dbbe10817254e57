# Two commands: `make run` (install, then the whole workflow on this machine's profile) and
# `make test`. PROFILE defaults to the profile matching this machine's GPU (cpu where there is none).
VENV ?= .venv
PY := $(VENV)/bin/python

.PHONY: run test install
run: $(VENV)/.installed
	PATH="$(abspath $(VENV))/bin:$$PATH" snakemake --profile $${PROFILE:-$$($(PY) -m membound.detect)} all

test: $(VENV)/.installed
	$(PY) -m pytest

install: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml $(wildcard profiles/*/config.v8+.yaml)
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test]'
	$(PY) -m membound.profiles install
	touch $@
