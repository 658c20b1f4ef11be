"""A multimodal GGUF on the embedded backend: ``responsa pull`` brings a repository's projector
(``mmproj-…``) with its model, ``serve --model`` loads both, and ``input_image`` parts reach the
model as image embeddings through llama.cpp's mtmd (counted in ``input_tokens``), in JSON and in a
stream; images the server would have to fetch are 400s. No weights are downloaded: the projector is
written by the test (tests/tiny_projector.py) for the packaged model, and the Hub is a loopback one."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openai
import pytest

from responsa.backends.llama_cpp import default_gguf
from tests.conftest import start_serve
from tests.loopback_hub import running_hub
from tests.test_pull import responsa
from tests.tiny_projector import IMAGE_TOKENS, png, write_projector

RED = "data:image/png;base64," + base64.b64encode(png(40, 30, (200, 30, 30))).decode()


def _asking(*images: str, text: str = "What is in the picture?") -> list[dict[str, Any]]:
    parts = [{"type": "input_text", "text": text}, *({"type": "input_image", "image_url": url} for url in images)]
    return [{"role": "user", "content": parts}]


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[openai.OpenAI]:
    """A server with a multimodal model pulled from the (loopback) Hub and one given by a model file
    naming its projector beside it."""
    tmp = tmp_path_factory.mktemp("multimodal")
    projector = write_projector(tmp / "mmproj-Tiny-F16.gguf")
    with running_hub() as hub:
        hub.repos["acme/SmolVision-GGUF"] = {
            "SmolVision-Q4_1.gguf": default_gguf().read_bytes(),
            "mmproj-SmolVision-F32.gguf": projector.read_bytes(),  # F16 is preferred when both are there
            "mmproj-SmolVision-F16.gguf": projector.read_bytes(),
        }
        env = {"HF_HOME": str(tmp / "hf"), "HF_ENDPOINT": hub.url, "XDG_CACHE_HOME": str(tmp / "cache"),
               "HF_HUB_DISABLE_TELEMETRY": "1", "HF_TOKEN": ""}  # fmt: skip
        pulled = responsa(env, "pull", "acme/SmolVision-GGUF")
        assert pulled.returncode == 0, pulled.stderr
        assert pulled.stdout.splitlines()[1].endswith("mmproj-SmolVision-F16.gguf")
        listed = responsa(env, "models").stdout
        assert "SmolVision-Q4_1" in listed and "mmproj" not in listed  # a projector is never a model
        model_file = tmp / "models.toml"
        model_file.write_text(f'[models.local-vision]\nsource = "{default_gguf()}"\nmmproj = "mmproj-Tiny-F16.gguf"\n')
        process, url = start_serve(
            "--model", "acme/SmolVision-GGUF", "--model-file", str(model_file), "--no-simulator",
            "--db", f"sqlite:///{tmp}/db.sqlite", log=tmp / "serve.log", env={**env, "HF_HUB_OFFLINE": "1"},
        )  # fmt: skip
        try:
            with openai.OpenAI(base_url=f"{url}/v1", api_key="-", max_retries=0) as sdk:
                yield sdk
        finally:
            process.terminate()
            process.wait(30)


@pytest.mark.parametrize("model", ["SmolVision-Q4_1", "local-vision"])
def test_an_image_reaches_the_model_as_embeddings(client: openai.OpenAI, model: str) -> None:
    options: dict[str, Any] = {"max_output_tokens": 12, "temperature": 0}
    seen = client.responses.create(model=model, input=_asking(RED), **options)  # type: ignore[arg-type]
    text_only = client.responses.create(model=model, input=_asking(), **options)  # type: ignore[arg-type]
    assert seen.status in ("completed", "incomplete") and seen.output_text
    assert seen.usage is not None and text_only.usage is not None
    # The image's four embeddings, and the line break between the text and the image parts.
    newline = 1
    assert seen.usage.input_tokens == text_only.usage.input_tokens + IMAGE_TOKENS + newline
    counted = client.responses.input_tokens.count(model=model, input=_asking(RED))  # type: ignore[arg-type]
    assert counted.input_tokens == seen.usage.input_tokens
    two = client.responses.create(model=model, input=_asking(RED, RED), **options)  # type: ignore[arg-type]
    assert two.usage is not None and two.usage.input_tokens == seen.usage.input_tokens + IMAGE_TOKENS + newline


def test_an_image_in_a_stream_and_in_the_next_turn(client: openai.OpenAI) -> None:
    events = list(
        client.responses.create(model="SmolVision-Q4_1", input=_asking(RED), max_output_tokens=8, stream=True)
    )  # type: ignore[arg-type]
    assert events[-1].type in ("response.completed", "response.incomplete")  # 8 tokens may cut it short
    final = events[-1].response  # type: ignore[union-attr]
    assert final.output_text and final.usage is not None
    assert "".join(e.delta for e in events if e.type == "response.output_text.delta") == final.output_text
    follow = client.responses.create(model="SmolVision-Q4_1", previous_response_id=final.id,
                                     input="And its colour?", max_output_tokens=8)  # fmt: skip
    assert follow.usage is not None and follow.usage.input_tokens > final.usage.input_tokens  # the image is still read


@pytest.mark.parametrize(
    "part",
    [{"type": "input_image", "image_url": "http://127.0.0.1:9/cat.png"}, {"type": "input_image", "file_id": "file_x"}],
)
def test_images_the_server_would_fetch_are_400s(client: openai.OpenAI, part: dict[str, Any]) -> None:
    with pytest.raises(openai.BadRequestError, match="data URLs"):
        client.responses.create(model="SmolVision-Q4_1", input=[{"role": "user", "content": [part]}])  # type: ignore[list-item]


def test_a_broken_image_is_a_400(client: openai.OpenAI) -> None:
    junk = "data:image/png;base64," + base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(40)).decode()
    with pytest.raises(openai.BadRequestError) as refused:
        client.responses.create(model="local-vision", input=_asking(junk))  # type: ignore[arg-type]
    assert refused.value.code == "invalid_image"


def test_a_projector_that_does_not_fit_the_model_is_said_at_load(tmp_path: Path) -> None:
    """A projector made for another model (other embedding width) fails the request with the reason."""
    model_file = tmp_path / "models.toml"
    write_projector(tmp_path / "wrong.gguf", text_width=64)
    model_file.write_text(f'[models.mismatched]\nsource = "{default_gguf()}"\nmmproj = "wrong.gguf"\n')
    process, url = start_serve("--model-file", str(model_file), "--no-simulator", "--no-embedded",
                               "--db", f"sqlite:///{tmp_path}/db.sqlite", log=tmp_path / "serve.log")  # fmt: skip
    try:
        with openai.OpenAI(base_url=f"{url}/v1", api_key="-", max_retries=0) as sdk:
            with pytest.raises(openai.APIError, match="projector"):
                sdk.responses.create(model="mismatched", input="hi", max_output_tokens=4)
    finally:
        process.terminate()
        process.wait(30)
