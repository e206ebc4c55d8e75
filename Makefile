# From a fresh clone, two commands: `make demo` (set up, then run the whole pipeline on synthetic data) and
# `make test` (set up, then run every notebook's tests). Set-up happens once: a .venv beside this file, PyTorch
# first (see README "Install": a bare `torch` requirement pulls the CUDA build), then imgprep with its
# development tools; the stamp makes a second run skip it, until settings.ini or setup.py change.

PYTHON ?= python3
TORCH ?= torch==2.13.0
DEMO_DIR ?= /tmp/imgprep-demo
TEST_FLAGS ?= --n_workers 2 --do_print --timing

VENV := .venv
STAMP := $(VENV)/.imgprep-installed
# Commands run inside the venv, whatever the caller's shell has activated.
IN_VENV := . $(VENV)/bin/activate &&

.PHONY: setup demo test

setup: $(STAMP)

$(STAMP): settings.ini setup.py
	@[ -x $(VENV)/bin/pip ] || { echo "make: creating $(VENV)"; $(PYTHON) -m venv $(VENV) && $(VENV)/bin/python -m pip install -q --upgrade pip; }
	@$(IN_VENV) python -c 'import torch' 2>/dev/null || { echo "make: installing $(TORCH)"; pip install -q $(TORCH); }
	@echo "make: installing imgprep and its development tools into $(VENV)"
	@$(IN_VENV) pip install -q -e ".[dev]"
	@touch $@

demo: setup
	$(IN_VENV) imgprep_demo $(DEMO_DIR)
	$(IN_VENV) imgprep_verify_shards $(DEMO_DIR)/shards

test: setup
	$(IN_VENV) nbdev_test $(TEST_FLAGS)
