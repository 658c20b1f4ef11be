"""Compaction v2 (Codex's remote compaction): a create whose last input item is ``compaction_trigger``
answers exactly one ``compaction`` output item, over JSON and SSE, on the simulator and an upstream;
the summary keeps every kind of tool call; the item works as input afterwards."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest

from responsa.backends.llama_cpp import DEFAULT_MODEL_NAME
from tests.backends.mock_upstream import Stream, text_chunks
from tests.backends.test_chat_completions import Rig, start_rig
from tests.conftest import LiveServer, sqlite_server
from tests.http.test_compaction import HISTORY
from tests.http.test_streaming import WEATHER_TOOL, parse_frames
from tests.spec import openai_event

TRIGGER: dict[str, Any] = {"type": "compaction_trigger"}

TOOL_HISTORY: list[Any] = [
    {"role": "user", "content": "Check the repository and fix the build."},
    {"type": "shell_call", "call_id": "sh_1", "status": "completed",
     "action": {"commands": ["ls build-scripts"], "timeout_ms": 1000}},
    {"type": "shell_call_output", "call_id": "sh_1",
     "output": [{"stdout": "make-release.sh\n", "stderr": "", "outcome": {"type": "exit", "exit_code": 0}}]},
    {"type": "custom_tool_call", "call_id": "ap_1", "name": "apply_patch",
     "input": "*** Begin Patch\n*** Update File: Makefile-orchid\n*** End Patch"},
    {"type": "custom_tool_call_output", "call_id": "ap_1", "output": "patched Makefile-orchid"},
    {"type": "mcp_call", "id": "mcp_1", "server_label": "tracker", "name": "close_ticket",
     "arguments": "{\"ticket\": \"TCK-8812\"}", "output": "closed"},
]  # fmt: skip


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    yield from sqlite_server(tmp_path_factory, "compaction-trigger")


@pytest.fixture
def rig(tmp_path: Path) -> Iterator[Rig]:
    yield from start_rig(tmp_path)


def test_a_trigger_answers_exactly_one_compaction_item_that_works_as_input(client: openai.OpenAI) -> None:
    compacted = client.responses.create(model="sim", input=[*HISTORY, TRIGGER], tools=[WEATHER_TOOL], store=False)  # type: ignore[list-item]
    assert compacted.status == "completed"
    (item,) = compacted.output
    assert item.type == "compaction" and item.id.startswith("cmp_")
    assert "Tuesday" not in item.encrypted_content
    assert compacted.usage is not None and compacted.usage.output_tokens > 0
    # What Codex sends next: its user messages, then the compaction item, then the new turn.
    window = [HISTORY[0], HISTORY[2], item.to_dict(warnings=False), {"role": "user", "content": "When is the launch?"}]
    follow = client.responses.create(model="sim", input=window)  # type: ignore[arg-type]
    assert follow.status == "completed" and follow.output[-1].type == "message"


def test_a_trigger_with_an_id_streams_compacting_then_the_item(server: LiveServer) -> None:
    body = {"model": "sim", "input": [*HISTORY, {**TRIGGER, "id": "ct_7"}], "stream": True, "tools": [WEATHER_TOOL]}
    events = parse_frames(httpx.post(f"{server.v1}/responses", json=body, timeout=30).content)
    assert [event["sequence_number"] for event in events] == list(range(len(events)))
    assert all(openai_event(event).type == event["type"] for event in events)
    kinds = [event["type"] for event in events]
    assert kinds[0] == "response.created" and kinds[-1] == "response.completed"
    assert kinds.index("response.output_item.added") < kinds.index("response.compaction.compacting")
    assert kinds.index("response.compaction.compacting") < kinds.index("response.output_item.done")
    (done,) = [event["item"] for event in events if event["type"] == "response.output_item.done"]
    assert done["type"] == "compaction" and events[-1]["response"]["output"] == [done]


def test_a_trigger_that_is_not_the_last_item_is_a_400(client: openai.OpenAI) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        client.responses.create(model="sim", input=[HISTORY[0], TRIGGER, HISTORY[2]])  # type: ignore[list-item]
    assert caught.value.code == "invalid_value"
    assert caught.value.param == "input[1]"


def test_the_upstream_summarizes_every_kind_of_tool_call(rig: Rig) -> None:
    rig.first.script.append(Stream(text_chunks("Fixed the build; ticket TCK-8812 closed.")))
    compacted = rig.sdk.responses.create(model="up-model", input=[*TOOL_HISTORY, TRIGGER], store=False)  # type: ignore[list-item]
    assert [item.type for item in compacted.output] == ["compaction"]
    asked = rig.first.requests[-1]["messages"]
    assert "compact" in asked[0]["content"].lower()  # the summary instructions, not the user's tools
    transcript = asked[-1]["content"]
    for said in ("ls build-scripts", "make-release.sh", "Makefile-orchid", "patched Makefile-orchid", "TCK-8812"):
        assert said in transcript, said
    assert "tools" not in rig.first.requests[-1]

    item = compacted.output[0].to_dict(warnings=False)
    rig.sdk.responses.create(model="up-model", input=[item, {"role": "user", "content": "Done?"}])
    seen = rig.first.requests[-1]["messages"]
    assert any("Fixed the build; ticket TCK-8812 closed." in str(message["content"]) for message in seen)


def test_the_embedded_model_writes_the_compaction_a_trigger_asks_for(client: openai.OpenAI) -> None:
    compacted = client.responses.create(model=DEFAULT_MODEL_NAME, input=[*HISTORY, TRIGGER], tools=[WEATHER_TOOL])  # type: ignore[list-item]
    (item,) = compacted.output
    assert item.type == "compaction" and compacted.usage is not None and compacted.usage.output_tokens > 0
    question = {"role": "user", "content": "When is the launch?"}
    follow = client.responses.create(model=DEFAULT_MODEL_NAME, input=[item.to_dict(warnings=False), question],  # type: ignore[list-item]
                                     max_output_tokens=8)  # fmt: skip
    assert follow.usage is not None and follow.usage.input_tokens > 20  # the summary reached the model
