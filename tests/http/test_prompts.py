"""Reusable prompts through the openai SDK: a create names a prompt of ``--prompts-dir`` by id (and
version), its variables fill the prompt's text and parts, the response echoes it; unknown ids,
versions and missing variables are a 400 naming the field; a server without prompts refuses them."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from pathlib import Path

import httpx
import openai
import pytest

from responsa.config import Settings
from tests.conftest import LiveServer, serve

TRAVEL = """
[versions.1]
instructions = "You plan trips to {{city}}."
input = [{ role = "user", content = "Plan a day in {{city}}." }]

[versions.2]
instructions = "You plan trips to {{city}} on a budget of {{budget}}."
input = [{ role = "user", content = [{ type = "input_text", text = "Plan three days in {{city}}." },
                                      { type = "input_text", text = "{{photo}}" }] }]
"""
PIXEL = (
    "data:image/png;base64,"
    + base64.b64encode(
        bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000")
        + bytes.fromhex("1f15c4890000000d49444154789c6360000002000100e221bc330000000049454e44ae426082")
    ).decode()
)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    folder = tmp_path_factory.mktemp("prompts")
    (folder / "prompts").mkdir()
    (folder / "prompts" / "pmpt_travel.toml").write_text(TRAVEL)
    settings = Settings(db_url=f"sqlite:///{folder / 'r.db'}", prompts_dir=folder / "prompts", embedded=False)
    with serve(settings) as live:
        yield live


def test_a_prompt_fills_instructions_and_input_and_is_echoed(client: openai.OpenAI) -> None:
    response = client.responses.create(model="sim", prompt={"id": "pmpt_travel", "version": "1",
                                                             "variables": {"city": "Lisbon"}})  # fmt: skip
    assert response.instructions == "You plan trips to Lisbon."
    assert response.prompt is not None and response.prompt.id == "pmpt_travel" and response.prompt.version == "1"
    items = client.responses.input_items.list(response.id, order="asc").data
    assert [item.content[0].text for item in items] == ["Plan a day in Lisbon."]  # type: ignore[union-attr]


def test_the_latest_version_with_an_image_variable_and_the_requests_own_input(client: openai.OpenAI) -> None:
    variables = {"city": "Porto", "budget": {"type": "input_text", "text": "300 euros"},
                 "photo": {"type": "input_image", "image_url": PIXEL}}  # fmt: skip
    response = client.responses.create(model="sim", input="Also, where to eat?",
                                       prompt={"id": "pmpt_travel", "variables": variables})  # type: ignore[typeddict-item]  # fmt: skip
    assert response.prompt is not None and response.prompt.version == "2"
    assert response.instructions == "You plan trips to Porto on a budget of 300 euros."
    first, own = client.responses.input_items.list(response.id, order="asc").data
    parts = first.content  # type: ignore[union-attr]
    assert parts[0].text == "Plan three days in Porto." and parts[1].type == "input_image"
    assert own.content[0].text == "Also, where to eat?"  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("prompt", "param"),
    [
        ({"id": "pmpt_missing"}, "prompt.id"),
        ({"id": "pmpt_travel", "version": "9", "variables": {"city": "x"}}, "prompt.version"),
        ({"id": "pmpt_travel", "version": "1"}, "prompt.variables.city"),
    ],
)
def test_what_a_prompt_cannot_resolve_is_a_400_naming_it(client: openai.OpenAI, prompt: dict, param: str) -> None:  # type: ignore[type-arg]
    with pytest.raises(openai.BadRequestError) as caught:
        client.responses.create(model="sim", prompt=prompt)  # type: ignore[arg-type]
    assert caught.value.param == param


def test_the_prompts_are_listed(server: LiveServer) -> None:
    listed = httpx.get(f"{server.v1}/prompts").json()
    assert listed == {"object": "list", "data": [{"id": "pmpt_travel", "object": "prompt", "versions": ["1", "2"]}]}


def test_a_server_without_prompts_refuses_one(tmp_path: Path) -> None:
    with serve(Settings(db_url=f"sqlite:///{tmp_path / 'r.db'}", embedded=False)) as live:
        with openai.OpenAI(base_url=live.v1, api_key="-", max_retries=0) as client:
            with pytest.raises(openai.BadRequestError) as caught:
                client.responses.create(model="sim", prompt={"id": "pmpt_travel"})
    assert caught.value.param == "prompt"
