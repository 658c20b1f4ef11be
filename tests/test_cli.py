"""The ``responsa`` command: options, env vars, and a real ``serve`` process answering over HTTP."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import fields
from pathlib import Path

import openai
import pytest
from click.testing import CliRunner
from websockets.sync.client import connect

from responsa.cli import main, serve
from responsa.config import ApiKey, Price, Settings, UpstreamConfig, declared, settings_table
from tests.conftest import free_port, start_serve, wait_until_answering

DOCS = Path(__file__).parent.parent / "docs" / "configuration.md"


def test_help_lists_every_option() -> None:
    result = CliRunner().invoke(main, ["serve", "--help"])
    assert result.exit_code == 0
    for option in ("--host", "--port", "--embedded", "--gguf", "--simulator", "--upstream", "--model-file", "--db",
                   "--api-key", "--log-level"):  # fmt: skip
        assert option in result.output


def test_every_setting_is_documented() -> None:
    text = DOCS.read_text()
    for param in serve.params:
        assert any(opt in text for opt in param.opts), f"{param.opts} missing from {DOCS.name}"
        assert param.envvar and all(f"`{env}`" in text for env in param.envvar), f"{param.envvar} not in {DOCS.name}"


def test_every_setting_is_declared_once() -> None:
    """Each setting has one declaration (config.option): its option, env var and docs row come from it."""
    derived = {"models", "embedded_models", "api_keys", "prices"}  # read from the files the settings name
    declarations = list(declared())
    assert {setting.name for setting, _how in declarations} == {field.name for field in fields(Settings)} - derived
    flags = [how.flags(setting.name, isinstance(setting.default, bool)) for setting, how in declarations]
    envs = [how.envvar(setting.name) for setting, how in declarations]
    assert len(set(flags)) == len(flags) and len(set(envs)) == len(envs)
    assert [param.name for param in serve.params] == [setting.name for setting, _how in declarations]


def test_the_docs_table_is_generated_from_the_declarations() -> None:
    """docs/configuration.md shows what the config package declares (regenerate with ``python -m responsa.config``)."""
    assert settings_table() in DOCS.read_text()
    generated = subprocess.run([sys.executable, "-m", "responsa.config"], capture_output=True, text=True, check=True)
    assert generated.stdout == settings_table()


def test_serve_process_answers_and_reads_env_vars(tmp_path: Path) -> None:
    port = free_port()
    db = tmp_path / "cli.db"
    env = {**os.environ, "RESPONSA_PORT": str(port), "RESPONSA_DB": f"sqlite:///{db}"}
    process = subprocess.Popen(
        [sys.executable, "-m", "responsa.cli", "serve"], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    try:
        wait_until_answering(f"http://127.0.0.1:{port}/health", process)
        with openai.OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="x", max_retries=0) as sdk:
            assert sdk.responses.create(model="sim", input="Reply with: from the cli").output_text == "from the cli"
    finally:
        process.terminate()
        output = process.communicate(timeout=15)[0].decode()
    assert db.exists()
    assert re.search(rf"serving on http://127\.0\.0\.1:{port}/v1", output)


def _settings_served(monkeypatch: pytest.MonkeyPatch) -> list[Settings]:
    """The settings each ``serve`` run here would start the app with (no app, no server started)."""
    import responsa.serve

    seen: list[Settings] = []
    monkeypatch.setattr(responsa.serve, "serve_settings", seen.append)
    return seen


def test_workers_take_a_count_or_auto(monkeypatch: pytest.MonkeyPatch) -> None:
    from responsa.serve import worker_count

    seen = _settings_served(monkeypatch)
    for given, count in (("3", 3), ("auto", len(os.sched_getaffinity(0))), ("0", len(os.sched_getaffinity(0)))):
        result = CliRunner().invoke(main, ["serve", "--workers", given])
        assert result.exit_code == 0, result.output
        assert worker_count(seen[-1]) == count
    assert worker_count(Settings()) == 1
    refused = CliRunner().invoke(main, ["serve", "--workers", "many"])
    assert refused.exit_code != 0 and "'many'" in refused.output, refused.output


def test_every_option_reaches_the_settings(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    seen = _settings_served(monkeypatch)
    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"GGUF")
    keys_file = tmp_path / "keys.toml"
    keys_file.write_text('[keys.team]\nkey = "secret-1"\n')
    model_file = tmp_path / "models.toml"
    model_file.write_text(
        '[models.qwen]\nurls = ["http://a/v1", "http://b/v1"]\nupstream_model = "Qwen/Qwen3"\n'
        'api_key = "k"\nstrategy = "round_robin"\n'
    )
    args = [
        "serve", "--host", "127.0.0.2", "--port", "9999", "--db", f"sqlite:///{tmp_path}/x.db",
        "--api-key", "a", "--api-key", "b", "--log-level", "debug", "--sim-token-delay-ms", "7",
        "--responses-store-ttl-secs", "60", "--responses-store-max-entries", "5",
        "--conversation-store-ttl-secs", "90", "--conversation-store-max-entries", "0",
        "--no-embedded", "--gguf", str(gguf), "--no-simulator", "--upstream", "http://127.0.0.1:1/v1",
        "--upstream", "http://127.0.0.1:2/v1", "--model-file", str(model_file), "--upstream-health-interval-secs", "2",
        "--keys-file", str(keys_file), "--max-body-bytes", "4096", "--max-input-items", "9",
    ]  # fmt: skip
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert seen == [
        Settings(
            host="127.0.0.2", port=9999, db_url=f"sqlite:///{tmp_path}/x.db",
            embedded=False, gguf=gguf, simulator=False, upstreams=("http://127.0.0.1:1/v1", "http://127.0.0.1:2/v1"),
            models=(UpstreamConfig("qwen", ("http://a/v1", "http://b/v1"), "Qwen/Qwen3", "k", "round_robin"),),
            upstream_health_interval_secs=2, model_file=model_file, keys_file=keys_file, bare_api_keys=("a", "b"),
            api_keys=(ApiKey("secret-1", "team"), ApiKey.bare("a"), ApiKey.bare("b")),
            max_body_bytes=4096, max_input_items=9, log_level="debug", sim_token_delay_ms=7, responses_store_ttl_secs=60,
            responses_store_max_entries=5, conversation_store_ttl_secs=90, conversation_store_max_entries=0,
        )
    ]  # fmt: skip
    result = CliRunner().invoke(main, ["serve"], env={"RESPONSA_API_KEYS": "k1 k2", "RESPONSA_PORT": "7000"})
    assert result.exit_code == 0, result.output
    assert seen[-1].api_keys == (ApiKey.bare("k1"), ApiKey.bare("k2")) and seen[-1].port == 7000


def test_mlxcel_s_store_variables_are_read_when_ours_are_unset(monkeypatch: pytest.MonkeyPatch) -> None:
    seen = _settings_served(monkeypatch)
    mlxcel = {"LLAMA_ARG_RESPONSES_STORE_MAX_ENTRIES": "1024", "LLAMA_ARG_RESPONSES_STORE_TTL_SECS": "3600",
              "LLAMA_ARG_CONVERSATION_STORE_MAX_ENTRIES": "256", "LLAMA_ARG_CONVERSATION_STORE_TTL_SECS": "0"}  # fmt: skip
    result = CliRunner().invoke(main, ["serve"], env=mlxcel)
    assert result.exit_code == 0, result.output
    bounds = (seen[-1].responses_store_max_entries, seen[-1].responses_store_ttl_secs,
              seen[-1].conversation_store_max_entries, seen[-1].conversation_store_ttl_secs)  # fmt: skip
    assert bounds == (1024, 3600, 256, 0)
    result = CliRunner().invoke(main, ["serve"], env={**mlxcel, "RESPONSA_RESPONSES_STORE_MAX_ENTRIES": "7"})
    assert seen[-1].responses_store_max_entries == 7  # ours first
    result = CliRunner().invoke(main, ["serve", "--responses-store-max-entries", "9"], env=mlxcel)
    assert seen[-1].responses_store_max_entries == 9  # then the flag over both


def test_directory_settings_take_directories(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """--containers-dir names a directory the server makes if missing, --prompts-dir one that exists;
    a file is refused for either (they were refused as "not a file" before, flag or environment)."""
    seen = _settings_served(monkeypatch)
    prompts, containers = tmp_path / "prompts", tmp_path / "not-yet" / "containers"
    prompts.mkdir()
    result = CliRunner().invoke(main, ["serve", "--prompts-dir", str(prompts), "--containers-dir", str(containers)])
    assert result.exit_code == 0, result.output
    assert (seen[-1].prompts_dir, seen[-1].containers_dir) == (prompts, containers)
    result = CliRunner().invoke(main, ["serve"], env={"RESPONSA_CONTAINERS_DIR": str(tmp_path)})
    assert result.exit_code == 0, result.output
    assert seen[-1].containers_dir == tmp_path
    a_file = tmp_path / "file.txt"
    a_file.write_text("x")
    for flag in ("--prompts-dir", "--containers-dir"):
        refused = CliRunner().invoke(main, ["serve", flag, str(a_file)])
        assert refused.exit_code != 0 and "is a file" in refused.output, refused.output
    missing = CliRunner().invoke(main, ["serve", "--prompts-dir", str(tmp_path / "missing")])
    assert missing.exit_code != 0 and "does not exist" in missing.output


def test_a_bad_model_file_is_a_clear_error(tmp_path: Path) -> None:
    bad = tmp_path / "models.toml"
    bad.write_text("[models.x]\nurl = 3\n")
    result = CliRunner().invoke(main, ["serve", "--model-file", str(bad)])
    assert result.exit_code != 0 and "needs 'urls'" in result.output


def test_the_prices_file_reaches_the_settings(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    seen = _settings_served(monkeypatch)
    prices = tmp_path / "prices.toml"
    prices.write_text('[models."gpt-5"]\ninput = 1.25\noutput = 10\n[models."*"]\nimages = 0.04\n'
                      "[tools]\nweb_search_calls = 10.0\n")  # fmt: skip
    result = CliRunner().invoke(main, ["serve", "--prices-file", str(prices)])
    assert result.exit_code == 0, result.output
    assert seen[-1].prices == (Price("gpt-5", "input", 1.25), Price("gpt-5", "output", 10.0), Price("*", "images", 0.04),
                               Price("*", "web_search_calls", 10.0))  # fmt: skip
    for bad, message in (("[models.x]\ninputs = 1\n", "unknown line item 'inputs'"),
                         ("[models.x]\ninput = -1\n", "input must be a number of USD"),
                         ("[discounts]\nall = 1\n", "unknown tables ['discounts']")):  # fmt: skip
        prices.write_text(bad)
        result = CliRunner().invoke(main, ["serve", "--prices-file", str(prices)])
        assert result.exit_code != 0 and message in result.output, result.output


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ('source = "x.gguf"\ncontext = 0\n', "context must be a positive integer"),
        ('source = "x.gguf"\ngpu_layers = -2\n', "gpu_layers must be an integer, -1 for all"),
        ('source = "x.gguf"\ntemperature = "hot"\n', "temperature must be a number"),
        ('source = "x.gguf"\nurls = ["http://a/v1"]\n', "unknown keys ['urls']"),
        ("source = 3\n", "source must be a string"),
    ],
)
def test_a_bad_embedded_model_entry_is_a_clear_error(tmp_path: Path, entry: str, message: str) -> None:
    bad = tmp_path / "models.toml"
    bad.write_text(f"[models.x]\n{entry}")
    result = CliRunner().invoke(main, ["serve", "--model-file", str(bad)])
    assert result.exit_code != 0 and message in result.output, result.output


def test_models_from_options_and_the_model_file_reach_the_settings(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from responsa.config import EmbeddedModelConfig

    seen = _settings_served(monkeypatch)
    gguf = tmp_path / "Tiny-Q4_K_M.gguf"
    gguf.write_bytes(b"GGUF")
    template = tmp_path / "t.jinja"
    template.write_text("{{ messages }}")
    model_file = tmp_path / "models.toml"
    model_file.write_text(
        f'[models.tuned]\nsource = "{gguf}"\ncontext = 2048\nthreads = 1\ngpu_layers = -1\nparallel = 2\n'
        'chat_template = "t.jinja"\ntemperature = 0.7\ntop_k = 20\n'
    )
    args = ["serve", "--model", str(gguf), "--model", f"named={gguf}", "--model-file", str(model_file),
            "--threads", "3", "--gpu-layers", "8", "--parallel", "6", "--chat-template", str(template)]  # fmt: skip
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    [settings] = seen
    assert (settings.threads, settings.gpu_layers, settings.parallel, settings.chat_template) == (3, 8, 6, template)
    assert settings.embedded_models == (
        EmbeddedModelConfig(source=str(gguf), name="Tiny-Q4_K_M", path=gguf),
        EmbeddedModelConfig(source=str(gguf), name="named", path=gguf),
        EmbeddedModelConfig(source=str(gguf), name="tuned", path=gguf, context=2048, threads=1, gpu_layers=-1,
                            chat_template=template, parallel=2, sampling=(("temperature", 0.7), ("top_k", 20))),
    )  # fmt: skip
    result = CliRunner().invoke(main, ["serve", "--model", str(gguf), "--model", f"Tiny-Q4_K_M={gguf}"])
    assert result.exit_code != 0 and "two models are named 'Tiny-Q4_K_M'" in result.output


@pytest.mark.parametrize(("options", "compressed"), [((), False), (("--ws-compression",), True)])
def test_websocket_compression_is_agreed_only_when_configured(
    tmp_path: Path, options: tuple[str, ...], compressed: bool
) -> None:
    """A client offering permessage-deflate (the websockets client's default, the Agents SDK's) gets
    uncompressed frames unless ``--ws-compression`` is set; either way the response streams."""
    process, url = start_serve("--db", f"sqlite:///{tmp_path / 'ws.db'}", "--no-embedded", *options,
                               log=tmp_path / "serve.log")  # fmt: skip
    try:
        with connect(url.replace("http://", "ws://") + "/v1/responses", compression="deflate") as socket:
            agreed = socket.response.headers.get("Sec-WebSocket-Extensions") or ""
            socket.send(json.dumps({"type": "response.create", "model": "sim", "input": "Hi."}))
            kinds = []
            while not kinds or kinds[-1] not in ("response.completed", "error"):
                kinds.append(json.loads(socket.recv(timeout=30))["type"])
        assert ("permessage-deflate" in agreed) is compressed and kinds[-1] == "response.completed"
    finally:
        process.terminate()
        process.wait(30)
