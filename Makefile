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

.PHONY: run test install slurm-packages chromium-package
run: install
	@profile=$${PROFILE:-$$($(PY) -m membound.run.detect)} && $(PY) -m membound.run.profiles check "$$profile" && \
	echo "make run: snakemake --profile profiles/$$profile all" && \
	PATH="$(abspath $(VENV))/bin:$$PATH" snakemake --profile "profiles/$$profile" all

test: $(VENV)/.installed slurm-packages chromium-package
	$(PY) -m pytest

# The Debian packages of the SLURM test (tests/test_slurm.py: a one-node cluster on localhost).
# Installed as root where apt-get works; otherwise that test skips and says why.
SLURM_PROGRAMS := munged mariadbd slurmdbd slurmctld slurmd sbatch sacct
SLURM_PACKAGES := munge mariadb-server-core slurmdbd slurmctld slurmd slurm-client
slurm-packages:
	@PATH="$$PATH:/usr/sbin"; for p in $(SLURM_PROGRAMS); do command -v $$p >/dev/null || missing=1; done; \
	if [ -z "$$missing" ]; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  echo "installing $(SLURM_PACKAGES) for the SLURM test"; \
	  (apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
	    $(SLURM_PACKAGES)) >/dev/null || echo "apt-get could not install them: the SLURM test will skip"; \
	else echo "no SLURM packages and no root apt-get: the SLURM test will skip"; fi

# Debian's Chromium for the report's browser test (tests/test_report.py renders the cpu report headless).
# Installed as root where apt-get works; otherwise that test skips and says why.
chromium-package:
	@if command -v chromium >/dev/null; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  echo "installing chromium for the report's browser test"; \
	  (apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends chromium) \
	    >/dev/null || echo "apt-get could not install it: the report's browser test will skip"; \
	else echo "no chromium and no root apt-get: the report's browser test will skip"; fi

# Links profiles/<name> into ${XDG_CONFIG_HOME:-~/.config}/snakemake/ (for `--profile <name>`) and
# says where each name points; repairs links whose checkout is gone.
install: $(VENV)/.installed
	$(PY) -m membound.run.profiles install

$(VENV)/.installed: pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test]'
	touch $@
