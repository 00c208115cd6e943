# Set-up is part of every target: a fresh machine needs only Python 3.10+.
PYTHON ?= python3
VENV ?= .venv
STACK ?= aws-dev
GPU_HOURS ?= 1000
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install preview preview-json cost test policy lint typecheck format clean

# The pins, then the repository itself in editable mode (import name `elastic_gpu`).
$(STAMP): requirements.txt requirements-dev.txt pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements-dev.txt
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps -e .
	touch $(STAMP)

install: $(STAMP)

preview: $(STAMP)  ## offline preview of a stack: make preview STACK=aws-prod
	$(BIN)/python -m elastic_gpu preview --stack $(STACK)

preview-json: $(STAMP)
	$(BIN)/python -m elastic_gpu preview --stack $(STACK) --json

cost: $(STAMP)  ## cost of GPU work, spot vs on-demand: make cost STACK=azure-dev GPU_HOURS=3400
	$(BIN)/python -m elastic_gpu cost --stack $(STACK) --gpu-hours $(GPU_HOURS)

test: $(STAMP)  ## the whole suite
	$(BIN)/python -m pytest

policy: $(STAMP)  ## offline policy gate for a stack: make policy STACK=aws-prod
	$(BIN)/python -m elastic_gpu policy --stack $(STACK)

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(STAMP)  ## mypy, strict, over the package ([tool.mypy] in pyproject.toml)
	$(BIN)/python -m mypy

format: $(STAMP)
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

clean:
	rm -rf $(VENV) .pytest_cache
