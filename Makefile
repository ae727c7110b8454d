# Two commands for a fresh clone (see README.md):
#   make repro   set up .venv and run the whole default pipeline (dvc repro)
#   make test    set up .venv and run the test suite (what CI runs)
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin

.PHONY: venv repro test lock clean-venv ben-venv

venv: $(VENV)/.installed

# pip (not uv/poetry): torch==2.13.0 is a CPU wheel on this machine's local disk that only pip sees.
# requirements.lock pins every distribution to what CI tested, so a clone next month installs the same.
$(VENV)/.installed: pyproject.toml requirements.lock
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet -c requirements.lock --upgrade pip
	$(BIN)/python -m pip install --quiet -c requirements.lock -e '.[dev]'
	touch $@

# A new lock from pyproject.toml's ranges, resolved in a throwaway venv (after changing dependencies).
lock:
	rm -rf .lock-venv
	$(PYTHON) -m venv .lock-venv
	.lock-venv/bin/python -m pip install --quiet --upgrade pip
	.lock-venv/bin/python -m pip install --quiet -e '.[dev]'
	{ echo "# The exact versions \`make\` installs (pip constraints: -c requirements.lock), as CI tested them."; \
	  echo "# Regenerate after changing pyproject.toml's dependencies: make lock"; \
	  .lock-venv/bin/python -m pip freeze --all --exclude-editable; } > requirements.lock
	rm -rf .lock-venv

# The BEN server's own virtualenv, .ben-venv/ (docs/ben.md); a `ben` agent also builds it on first use.
ben-venv: venv
	$(BIN)/python -m bridgeflow.training.evaluation.ben

repro: venv
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/dvc repro

test: venv
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/pytest -q

clean-venv:
	rm -rf $(VENV)
