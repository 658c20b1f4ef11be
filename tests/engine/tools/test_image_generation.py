"""image_generation run by the server for any model: a scripted Chat Completions upstream calls it, and
the server draws with the images model an upstream lists (the fake's ``POST /v1/images/generations``)."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from typing import Any

import httpx
import openai
import pytest

from responsa.config import Settings
from tests.backends.mock_upstream import MockUpstream, Stream, text_chunks
from tests.conftest import LiveServer, serve, served_upstream
from tests.http.test_streaming import parse_frames


@pytest.fixture(scope="module")
def upstream() -> Iterator[MockUpstream]:
    with served_upstream("up-model", "gpt-image-1") as mock:
        yield mock


@pytest.fixture(scope="module")
def server(upstream: MockUpstream, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    db = f"sqlite:///{tmp_path_factory.mktemp('img') / 'r.db'}"
    urls = (upstream.url,)  # type: ignore[attr-defined]
    settings = Settings(db_url=db, embedded=False, upstreams=urls)
    with serve(settings) as live:
        yield live


def _draw_then_answer(upstream: MockUpstream, prompt: str, answer: str = "Here is your fox.") -> None:
    call = {"index": 0, "id": "call_0", "type": "function",
            "function": {"name": "generate_image", "arguments": json.dumps({"prompt": prompt})}}  # fmt: skip
    upstream.script.append(Stream([{"choices": [{"index": 0, "delta": {"tool_calls": [call]}}]},
                                   {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}]))  # fmt: skip
    upstream.script.append(Stream(text_chunks(answer)))


def test_an_upstream_model_draws_with_the_images_model(server: LiveServer, upstream: MockUpstream) -> None:
    _draw_then_answer(upstream, "a red fox")
    tool = {"type": "image_generation", "size": "1024x1024", "quality": "low", "output_format": "png"}
    with openai.OpenAI(base_url=server.v1, api_key="x", max_retries=0) as client:
        reply = client.responses.create(model="up-model", input="Draw a red fox", tools=[tool])  # type: ignore[list-item]
    assert [item.type for item in reply.output] == ["image_generation_call", "message"]
    call = reply.output[0]
    assert call.status == "completed" and call.id.startswith("ig_")  # type: ignore[union-attr]
    assert base64.b64decode(call.result).startswith(b"\x89PNG")  # type: ignore[union-attr, arg-type]
    assert call.revised_prompt == "a red fox, as a watercolour"  # type: ignore[union-attr]
    assert reply.output_text == "Here is your fox."
    sent = upstream.image_requests[-1]
    assert sent["model"] == "gpt-image-1" and sent["prompt"] == "a red fox"
    assert (sent["size"], sent["quality"], sent["output_format"]) == ("1024x1024", "low", "png")
    [result] = [message for message in upstream.requests[-1]["messages"] if message["role"] == "tool"]
    assert "generated" in result["content"] and "watercolour" in result["content"]
    assert [tool["function"]["name"] for tool in upstream.requests[-2]["tools"]] == ["generate_image"]
    status = httpx.get(f"{server.v1}/server").json()["hosted_tools"]["image_generation"]
    assert status["enabled"] is True and status["default_model"] == "gpt-image-1"


def test_partial_images_stream_as_openai_sends_them(server: LiveServer, upstream: MockUpstream) -> None:
    _draw_then_answer(upstream, "a lighthouse")
    body = {"model": "up-model", "input": "Draw a lighthouse", "stream": True,
            "tools": [{"type": "image_generation", "partial_images": 2}]}  # fmt: skip
    events = parse_frames(httpx.post(f"{server.v1}/responses", json=body, timeout=30).content)
    kinds = [event["type"] for event in events if event.get("output_index") == 0]
    assert kinds == ["response.output_item.added", "response.image_generation_call.in_progress",
                     "response.image_generation_call.generating", "response.image_generation_call.partial_image",
                     "response.image_generation_call.partial_image", "response.image_generation_call.completed",
                     "response.output_item.done"]  # fmt: skip
    partials = [event for event in events if event["type"].endswith("partial_image")]
    assert [event["partial_image_index"] for event in partials] == [0, 1]
    assert base64.b64decode(partials[0]["partial_image_b64"]).startswith(b"\x89PNG")
    done = next(event for event in events if event["type"] == "response.output_item.done")["item"]
    assert done["status"] == "completed" and done["result"] and done["size"] == "1024x1024"
    assert upstream.image_requests[-1]["stream"] is True and upstream.image_requests[-1]["partial_images"] == 2


def test_a_refused_drawing_is_a_failed_call_not_a_failed_response(server: LiveServer, upstream: MockUpstream) -> None:
    upstream.images_refuse = True
    try:
        _draw_then_answer(upstream, "something forbidden", "I could not draw that.")
        reply = httpx.post(f"{server.v1}/responses", json={"model": "up-model", "input": "draw",
                                                            "tools": [{"type": "image_generation"}]}, timeout=30).json()  # fmt: skip
    finally:
        upstream.images_refuse = False
    assert reply["status"] == "completed" and reply["output"][0]["status"] == "failed"
    assert reply["output"][0]["error"]["code"] == "moderation_blocked"
    [result] = [message for message in upstream.requests[-1]["messages"] if message["role"] == "tool"]
    assert "could not be generated" in result["content"]


def test_an_images_model_no_upstream_serves_leaves_the_tool_out(server: LiveServer, upstream: MockUpstream) -> None:
    upstream.script.append(Stream(text_chunks("No drawing here.")))
    tool = {"type": "image_generation", "model": "dall-e-9"}
    reply = httpx.post(f"{server.v1}/responses", json={"model": "up-model", "input": "draw", "tools": [tool]},
                       timeout=30).json()  # fmt: skip
    assert [entry["type"] for entry in reply["ignored_tools"]] == ["image_generation"]
    assert "tools" not in upstream.requests[-1] or not upstream.requests[-1]["tools"]


@pytest.mark.parametrize(
    ("extra", "param"),
    [({"action": "edit"}, "tools[0].action"), ({"input_image_mask": {"file_id": "file_1"}}, "tools[0].input_image_mask"),
     ({"partial_images": 4}, "tools[0].partial_images")],
)  # fmt: skip
def test_what_the_images_api_cannot_do_is_a_400(server: LiveServer, extra: dict[str, Any], param: str) -> None:
    tool = {"type": "image_generation", **extra}
    reply = httpx.post(f"{server.v1}/responses", json={"model": "up-model", "input": "x", "tools": [tool]})
    assert reply.status_code == 400 and reply.json()["error"]["param"] == param


def test_the_simulator_keeps_its_simulated_drawing(server: LiveServer, upstream: MockUpstream) -> None:
    drawn = len(upstream.image_requests)
    reply = httpx.post(f"{server.v1}/responses", json={"model": "sim", "input": "Draw a picture of a cat",
                                                        "tools": [{"type": "image_generation"}]}, timeout=30).json()  # fmt: skip
    assert len(upstream.image_requests) == drawn
    assert reply["output"][0]["type"] == "image_generation_call" and reply["output"][0]["status"] == "completed"


def test_the_images_api_draws_with_the_images_model_an_upstream_serves(
    server: LiveServer, upstream: MockUpstream
) -> None:
    with openai.OpenAI(base_url=server.v1, api_key="x", max_retries=0) as client:
        drawn = client.images.generate(model="gpt-image-1", prompt="a lighthouse at dusk", n=2, size="1024x1024",
                                       quality="low")  # fmt: skip
        assert drawn.data is not None and len(drawn.data) == 2
        assert all(base64.b64decode(image.b64_json or "").startswith(b"\x89PNG") for image in drawn.data)
        sent = upstream.image_requests[-1]
        assert (sent["model"], sent["prompt"], sent["size"], sent["quality"]) == (
            "gpt-image-1", "a lighthouse at dusk", "1024x1024", "low")  # fmt: skip
        with pytest.raises(openai.BadRequestError) as missing:
            client.images.generate(model="dall-e-9", prompt="a cat")
        assert missing.value.code == "model_not_found" and missing.value.param == "model"
        with pytest.raises(openai.BadRequestError) as url:
            client.images.generate(model="gpt-image-1", prompt="a cat", response_format="url")
        assert url.value.param == "response_format"
    variation = httpx.post(f"{server.v1}/images/variations", files={"image": ("a.png", b"\x89PNG\r\n\x1a\n")})
    assert variation.status_code == 400 and "edits" in variation.json()["error"]["message"]  # (the SDK's is deprecated)


def test_the_images_api_edits_with_the_images_model_an_upstream_serves(
    server: LiveServer, upstream: MockUpstream
) -> None:
    photo, mask = b"\x89PNG\r\n\x1a\nphoto", b"\x89PNG\r\n\x1a\nmask"
    with openai.OpenAI(base_url=server.v1, api_key="x", max_retries=0) as client:
        edited = client.images.edit(model="gpt-image-1", image=[("cat.png", photo, "image/png"), ("hat.png", b"hat")],
                                    mask=("mask.png", mask), prompt="put the hat on the cat", size="1024x1024")  # fmt: skip
        assert edited.data is not None and base64.b64decode(edited.data[0].b64_json or "").startswith(b"\x89PNG")
        assert edited.data[0].revised_prompt == "put the hat on the cat, edited"
        sent = upstream.image_edits[-1]
        assert (
            sent["model"] == "gpt-image-1"
            and sent["prompt"] == "put the hat on the cat"
            and sent["size"] == "1024x1024"
        )
        assert sent["images"] == [("cat.png", photo), ("hat.png", b"hat")] and sent["mask"] == ("mask.png", mask)
        with pytest.raises(openai.BadRequestError) as unserved:
            client.images.edit(model="dall-e-9", image=("cat.png", photo), prompt="a hat")
        assert unserved.value.param == "model"
