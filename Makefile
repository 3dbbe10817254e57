# Two commands: `make run` (install, then the whole workflow on this machine's profile) and
# `make test`. PROFILE defaults to the profile matching this machine's GPU (cpu where there is none).
# A checkout whose path holds a space gets its venv outside it: Snakemake runs `script:` rules with
# the interpreter's path unquoted (snakemake/snakemake#2645).
ifeq ($(word 2,$(CURDIR)),)
VENV ?= .venv
else
VENV ?= $(HOME)/.cache/membound/venv-$(shell printf %s '$(CURDIR)' | cksum | cut -d' ' -f1)
endif
PY := $(VENV)/bin/python

.PHONY: run test install
run: install
	@profile=$${PROFILE:-$$($(PY) -m membound.detect)} && $(PY) -m membound.profiles check "$$profile" && \
	echo "make run: snakemake --profile profiles/$$profile all" && \
	PATH="$(abspath $(VENV))/bin:$$PATH" snakemake --profile "profiles/$$profile" all

test: $(VENV)/.installed
	$(PY) -m pytest

# Links profiles/<name> into ${XDG_CONFIG_HOME:-~/.config}/snakemake/ (for `--profile <name>`) and
# says where each name points; repairs links whose checkout is gone.
install: $(VENV)/.installed
	$(PY) -m membound.profiles install

$(VENV)/.installed: pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test]'
	touch $@
