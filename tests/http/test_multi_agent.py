"""Hosted multi-agent through the raw WebSocket and HTTP, with a scripted model whose every agent's turns
the test writes: each multi-agent action and the items it makes (checked against openai's beta types),
attribution, ``response.inject`` (taken, refused, and by a subagent), a subagent that fails, usage
summed over every agent, a stored multi-agent response continued, the root's model never reading a
subagent's items, and a subagent stopped when the response ends."""

from __future__ import annotations

import json
import threading
from collections import defaultdict, deque
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from openai.types.beta.beta_response_inject_created_event import BetaResponseInjectCreatedEvent
from openai.types.beta.beta_response_output_item import BetaResponseOutputItem
from pydantic import TypeAdapter

from responsa.backends import Backend, Finish, ModelEvent, ModelRequest, ToolCallDelta
from responsa.config import ApiKey, Settings
from responsa.protocol import Message, item_text
from tests.in_process import InProcess, in_process
from tests.scripted import USAGE, text

OUTPUT_ITEM: TypeAdapter[Any] = TypeAdapter(BetaResponseOutputItem)
WEATHER = {"type": "function", "name": "get_weather", "description": "The weather in a city.",
           "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}  # fmt: skip


def calls(*made: tuple[str, dict[str, Any]]) -> list[ModelEvent]:
    """A turn making these calls (name, arguments), one after the other."""
    events: list[ModelEvent] = [ToolCallDelta(index, json.dumps(arguments), name=name, call_id=f"call_{name}_{index}")
                                for index, (name, arguments) in enumerate(made)]  # fmt: skip
    return [*events, Finish("tool_calls", USAGE)]


HOLD: list[ModelEvent] = []
"""A turn that never ends (until the run is stopped)."""


class AgentScripts(Backend):
    """Each agent's turns, by the agent a request is for (a subagent's instructions name it); an agent
    whose turn ``HOLD`` is stopped is in ``stopped`` (``stopping`` is set as it is)."""

    def __init__(self) -> None:
        self.turns: dict[str, deque[list[ModelEvent] | Exception]] = defaultdict(deque)
        self.requests: dict[str, list[ModelRequest]] = defaultdict(list)
        self.stopped: list[str] = []
        self.stopping = threading.Event()

    def models(self) -> Sequence[str]:
        return ["agents"]

    @asynccontextmanager
    async def stream(self, request: ModelRequest) -> AsyncIterator[AsyncIterator[list[ModelEvent]]]:
        said = request.instructions or ""
        agent = said.split(",")[0].removeprefix("You are ") if said.startswith("You are /root/") else "/root"
        self.requests[agent].append(request)
        queued = self.turns[agent]
        turn = queued.popleft() if queued else RuntimeError(f"no turn left for {agent}")
        if isinstance(turn, Exception):
            raise turn

        async def events() -> AsyncIterator[list[ModelEvent]]:
            if turn is HOLD:
                try:
                    await anyio.sleep_forever()
                finally:
                    self.stopped.append(agent)
                    self.stopping.set()
            for event in turn:
                yield [event]

        yield events()


@pytest.fixture
def app(tmp_path: Path) -> Iterator[tuple[InProcess, AgentScripts]]:
    model = AgentScripts()
    with in_process(Settings(db_url=f"sqlite:///{tmp_path / 'r.db'}", embedded=False), backends=[model]) as served:
        yield served, model


def create(socket: Any, **fields: Any) -> None:
    socket.send_text(json.dumps({"type": "response.create", "model": "agents", "multi_agent": {"enabled": True},
                                 **fields}))  # fmt: skip


def until(socket: Any, *types: str) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The events up to the first of ``types``, and that one."""
    seen: list[dict[str, Any]] = []
    while True:
        event = json.loads(socket.receive_text())
        if event["type"] in types:
            return seen, event
        seen.append(event)


def done_items(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [event["item"] for event in events if event["type"] == "response.output_item.done"]


def test_every_action_and_its_items_as_openais_beta_types_say(app: tuple[InProcess, AgentScripts]) -> None:
    served, model = app
    model.turns["/root"] += [
        calls(("spawn_agent", {"task_name": "scout", "message": "Look around."}), ("list_agents", {})),
        calls(("wait_agent", {"targets": ["scout"]})),
        calls(
            ("send_message", {"target": "/root/scout", "message": "Be brief."}),
            ("followup_task", {"target": "scout", "message": "Now the north side."}),
            ("wait_agent", {"timeout_ms": 5000}),
        ),
        calls(("interrupt_agent", {"target": "scout"}), ("send_message", {"target": "nobody", "message": "?"})),
        text("All done."),
    ]
    model.turns["/root/scout"] += [text("Quiet here."), text("North is quiet too.")]
    with served.http.websocket_connect("/v1/responses") as socket:
        create(socket, input="Scout the area.")
        events, completed = until(socket, "response.completed", "response.failed")
    assert completed["type"] == "response.completed", completed
    items = done_items(events)
    typed = [OUTPUT_ITEM.validate_python(item) for item in items]
    assert {type(item).__name__ for item in typed} >= {"MultiAgentCall", "MultiAgentCallOutput", "AgentMessage"}
    outputs = {item["call_id"]: json.loads(item["output"][0]["text"]) for item in items
               if item["type"] == "multi_agent_call_output"}  # fmt: skip
    assert outputs["call_spawn_agent_0"] == {"agent": "/root/scout", "status": "queued"}
    assert outputs["call_list_agents_1"]["agents"][0]["name"] == "/root/scout"
    assert outputs["call_wait_agent_0"] == {"status": {"/root/scout": {"completed": "Quiet here."}}, "timed_out": False}
    assert outputs["call_wait_agent_2"]["status"]["/root/scout"] == {"completed": "North is quiet too."}
    assert outputs["call_followup_task_1"] == {"agent": "/root/scout", "status": "queued"}
    assert outputs["call_interrupt_agent_0"] == {"agent": "/root/scout", "status": "interrupted"}
    assert "error" in outputs["call_send_message_1"]
    sent = [item for item in items if item["type"] == "agent_message"]
    assert [(m["author"], m["recipient"], m["content"][0]["text"]) for m in sent] == [
        ("/root", "/root/scout", "Be brief."),
        ("/root", "/root/scout", "Now the north side."),
    ]
    # the subagent read the message and the follow-up at its next turn, after its own first answer
    second = [item_text(item) for item in model.requests["/root/scout"][1].items if isinstance(item, Message)]
    assert second == ["Look around.", "Quiet here.", "Be brief.", "Now the north side."]
    by_agent = {(item["type"], item["agent"]["agent_name"]) for item in items}
    assert ("message", "/root/scout") in by_agent and ("multi_agent_call", "/root") in by_agent
    added = [event["item"] for event in events if event["type"] == "response.output_item.added"]
    assert {item["id"]: item.get("agent") for item in added} == {item["id"]: item["agent"] for item in items}
    final = completed["response"]["output"][-1]
    assert (final["agent"], final["phase"], final["content"][0]["text"]) == ({"agent_name": "/root"}, "final_answer",
                                                                            "All done.")  # fmt: skip
    # usage: the root's five turns and the subagent's two, five model calls of USAGE each way
    assert completed["response"]["usage"]["input_tokens"] == 7 * USAGE.input_tokens
    assert completed["response"]["usage"]["output_tokens"] == 7 * USAGE.output_tokens
    # the root's model never read the subagent's items as its own
    for request in model.requests["/root"]:
        assert "Quiet here." not in [item_text(item) for item in request.items if isinstance(item, Message)]


def test_inject_answers_the_root_and_a_subagent_while_the_response_runs(app: tuple[InProcess, AgentScripts]) -> None:
    served, model = app
    model.turns["/root"] += [
        calls(
            ("spawn_agent", {"task_name": "helper", "message": "Weather in Oslo?"}), ("get_weather", {"city": "Rome"})
        ),
        calls(("wait_agent", {})),
        text("Rome and Oslo checked."),
    ]
    model.turns["/root/helper"] += [calls(("get_weather", {"city": "Oslo"})), text("Oslo: snow.")]
    with served.http.websocket_connect("/v1/responses") as socket:
        create(socket, input="Check the weather.", tools=[WEATHER])
        _events, created = until(socket, "response.created")
        response_id = created["response"]["id"]
        answered: dict[str, str] = {}
        while len(answered) < 2:  # each agent's call, as the client sees it, answered into the response
            _seen, done = until(socket, "response.output_item.done")
            item = done["item"]
            if item["type"] != "function_call":
                continue
            output = {
                "type": "function_call_output",
                "call_id": item["call_id"],
                "output": f"{item['agent']['agent_name']} ok",
            }
            socket.send_text(json.dumps({"type": "response.inject", "response_id": response_id, "input": [output]}))
            answered[item["agent"]["agent_name"]] = item["call_id"]
            _, ack = until(socket, "response.inject.created")
            BetaResponseInjectCreatedEvent.model_validate(ack)
            assert ack["response_id"] == response_id
        _rest, completed = until(socket, "response.completed", "response.failed")
        assert completed["type"] == "response.completed", completed
        socket.send_text(json.dumps({"type": "response.inject", "response_id": response_id, "input": [output]}))
        _, failed = until(socket, "response.inject.failed")
        assert failed["error"]["code"] == "response_already_completed"
    assert set(answered) == {"/root", "/root/helper"}
    output = completed["response"]["output"]
    injected = [item for item in output if item["type"] == "function_call_output"]
    assert {item["agent"]["agent_name"] for item in injected} == {"/root", "/root/helper"}
    assert all(item["id"].startswith("fco_") and item["status"] == "completed" for item in injected)
    # each model read its own call's output, and only its own
    helper_read = model.requests["/root/helper"][1].items
    assert any(getattr(item, "output", None) == "/root/helper ok" for item in helper_read)
    root_read = model.requests["/root"][1].items
    assert any(getattr(item, "output", None) == "/root ok" for item in root_read)
    assert not any(getattr(item, "output", None) == "/root/helper ok" for item in root_read)


def test_a_failing_subagent_ends_failed_and_the_response_goes_on(app: tuple[InProcess, AgentScripts]) -> None:
    served, model = app
    model.turns["/root"] += [calls(("spawn_agent", {"task_name": "doomed", "message": "Try."}), ("wait_agent", {})),
                             text("It failed; I carry on.")]  # fmt: skip
    model.turns["/root/doomed"].append(RuntimeError("the model broke"))
    with served.http.websocket_connect("/v1/responses") as socket:
        create(socket, input="Go.")
        events, completed = until(socket, "response.completed", "response.failed")
    assert completed["type"] == "response.completed"
    waited = next(item for item in done_items(events) if item["type"] == "multi_agent_call_output"
                  and item["action"] == "wait_agent")  # fmt: skip
    status = json.loads(waited["output"][0]["text"])["status"]["/root/doomed"]
    assert status.get("failed")


def test_over_http_a_subagents_client_call_ends_it_failed_saying_why(app: tuple[InProcess, AgentScripts]) -> None:
    served, model = app
    model.turns["/root"] += [calls(("spawn_agent", {"task_name": "asker", "message": "Weather?"}), ("wait_agent", {})),
                             text("Done.")]  # fmt: skip
    model.turns["/root/asker"].append(calls(("get_weather", {"city": "Bern"})))
    made = served.http.post("/v1/responses", json={"model": "agents", "input": "Go.", "tools": [WEATHER],
                                                   "multi_agent": {"enabled": True}}).json()  # fmt: skip
    assert made["status"] == "completed"
    waited = next(item for item in made["output"] if item["type"] == "multi_agent_call_output"
                  and item["action"] == "wait_agent")  # fmt: skip
    assert "response.inject" in json.loads(waited["output"][0]["text"])["status"]["/root/asker"]["failed"]


def test_a_stored_multi_agent_response_continues_and_round_trips(app: tuple[InProcess, AgentScripts]) -> None:
    served, model = app
    model.turns["/root"] += [calls(("spawn_agent", {"task_name": "w", "message": "Work."}), ("wait_agent", {})),
                             text("First done."), text("Second answer.")]  # fmt: skip
    model.turns["/root/w"].append(text("worked"))
    first = served.http.post("/v1/responses", json={"model": "agents", "input": "Go.",
                                                    "multi_agent": {"enabled": True}}).json()  # fmt: skip
    stored = served.http.get(f"/v1/responses/{first['id']}").json()
    assert stored["output"] == first["output"]  # every item, attributed, as it was sent
    second = served.http.post("/v1/responses", json={"model": "agents", "input": "And then?",
                                                     "previous_response_id": first["id"],
                                                     "multi_agent": {"enabled": True}}).json()  # fmt: skip
    assert second["status"] == "completed" and second["output"][-1]["content"][0]["text"] == "Second answer."
    read = model.requests["/root"][-1].items
    names = [getattr(item, "name", None) for item in read]
    assert names.count("spawn_agent") == 1 and names.count("wait_agent") == 1  # its calls, read as functions
    assert not any(getattr(item, "content", None) == "worked" for item in read)  # not the subagent's message
    items = served.http.get(f"/v1/responses/{first['id']}/input_items").json()
    assert items["data"][0]["type"] == "message"


def test_a_request_for_the_tool_itself_is_refused(app: tuple[InProcess, AgentScripts]) -> None:
    served, _model = app
    refused = served.http.post(
        "/v1/responses", json={"model": "agents", "input": "x", "tools": [{"type": "multi_agent"}]}
    )
    assert refused.status_code == 400 and refused.json()["error"]["param"] == "tools"


def test_inject_works_on_a_named_lane(app: tuple[InProcess, AgentScripts]) -> None:
    served, model = app
    model.turns["/root"] += [calls(("get_weather", {"city": "Lima"})), text("Lima checked.")]
    with served.http.websocket_connect("/v1/responses") as socket:
        create(socket, input="Weather?", tools=[WEATHER], stream_id="lane-a")
        _, created = until(socket, "response.created")
        _, done = until(socket, "response.output_item.done")
        assert done["stream_id"] == "lane-a" and done["item"]["type"] == "function_call"
        answer = {"type": "function_call_output", "call_id": done["item"]["call_id"], "output": "warm"}
        socket.send_text(json.dumps({"type": "response.inject", "response_id": created["response"]["id"],
                                     "input": [answer]}))  # fmt: skip
        _, ack = until(socket, "response.inject.created")
        assert ack["stream_id"] == "lane-a"
        _, completed = until(socket, "response.completed", "response.failed")
    assert completed["stream_id"] == "lane-a"
    assert completed["response"]["output"][-1]["content"][0]["text"] == "Lima checked."


def test_an_interrupt_stops_every_subagent_still_running(app: tuple[InProcess, AgentScripts]) -> None:
    served, model = app
    model.turns["/root"].append(calls(("spawn_agent", {"task_name": "slow", "message": "Take your time."}),
                                      ("wait_agent", {})))  # fmt: skip
    model.turns["/root/slow"].append(HOLD)
    with served.http.websocket_connect("/v1/responses") as socket:
        create(socket, input="Go.")
        _, created = until(socket, "response.created")
        until(socket, "response.output_item.added")  # the subagent's wait has begun once its call ran
        _, waiting = until(socket, "response.output_item.done")
        while waiting["item"]["type"] != "multi_agent_call" or waiting["item"]["action"] != "wait_agent":
            _, waiting = until(socket, "response.output_item.done")
        socket.send_text(json.dumps({"type": "response.interrupt", "response_id": created["response"]["id"],
                                     "mode": "discard_partial_items"}))  # fmt: skip
        _, ended = until(socket, "response.incomplete", "response.completed", "response.failed")
    assert ended["response"]["incomplete_details"]["reason"] == "interrupted"
    assert model.stopping.wait(10) and model.stopped == ["/root/slow"]


def test_a_wait_past_its_timeout_answers_what_is_still_running(app: tuple[InProcess, AgentScripts]) -> None:
    served, model = app
    model.turns["/root"] += [calls(("spawn_agent", {"task_name": "slow", "message": "Take your time."}),
                                   ("wait_agent", {"timeout_ms": 200})), text("I stop here.")]  # fmt: skip
    model.turns["/root/slow"].append(HOLD)
    with served.http.websocket_connect("/v1/responses") as socket:
        create(socket, input="Go.")
        events, completed = until(socket, "response.completed", "response.failed")
    assert completed["type"] == "response.completed", completed
    waited = next(item for item in done_items(events) if item["type"] == "multi_agent_call_output"
                  and item["action"] == "wait_agent")  # fmt: skip
    assert json.loads(waited["output"][0]["text"]) == {"status": {"/root/slow": "running"}, "timed_out": True}
    assert model.stopping.wait(10) and model.stopped == ["/root/slow"]  # stopped as the response ended


def test_subagents_take_from_the_tenants_rate_limit(tmp_path: Path) -> None:
    """Two requests a minute for the tenant: the root's request takes one, the first subagent's turn
    the other, and the second subagent is refused by the limit (it ends failed, saying so)."""
    model = AgentScripts()
    model.turns["/root"] += [calls(("spawn_agent", {"task_name": "one", "message": "A."}),
                                   ("spawn_agent", {"task_name": "two", "message": "B."}), ("wait_agent", {})),
                             text("Done.")]  # fmt: skip
    model.turns["/root/one"].append(text("a"))
    model.turns["/root/two"].append(text("b"))
    key = ApiKey("sk-limited", "limited", requests_per_minute=2)
    settings = Settings(db_url=f"sqlite:///{tmp_path / 'r.db'}", embedded=False, api_keys=(key,))
    with in_process(settings, backends=[model]) as served:
        made = served.http.post("/v1/responses", headers={"authorization": f"Bearer {key.key}"},
                                json={"model": "agents", "input": "Go.", "multi_agent": {"enabled": True,
                                                                                         "max_concurrent_subagents": 1}})  # fmt: skip
    waited = next(item for item in made.json()["output"] if item["type"] == "multi_agent_call_output"
                  and item["action"] == "wait_agent")  # fmt: skip
    status = json.loads(waited["output"][0]["text"])["status"]
    assert status["/root/one"] == {"completed": "a"}
    assert "Rate limit reached" in status["/root/two"]["failed"]
