# make lab   - JupyterLab on the tutorials (creates .venv and installs everything it needs)
# make test  - every test this machine can run (the built wheel too), then what was skipped and why
# make bench - benchmarks, printed as ratios measured side by side

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: lab test bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# make test also installs TensorBoard (reads back our event files) and tensorflow-cpu (the TF1
# differential tests in tests/compat); both are CPU-only packages.
$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e ".[test,notebook,tensorboard,bench,distributed]"
	# TF 2's Keras 3 has no tf.compat.v1.layers; tf-keras brings them back for tests/compat/test_tf1_layers.py.
	# No deps: it asks for `tensorflow`, which tensorflow-cpu provides under another distribution name.
	$(BIN)/python -m pip install --quiet --no-deps "tf-keras~=$$($(BIN)/python -c 'from importlib.metadata import version; print(version("tensorflow-cpu").rsplit(".", 1)[0])').0"
	touch $(STAMP)

lab: $(STAMP)
	$(BIN)/jupyter lab --notebook-dir=notebooks --ServerApp.ip=127.0.0.1 $(if $(filter 0,$(shell id -u)),--allow-root)

# TFNB_TEST_WHEEL=1 adds tests/test_wheel.py: the wheel, installed into a fresh virtual environment, trains a model;
# TFNB_TEST_SLOW=1 adds the slow tests (a cluster that waits for Dask's heartbeats, TF1 programs in several processes).
test: $(STAMP)
	TFNB_TEST_WHEEL=1 TFNB_TEST_SLOW=1 $(BIN)/python -m pytest -ra -q tests notebooks --nbval-lax --nbval-sanitize-with notebooks/sanitize.cfg

bench: $(STAMP)
	$(BIN)/python -m benchmarks

clean:
	rm -rf $(VENV) build *.egg-info
