"""Honest capabilities: models that cannot read images say so (400) instead of answering without
them; image data that is not an image is a 400 on every backend. The request extras
``ignore_eos`` and ``include_stop_str_in_output`` reach every backend."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from contextlib import ExitStack
from typing import Any

import httpx
import openai
import pytest

from responsa.backends.llama_cpp import DEFAULT_MODEL_NAME
from responsa.config import Settings, UpstreamConfig
from tests.backends.mock_upstream import MockUpstream
from tests.conftest import LiveServer, serve, serve_app, sqlite_server

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(32)).decode()


def with_image(url: str) -> list[dict[str, Any]]:
    return [{"role": "user", "content": [{"type": "input_text", "text": "What is this?"},
                                         {"type": "input_image", "image_url": url}]}]  # fmt: skip


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    yield from sqlite_server(tmp_path_factory, "images")


@pytest.fixture(scope="module")
def upstream(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[MockUpstream, LiveServer]]:
    mock = MockUpstream(models=("seeing", "blind"))
    with ExitStack() as stack:
        url = f"{stack.enter_context(serve_app(mock.app)).url}/v1"
        models = (UpstreamConfig("seeing", (url,)), UpstreamConfig("blind", (url,), vision=False))
        db = tmp_path_factory.mktemp("images-upstream") / "u.db"
        yield mock, stack.enter_context(serve(Settings(db_url=f"sqlite:///{db}", models=models, embedded=False)))


def test_the_embedded_model_refuses_images_it_cannot_read(client: openai.OpenAI) -> None:
    with pytest.raises(openai.BadRequestError) as refused:
        client.responses.create(model=DEFAULT_MODEL_NAME, input=with_image(f"data:image/png;base64,{PNG}"))  # type: ignore[arg-type]
    assert (refused.value.code, refused.value.param) == ("unsupported_value", "input[0].content[1]")


def test_upstream_images_pass_unless_the_registry_says_text_only(upstream: tuple[MockUpstream, LiveServer]) -> None:
    mock, live = upstream
    image = f"data:image/png;base64,{PNG}"
    seen = httpx.post(f"{live.v1}/responses", json={"model": "seeing", "input": with_image(image)}, timeout=30)
    assert seen.status_code == 200
    parts = mock.requests[-1]["messages"][-1]["content"]
    assert {"type": "image_url", "image_url": {"url": image}} in [
        {k: p[k] for k in ("type", "image_url")} for p in parts if p["type"] == "image_url"
    ]
    blind = httpx.post(f"{live.v1}/responses", json={"model": "blind", "input": with_image(image)}, timeout=30)
    assert blind.status_code == 400 and blind.json()["error"]["code"] == "unsupported_value"


@pytest.mark.parametrize(
    ("url", "code"),
    [
        ("data:image/png;base64,%%%not-base64%%%", "invalid_image"),
        (f"data:image/jpeg;base64,{PNG}", "invalid_image"),  # PNG bytes said to be a JPEG
        ("data:image/png;base64," + base64.b64encode(b"hello, not an image").decode(), "invalid_image"),
        (f"data:image/bmp;base64,{PNG}", "invalid_image_format"),
        ("ftp://example.com/cat.png", "invalid_image_url"),
    ],
)
def test_invalid_image_data_is_a_400_on_every_backend(
    server: LiveServer, upstream: tuple[MockUpstream, LiveServer], url: str, code: str
) -> None:
    for base, model in ((server.v1, "sim"), (upstream[1].v1, "seeing")):
        reply = httpx.post(f"{base}/responses", json={"model": model, "input": with_image(url)}, timeout=30)
        assert reply.status_code == 400, (model, reply.text)
        assert reply.json()["error"]["code"] == code
        assert reply.json()["error"]["param"] == "input[0].content[1].image_url"


def test_simulator_include_stop_str_and_ignore_eos(client: openai.OpenAI) -> None:
    same = {"stop": ["."], "seed": 7}  # the same text both times
    plain = client.responses.create(model="sim", input="Tell me about rivers", extra_body=same)
    kept = client.responses.create(model="sim", input="Tell me about rivers",
                                   extra_body={**same, "include_stop_str_in_output": True})  # fmt: skip
    assert kept.output_text == plain.output_text + "."
    endless = client.responses.create(model="sim", input="Hi", max_output_tokens=300, extra_body={"ignore_eos": True})
    short = client.responses.create(model="sim", input="Hi", max_output_tokens=300)
    assert endless.status == "incomplete" and endless.usage.output_tokens == 300  # type: ignore[union-attr]
    assert short.status == "completed" and short.usage.output_tokens < 300  # type: ignore[union-attr]


def test_embedded_model_ignore_eos_runs_to_the_budget(client: openai.OpenAI) -> None:
    response = client.responses.create(model=DEFAULT_MODEL_NAME, input="Say OK.", max_output_tokens=40,
                                       extra_body={"ignore_eos": True, "temperature": 0})  # fmt: skip
    assert response.status == "incomplete" and response.usage.output_tokens == 40  # type: ignore[union-attr]


def test_extras_reach_the_upstream(upstream: tuple[MockUpstream, LiveServer]) -> None:
    mock, live = upstream
    body = {"model": "seeing", "input": "hi", "ignore_eos": True, "include_stop_str_in_output": True, "stop": ["END"]}
    assert httpx.post(f"{live.v1}/responses", json=body, timeout=30).status_code == 200
    sent = mock.requests[-1]
    assert (sent["ignore_eos"], sent["include_stop_str_in_output"], sent["stop"]) == (True, True, ["END"])
