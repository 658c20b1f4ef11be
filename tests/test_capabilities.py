"""Optional capabilities are probed once at start: ``/v1/server`` reports each, the start-up log says
in one line why one is off, and ``responsa doctor`` lists them with their fixes and fails while a
default one is off. A broken optional dependency (shadowed on ``PYTHONPATH``, so that importing it
fails as it does once uninstalled) turns off only what needs it; everything else keeps serving."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import httpx
import openai
import pytest

from responsa.backends.llama_cpp import DEFAULT_MODEL_NAME
from responsa.external import probe_sandbox
from tests.conftest import free_port, wait_until_answering

DEFAULT_ON = ("store", "page_extraction", "pdf_text", "code_libraries", "embedded_model")
PAGES_BROKEN = "ImportError: lxml.html.clean module is now a separate project lxml_html_clean."


def _sandbox_options() -> list[str]:
    """Where no sandbox can run (and CI does not require one), the code interpreter is turned off, as a
    user without bubblewrap would: doctor must not fail for it then."""
    if probe_sandbox() is None or os.environ.get("RESPONSA_REQUIRE_SANDBOX"):
        return []
    return ["--no-code-interpreter"]


def _default_on() -> list[str]:
    """What must be on under ``_sandbox_options``: the code libraries only with the code interpreter."""
    return [name for name in DEFAULT_ON if name != "code_libraries" or not _sandbox_options()]


def _broken(tmp_path: Path, package: str, failure: str) -> dict[str, str]:
    """An environment in which importing ``package`` raises ``failure`` (a line of Python), as after a
    ``pip uninstall`` or a broken build."""
    shadow = tmp_path / "shadow" / package
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text(failure + "\n")
    return {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(shadow.parent), os.environ.get("PYTHONPATH")])),
    }


def _without_lxml_html_clean(tmp_path: Path) -> dict[str, str]:
    return _broken(tmp_path, "lxml_html_clean",
                   "raise ModuleNotFoundError(\"No module named 'lxml_html_clean'\", name='lxml_html_clean')")  # fmt: skip


def _doctor(db: Path, env: dict[str, str] | None = None, *options: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "responsa.cli", "doctor", "--db", f"sqlite:///{db}", *_sandbox_options(), *options]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)


def _line(output: str, state: str, name: str) -> str:
    found = re.search(rf"^  {state}\s+{re.escape(name)}\s+(.*)$", output, re.MULTILINE)
    assert found, f"no '{state} {name}' line in:\n{output}"
    return found.group(1)


def test_doctor_on_a_default_install_shows_every_default_capability_on(tmp_path: Path) -> None:
    done = _doctor(tmp_path / "fresh.db")
    assert done.returncode == 0, done.stdout + done.stderr
    for name in _default_on():
        _line(done.stdout, "on ", name)
    assert "no database yet" in _line(done.stdout, "on ", "store")
    assert not (tmp_path / "fresh.db").exists()  # the doctor makes nothing
    assert re.search(r"^responsa \S+ on Python 3\.\d+", done.stdout)
    assert re.search(r"^  trafilatura \d", done.stdout, re.MULTILINE)
    assert re.search(r"^  lxml_html_clean \d", done.stdout, re.MULTILINE)
    assert re.search(rf"^models: {DEFAULT_MODEL_NAME}, sim\b", done.stdout, re.MULTILINE)


def test_the_code_libraries_are_not_probed_with_the_code_interpreter_off(tmp_path: Path) -> None:
    """numpy, pandas and matplotlib serve only the sandbox's code: with ``--no-code-interpreter`` they are
    reported off for that reason, not imported (a pandas that cannot be imported is not seen)."""
    env = _broken(tmp_path, "pandas", "raise ImportError('a broken pandas')")
    done = _doctor(tmp_path / "r.db", env, "--no-embedded", "--no-code-interpreter")
    assert done.returncode == 0, done.stdout + done.stderr
    for name in ("code_libraries", "code_sandbox"):
        assert _line(done.stdout, "off", name) == "turned off (--no-code-interpreter)"
    if _sandbox_options():  # no sandbox here: the code interpreter is off in every doctor run
        return
    broken = _doctor(tmp_path / "r.db", env, "--no-embedded")  # the same pandas, probed
    assert _line(broken.stdout, "OFF", "code_libraries").startswith("ImportError: a broken pandas")


def test_doctor_reads_the_schema_of_a_store_a_server_made(tmp_path: Path) -> None:
    db = tmp_path / "served.db"
    port = free_port()
    env = {**os.environ, "RESPONSA_PORT": str(port), "RESPONSA_DB": f"sqlite:///{db}"}
    process = subprocess.Popen([sys.executable, "-m", "responsa.cli", "serve", "--no-embedded", *_sandbox_options()],
                               env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        wait_until_answering(f"http://127.0.0.1:{port}/health", process)
    finally:
        process.terminate()
        process.wait(timeout=15)
    done = _doctor(db, None, "--no-embedded")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "schema at this version's revision" in _line(done.stdout, "on ", "store")
    assert "embedded_model" not in done.stdout and DEFAULT_MODEL_NAME not in done.stdout


def test_doctor_fails_on_a_store_it_cannot_open(tmp_path: Path) -> None:
    command = [sys.executable, "-m", "responsa.cli", "doctor", "--no-embedded", *_sandbox_options(),
               "--db", f"postgresql://nobody@127.0.0.1:{free_port()}/none"]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    assert "cannot be opened" in _line(done.stdout, "OFF", "store")
    assert "default capabilities are off: store" in done.stderr


def test_a_broken_optional_dependency_turns_off_only_what_needs_it(tmp_path: Path) -> None:
    env = _without_lxml_html_clean(tmp_path)
    port = free_port()
    serving = {**env, "RESPONSA_PORT": str(port), "RESPONSA_DB": f"sqlite:///{tmp_path / 'r.db'}"}
    command = [sys.executable, "-m", "responsa.cli", "serve", "--web-search", "ddgs", *_sandbox_options()]
    process = subprocess.Popen(command, env=serving, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        wait_until_answering(f"http://127.0.0.1:{port}/health", process)
        status = httpx.get(f"http://127.0.0.1:{port}/v1/server").json()
        request = {
            "model": DEFAULT_MODEL_NAME,
            "input": "Hi",
            "tools": [{"type": "web_search"}],
            "max_output_tokens": 4,
        }
        searched = httpx.post(f"http://127.0.0.1:{port}/v1/responses", json=request, timeout=60).json()
        with openai.OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="x", max_retries=0) as sdk:
            answered = sdk.responses.create(model="sim", input="Reply with: still serving")
    finally:
        process.terminate()
        log = process.communicate(timeout=15)[0].decode()

    pages = status["capabilities"]["page_extraction"]
    assert pages["on"] is False and pages["detail"].startswith(PAGES_BROKEN) and "lxml_html_clean" in pages["fix"]
    assert status["hosted_tools"]["web_search"]["enabled"] is False
    assert PAGES_BROKEN in status["hosted_tools"]["web_search"]["detail"]
    assert all(status["capabilities"][name]["on"] for name in _default_on() if name != "page_extraction")
    assert [tool["type"] for tool in searched["ignored_tools"]] == ["web_search"]  # as any disabled hosted tool
    assert answered.output_text == "still serving"
    [line] = [line for line in log.splitlines() if "page_extraction" in line]
    assert line.startswith(f"WARNING:  page_extraction is off: {PAGES_BROKEN}") and "fix: pip install" in line

    done = _doctor(tmp_path / "r.db", env)
    assert done.returncode == 1
    assert _line(done.stdout, "OFF", "page_extraction").startswith(PAGES_BROKEN)
    assert re.search(r"^\s+fix: pip install trafilatura lxml_html_clean", done.stdout, re.MULTILINE)
    assert "default capabilities are off: page_extraction" in done.stderr


@pytest.mark.parametrize("name", DEFAULT_ON)
def test_the_server_reports_each_default_capability(name: str, http: httpx.Client) -> None:
    capability = http.get("/v1/server").json()["capabilities"][name]
    assert capability == {"on": True, "detail": capability["detail"], "fix": None, "default": True}
    assert capability["detail"]
