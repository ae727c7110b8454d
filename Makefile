# Two commands for a fresh clone (see README.md):
#   make repro   set up .venv and run the whole default pipeline (dvc repro)
#   make test    set up .venv and run the test suite (what CI runs)
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin

.PHONY: venv repro test clean-venv

venv: $(VENV)/.installed

# pip (not uv/poetry): torch==2.13.0 is a CPU wheel on this machine's local disk that only pip sees.
$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $@

repro: venv
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/dvc repro

test: venv
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/pytest -q

clean-venv:
	rm -rf $(VENV)
