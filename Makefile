# Two commands: `make run` (install, then the whole workflow on this machine's profile) and
# `make test`. PROFILE defaults to the profile whose spec describes this machine's GPU (cpu where there is
# none); on a GPU that none describes, `make run` first writes one from the device (README, "Your GPU").
# A checkout whose path holds a space gets its venv outside it: Snakemake runs `script:` rules with
# the interpreter's path unquoted (snakemake/snakemake#2645).
ifeq ($(word 2,$(CURDIR)),)
VENV ?= .venv
else
VENV ?= $(HOME)/.cache/membound/venv-$(shell printf %s '$(CURDIR)' | cksum | cut -d' ' -f1)
endif
PY := $(VENV)/bin/python
PYTHON ?= python3
# GPU=cuda12 or GPU=cuda13 adds CuPy for that CUDA major (its lock) to the venv (docs/environment.md).
GPU ?=
GPU_LOCK := envs/requirements-$(GPU).txt
ifneq ($(GPU),)
ifeq ($(wildcard $(GPU_LOCK)),)
$(error GPU=$(GPU): no lock $(GPU_LOCK); use GPU=cuda12 or GPU=cuda13, the driver's CUDA major (nvidia-smi))
endif
endif

.PHONY: run test test-fast install lock slurm-packages chromium-package
run: install
	@profile=$${PROFILE:-$$($(PY) -m membound.specs new --if-missing)} && $(PY) -m membound.run.profiles check "$$profile" && \
	echo "make run: snakemake --profile profiles/$$profile all" && \
	PATH="$(abspath $(VENV))/bin:$$PATH" snakemake --profile "profiles/$$profile" all

# pytest-xdist: two workers (CI's two cores), each test module on one (its module fixtures made once),
# in the order of tests/conftest.py (the workflow runs first); TEST_WORKERS=0 runs them in this process.
TEST_WORKERS ?= 2
PYTEST := $(PY) -m pytest -n $(TEST_WORKERS) --dist loadscope --no-loadscope-reorder

test: $(VENV)/.installed slurm-packages chromium-package
	$(PYTEST)

# The inner loop: every test but those marked slow or slurm (the workflow runs among them), about
# 95 s of CPU; `make test` (and CI) runs them all (docs/architecture.md, "The tests").
test-fast: $(VENV)/.installed
	$(PYTEST) -m "not slow and not slurm"

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
install: $(VENV)/.installed $(if $(GPU),$(VENV)/.installed-$(GPU))
	$(PY) -m membound.run.profiles install

# The locked versions (envs/requirements.txt: the dependencies and the test extra), then membound
# itself, editable, without dependencies.
$(VENV)/.installed: pyproject.toml envs/requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -r envs/requirements.txt
	$(PY) -m pip install -q --no-deps -e .
	touch $@

$(VENV)/.installed-$(GPU): $(VENV)/.installed $(GPU_LOCK)
	$(PY) -m pip install -q -r $(GPU_LOCK)
	touch $@

# Rewrites the locks and envs/membound.yaml from pyproject.toml and the reference runs' inventories,
# with uv from PyPI in a throwaway venv (docs/environment.md).
lock:
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && $(PYTHON) -m venv "$$tmp" && \
	"$$tmp/bin/pip" install -q uv==0.13.9 packaging && \
	PYTHONPATH=src "$$tmp/bin/python" -m membound.run.environment "$$tmp/bin/uv"
