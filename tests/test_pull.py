"""``responsa pull``, ``responsa models`` and ``serve --model``: the real download code (huggingface_hub)
against a loopback Hub and file host the tests start; nothing leaves this machine."""

from __future__ import annotations

import fcntl
import os
import pty
import random
import struct
import subprocess
import sys
import termios
import time
from collections.abc import Iterator
from pathlib import Path

import openai
import pytest

from responsa.backends.llama_cpp import DEFAULT_MODEL_NAME, default_gguf
from tests.conftest import start_serve
from tests.loopback_hub import Hub, running_hub, sha256
from tests.suite_threads import SUITE_THREADS_ENV

MiB = 1024 * 1024


@pytest.fixture
def hub() -> Iterator[Hub]:
    with running_hub() as hub:
        yield hub


@pytest.fixture
def env(hub: Hub, tmp_path: Path) -> dict[str, str]:
    """Caches in the test's folder, the Hub on loopback, no token."""
    return {
        "HF_HOME": str(tmp_path / "hf"),
        "HF_ENDPOINT": hub.url,
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "HF_HUB_DISABLE_TELEMETRY": "1",
        "HF_HUB_ETAG_TIMEOUT": "30",
        "HF_TOKEN": "",
    }


def responsa(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "responsa.cli", *args], env={**os.environ, **env}, capture_output=True, text=True,
        timeout=120,
    )  # fmt: skip


def on_a_terminal(env: dict[str, str], *args: str) -> tuple[int, str, str]:
    """Exit code, stdout and what was written to stderr, a terminal (progress bars show only on one)."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))  # a window: tqdm needs width
    command = [sys.executable, "-m", "responsa.cli", *args]
    process = subprocess.Popen(
        command, env={**os.environ, **SUITE_THREADS_ENV, **env}, stdout=subprocess.PIPE, stderr=follower
    )
    os.close(follower)
    terminal = b""
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # EIO: the process closed its end
            break
        if not chunk:
            break
        terminal += chunk
    os.close(leader)
    assert process.stdout is not None
    with process.stdout:
        out = process.stdout.read().decode()
    return process.wait(60), out, terminal.decode(errors="replace")


def blob(size: int, seed: int) -> bytes:
    return random.Random(seed).randbytes(size)


def test_pull_by_quantization_shows_progress_verifies_and_resumes_a_dropped_connection(
    hub: Hub, env: dict[str, str], tmp_path: Path
) -> None:
    # huggingface_hub writes what it receives in 10 MiB pieces: a cut after 11 MiB has 10 MiB to keep.
    q4, q8 = blob(3 * MiB, 1), blob(12 * MiB + 17, 2)
    hub.repos["acme/Tiny-GGUF"] = {"Tiny-Q4_K_M.gguf": q4, "Tiny-Q8_0.gguf": q8, "README.md": b"# Tiny"}
    hub.cut_after["/acme/Tiny-GGUF/resolve/main/Tiny-Q8_0.gguf"] = 11 * MiB
    code, out, terminal = on_a_terminal(env, "pull", "acme/Tiny-GGUF:Q8_0")
    assert code == 0, terminal
    name, path = out.splitlines()[0].split(": ", 1)
    assert name == "Tiny-Q8_0" and Path(path).read_bytes() == q8
    assert Path(path).is_relative_to(tmp_path / "hf")  # the Hugging Face cache, as its users expect
    assert "Tiny-Q8_0.gguf: 100%" in terminal and "12.6M/12.6M" in terminal  # huggingface_hub's tqdm bar
    assert "Trying to resume download" in terminal
    ranges = hub.ranges("/acme/Tiny-GGUF/resolve/main/Tiny-Q8_0.gguf")
    assert ranges[0] is None and len(ranges) == 2 and ranges[1] is not None
    assert ranges[1] == f"bytes={10 * MiB}-"  # picked up where it was cut
    # Without a quantization, a repository of several picks Q4_K_M (as Ollama and llama.cpp do).
    done = responsa(env, "pull", "acme/Tiny-GGUF")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("Tiny-Q4_K_M: ")
    listed = responsa(env, "models").stdout.splitlines()
    assert [line.split()[:3] for line in listed] == [
        ["Tiny-Q4_K_M", "3.0", "MiB"], ["Tiny-Q8_0", "12.0", "MiB"],
    ]  # fmt: skip
    assert listed[1].endswith("hf:acme/Tiny-GGUF/Tiny-Q8_0.gguf")
    # Pulled already: a second pull asks the Hub for the listing and headers, and downloads nothing.
    before = len(hub.ranges("/acme/Tiny-GGUF/resolve/main/Tiny-Q8_0.gguf"))
    assert responsa(env, "pull", "hf:acme/Tiny-GGUF/Tiny-Q8_0.gguf").returncode == 0
    assert len(hub.ranges("/acme/Tiny-GGUF/resolve/main/Tiny-Q8_0.gguf")) == before


def test_a_split_model_is_pulled_whole(hub: Hub, env: dict[str, str]) -> None:
    shards = {f"q4/Big-Q4_K_M-0000{n}-of-00002.gguf": blob(MiB, n) for n in (1, 2)}
    hub.repos["acme/Big-GGUF"] = {**shards, "Big-Q2_K.gguf": b"x"}
    done = responsa(env, "pull", "acme/Big-GGUF:q4_k_m")
    assert done.returncode == 0, done.stderr
    first = Path(done.stdout.splitlines()[0].split(": ", 1)[1])
    assert done.stdout.startswith("Big-Q4_K_M: ") and first.name == "Big-Q4_K_M-00001-of-00002.gguf"
    assert (first.parent / "Big-Q4_K_M-00002-of-00002.gguf").read_bytes() == shards["q4/Big-Q4_K_M-00002-of-00002.gguf"]
    [listed] = responsa(env, "models").stdout.splitlines()  # the Q2_K file was not pulled
    assert listed.split() == ["Big-Q4_K_M", "2.0", "MiB", "hf:acme/Big-GGUF/q4/Big-Q4_K_M-00001-of-00002.gguf"]


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("acme/Two-GGUF", "several GGUFs and none is Q4_K_M; name a quantization: acme/Two-GGUF:QUANT (Q5_K_M, Q8_0)"),
        ("acme/Two-GGUF:Q3_K_S", "no GGUF matches; name a quantization: acme/Two-GGUF:QUANT (Q5_K_M, Q8_0)"),
        ("acme/Two-GGUF:Q", "no GGUF matches"),
        ("hf:acme/Two-GGUF/missing.gguf", "acme/Two-GGUF has no file missing.gguf"),
        ("acme/Nothing-GGUF:Q4_K_M", "Repository Not Found"),
        ("not a source", "is not a model source"),
        ("http://127.0.0.1:9/x.gguf", "http://127.0.0.1:9/x.gguf: "),  # nothing listens there
    ],
)
def test_what_cannot_be_pulled_says_why(hub: Hub, env: dict[str, str], source: str, message: str) -> None:
    hub.repos["acme/Two-GGUF"] = {"Two-Q8_0.gguf": b"a", "Two-Q5_K_M.gguf": b"b"}
    done = responsa(env, "pull", source)
    assert done.returncode == 1 and message in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("kind", ["url", "hub"])
def test_a_pull_killed_part_way_resumes_where_it_stopped(hub: Hub, env: dict[str, str], kind: str) -> None:
    data = blob(24 * MiB, 3)
    if kind == "url":
        path, source = "/files/story.gguf", f"{hub.url}/files/story.gguf#sha256={sha256(data)}"
        hub.files[path] = data
        partial = Path(env["XDG_CACHE_HOME"]) / "responsa" / "models" / "127.0.0.1" / "story.gguf.incomplete"
    else:
        path, source = "/acme/Story-GGUF/resolve/main/Story-Q4_K_M.gguf", "acme/Story-GGUF:Q4_K_M"
        hub.repos["acme/Story-GGUF"] = {"Story-Q4_K_M.gguf": data}
        partial = Path(env["HF_HOME"]) / "hub" / "models--acme--Story-GGUF" / "blobs" / f"{sha256(data)}.incomplete"
    hub.stall_after[path] = 15 * MiB  # the first 10 MiB piece is on disk by then
    command = [sys.executable, "-m", "responsa.cli", "pull", source]
    first = subprocess.Popen(
        command, env={**os.environ, **SUITE_THREADS_ENV, **env}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    deadline = time.monotonic() + 60
    while not (partial.exists() and partial.stat().st_size >= 10 * MiB):
        assert time.monotonic() < deadline and first.poll() is None
        time.sleep(0.05)
    first.kill()
    first.wait()
    if kind == "url":
        listed = responsa(env, "models").stdout
        assert "story" in listed and "(partial: pull again to resume)" in listed
    done = responsa(env, "pull", source)
    assert done.returncode == 0, done.stderr
    assert Path(done.stdout.splitlines()[0].split(": ", 1)[1]).read_bytes() == data
    assert hub.ranges(path) == [None, f"bytes={10 * MiB}-"]
    assert not partial.exists() and "partial" not in responsa(env, "models").stdout


def test_a_file_whose_bytes_are_not_the_promised_ones_is_refused_and_removed(hub: Hub, env: dict[str, str]) -> None:
    hub.files["/files/other.gguf"] = blob(MiB, 4)
    done = responsa(env, "pull", f"{hub.url}/files/other.gguf#sha256={'0' * 64}")
    assert done.returncode == 1 and "is not the expected" in done.stderr
    assert "other" not in responsa(env, "models").stdout
    assert not list(Path(env["XDG_CACHE_HOME"]).rglob("other.gguf*"))


def test_serve_a_pulled_model_beside_the_default_with_its_own_settings(
    hub: Hub, env: dict[str, str], tmp_path: Path
) -> None:
    hub.repos["acme/SmolLM2-GGUF"] = {"SmolLM2-Mini-Q4_1.gguf": default_gguf().read_bytes()}
    model_file = tmp_path / "models.toml"
    model_file.write_text('[models.greedy]\nsource = "acme/SmolLM2-GGUF:Q4_1"\ntemperature = 0\ncontext = 1024\n')
    log = tmp_path / "serve.log"
    process, url = start_serve(
        "--model", "hf:acme/SmolLM2-GGUF/SmolLM2-Mini-Q4_1.gguf", "--model-file", str(model_file), "--no-simulator",
        "--db", f"sqlite:///{tmp_path}/db.sqlite", log=log, env=env,
    )  # fmt: skip
    try:
        client = openai.OpenAI(base_url=f"{url}/v1", api_key="-")
        assert [model.id for model in client.models.list()] == [DEFAULT_MODEL_NAME, "SmolLM2-Mini-Q4_1", "greedy"]
        reply = client.responses.create(model="SmolLM2-Mini-Q4_1", input="Name a colour.", max_output_tokens=8)
        assert reply.model == "SmolLM2-Mini-Q4_1" and reply.output_text.strip()
        # The model file's default temperature 0: greedy, so the same answer as one asking for temperature 0
        # (a seed evaluates the prompt afresh; at temperature 1 the seeds would give different stories).
        texts = {
            client.responses.create(model="greedy", input="Tell me a story.", max_output_tokens=40,
                                    extra_body={"seed": seed}, **extra).output_text  # type: ignore[arg-type]
            for seed, extra in ((1, {}), (2, {"temperature": 0}))
        }  # fmt: skip
        assert len(texts) == 1
        too_long = client.with_options(max_retries=0).responses.with_raw_response.create
        with pytest.raises(openai.BadRequestError, match="context"):
            too_long(model="greedy", input="word " * 1100, max_output_tokens=5)
    finally:
        process.terminate()
        process.wait(30)
    assert len(hub.ranges("/acme/SmolLM2-GGUF/resolve/main/SmolLM2-Mini-Q4_1.gguf")) == 1  # fetched once
