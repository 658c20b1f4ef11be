"""The console in a real browser: the playground streams, runs a function-tool round trip by hand,
stops a response; the inspector shows a response's items, chain and timeline; the list filters;
compare re-runs a response on another model; the server page shows workers and counters; a second
tenant's key sees none of the first tenant's data. Nothing is loaded from any other host."""

from __future__ import annotations

import json
import re
import time
import uuid
from pathlib import Path

import httpx
import openai
from playwright.sync_api import Page, expect

from responsa.backends.llama_cpp import DEFAULT_MODEL_NAME
from tests.conftest import LiveServer

from .conftest import BOB, Watched

WEATHER_TOOL = {
    "type": "function",
    "name": "get_weather",
    "description": "Get the current weather for a city",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
}
LONG = "Write at length about the history of navigation"


def send(page: Page, text: str, model: str = "gpt-4.1") -> None:
    page.select_option("select[name=model]", model)
    page.fill("textarea[name=input]", text)
    page.click("button[name=send]")


def last_turn_status(page: Page, status: str) -> None:
    """The newest turn's status (scoped to it: until its stats are drawn, "the last status on the
    page" is the previous turn's, and a test would read a response still running)."""
    expect(page.locator(".turn").last.locator(".stats .status")).to_have_attribute("data-status", status)


def last_turn_id(page: Page) -> str:
    return page.locator(".turn").last.locator(".stats a").inner_text()


def test_the_page_and_its_assets_need_no_key_and_allow_no_other_host(console: LiveServer) -> None:
    with httpx.Client(base_url=console.url) as http:
        page = http.get("/")
        assert page.status_code == 200 and "text/html" in page.headers["content-type"]
        assert http.get("/console/js/app.js").status_code == 200
        for reply in (page, http.get("/console/console.css")):
            policy = reply.headers["content-security-policy"]
            assert "default-src 'self'" in policy and "connect-src 'self'" in policy
        assert http.get("/console/js/missing.js").status_code == 404
        assert http.get("/v1/responses").status_code == 401  # the data still needs a key


def test_a_streamed_prompt_arrives_as_it_is_generated(
    watched: Watched, alice: openai.OpenAI, screenshots: Path
) -> None:
    page = watched.page
    watched.open()
    send(page, LONG)
    # Text on the page while the response is still in progress: it arrives as it is generated.
    page.wait_for_function(
        """() => {
            const text = document.querySelector('.turn .output .item-message .text');
            const status = document.querySelector('.turn .stats .status');
            return text && text.textContent.length > 0 && status.dataset.status === 'in_progress';
        }"""
    )
    last_turn_status(page, "completed")
    expect(page.locator(".turn .stats .ttft")).to_contain_text("first token")
    expect(page.locator(".turn .stats .rate")).to_contain_text("tokens/s")
    stored = alice.responses.retrieve(last_turn_id(page))
    assert stored.status == "completed" and stored.model == "gpt-4.1"
    assert page.locator(".turn .output .item-message .text").inner_text() == stored.output_text.strip()
    expect(page.locator(".turn .stats .usage")).to_contain_text(f"{stored.usage.output_tokens} out")
    page.screenshot(path=screenshots / "console-playground.png", full_page=True)


def test_reasoning_summaries_arrive_in_the_playground(watched: Watched, alice: openai.OpenAI) -> None:
    page = watched.page
    watched.open()
    page.select_option("select[name=effort]", "medium")
    send(page, "Why is the sky blue?", model="o4-mini")
    last_turn_status(page, "completed")
    stored = alice.responses.retrieve(last_turn_id(page))
    [reasoning] = [item for item in stored.output if item.type == "reasoning"]
    assert stored.reasoning.effort == "medium" and reasoning.summary
    expect(page.locator(".turn .item-reasoning .text").first).to_have_text(reasoning.summary[0].text)


def test_a_function_call_answered_by_hand_continues_the_chain(watched: Watched, alice: openai.OpenAI) -> None:
    page = watched.page
    watched.open()
    page.fill("textarea[name=tools]", json.dumps([WEATHER_TOOL]))
    send(page, "What is the weather in Paris?")
    last_turn_status(page, "completed")
    call = page.locator(".turn .output .item-function_call")
    expect(call).to_contain_text("get_weather")
    first_id = last_turn_id(page)
    answer = page.locator("form.answer textarea")
    answer.fill("18 degrees and sunny")
    page.click("form.answer button[type=submit]")
    expect(page.locator(".turn")).to_have_count(2)
    last_turn_status(page, "completed")
    expect(page.locator(".turn").last.locator(".output .item-message")).to_be_visible()

    second = alice.responses.retrieve(last_turn_id(page))
    assert second.previous_response_id == first_id
    [given] = [item for item in alice.responses.input_items.list(second.id) if item.type == "function_call_output"]
    first_call = alice.responses.retrieve(first_id).output[0]
    assert first_call.type == "function_call" and given.call_id == first_call.call_id
    assert given.output == "18 degrees and sunny"
    assert "18 degrees and sunny" in second.output_text  # the simulator answers from the tool's output


def test_an_mcp_server_added_in_the_playground_is_called_and_drawn(watched: Watched, mcp_url: str) -> None:
    page = watched.page
    watched.open()
    page.fill("textarea[name=mcp]", f"weather {mcp_url}")
    send(page, "What is the forecast for Oslo?")
    last_turn_status(page, "completed")
    turn = page.locator(".turn").last
    expect(turn.locator(".item-mcp_list_tools")).to_contain_text("get_forecast")
    expect(turn.locator(".item-mcp_call")).to_contain_text("weather.get_forecast")
    expect(turn.locator(".item-mcp_call .output")).to_have_text("Forecast for Oslo: sunny, 21C")
    turn.locator(".stats a").click()
    expect(page.locator(".timeline svg g.bar[data-kind=tool]")).to_have_count(1)
    expect(page.locator(".timeline svg g.bar[data-kind=model]")).to_have_count(2)  # before and after the call


def test_the_inspector_shows_items_chain_and_timeline(
    watched: Watched, alice: openai.OpenAI, screenshots: Path
) -> None:
    first = alice.responses.create(model="gpt-4.1", input="What is the weather in Lima?", tools=[WEATHER_TOOL])
    call = first.output[0]
    assert call.type == "function_call"
    output = {"type": "function_call_output", "call_id": call.call_id, "output": "21 degrees, cloudy"}
    second = alice.responses.create(
        model="gpt-4.1", previous_response_id=first.id, input=[output], instructions="Be brief."
    )
    page = watched.page
    watched.open(f"#/responses/{second.id}")
    expect(page.locator("h1")).to_contain_text(second.id)
    expect(page.locator("table.parameters tr[data-name=instructions]")).to_contain_text("Be brief.")
    expect(page.locator(".chain")).to_contain_text(f"continues {first.id}")
    inputs = page.locator("section", has=page.locator("h2", has_text="Input items"))
    expect(inputs.locator(".item-function_call_output")).to_contain_text("21 degrees, cloudy")
    outputs = page.locator("section", has=page.locator("h2", has_text="Output items"))
    expect(outputs.locator(".item-message .text")).to_have_text(second.output_text.strip())
    # The timeline: the request, one model call with its first output marked, the message as a bar.
    timeline = page.locator(".timeline svg")
    expect(timeline.locator("g.bar[data-kind=model]")).to_have_count(1)
    expect(timeline.locator("g.bar[data-kind=model] line.first-output")).to_have_count(1)
    expect(timeline.locator("g.bar[data-kind=item]")).to_have_count(1)
    expect(page.locator(".timeline-figures")).to_contain_text(f"{second.usage.output_tokens} output tokens")
    page.screenshot(path=screenshots / "console-response.png", full_page=True)
    page.locator(".raw-toggle").last.click()
    assert json.loads(page.locator(".raw pre.json").last.inner_text())["id"] == second.id

    page.click(f".chain a[href='#/responses/{first.id}']")
    expect(page.locator(".chain")).to_contain_text(f"continued by {second.id}")
    expect(page.locator(".item-function_call")).to_contain_text("get_weather")


def test_the_list_filters_by_metadata_model_and_status(watched: Watched, alice: openai.OpenAI) -> None:
    batch = uuid.uuid4().hex
    made = [
        alice.responses.create(model=model, input=f"Say hello {n}", metadata={"batch": batch})
        for n, model in enumerate(["sim", "gpt-4.1-nano", "sim"])
    ]
    alice.responses.create(model="sim", input="Another batch", metadata={"batch": "other"})
    page = watched.page
    watched.open("#/responses")
    expect(page.locator("table.responses tbody tr").first).to_be_visible()
    page.fill("form.filters input[name=metadata]", f"batch={batch}")
    page.click("form.filters button[type=submit]")
    rows = page.locator("table.responses tbody tr")
    expect(rows).to_have_count(3)
    assert [rows.nth(i).get_attribute("data-id") for i in range(3)] == [r.id for r in reversed(made)]
    page.fill("form.filters input[name=model]", "sim")
    page.click("form.filters button[type=submit]")
    expect(rows).to_have_count(2)
    assert [rows.nth(i).get_attribute("data-id") for i in range(2)] == [made[2].id, made[0].id]
    page.select_option("form.filters select[name=status]", "failed")
    page.click("form.filters button[type=submit]")
    expect(page.locator(".empty")).to_have_text("No responses match.")


def test_a_running_background_response_is_cancelled_from_its_page(watched: Watched, alice: openai.OpenAI) -> None:
    running = alice.responses.create(model="o1", input=LONG, background=True)
    page = watched.page
    watched.open(f"#/responses/{running.id}")
    page.click("button[name=cancel]")
    # The cancel returns once the run has stopped, which it notices at the model's next output (the
    # simulated o1 can take a second there, more on a loaded CI machine): wait past the default 5 s.
    expect(page.locator("table.parameters tr[data-name=status]")).to_contain_text("cancelled", timeout=20_000)
    assert alice.responses.retrieve(running.id).status == "cancelled"


def test_the_playground_stops_a_background_response(watched: Watched, alice: openai.OpenAI) -> None:
    page = watched.page
    watched.open()
    page.check("input[name=background]")
    send(page, LONG, model="o1")
    page.wait_for_function("() => document.querySelector('.turn .output .item-message .text')?.textContent.length > 0")
    page.click("button[name=stop]")
    last_turn_status(page, "cancelled")
    stored = alice.responses.retrieve(last_turn_id(page))
    assert stored.status == "cancelled" and stored.background is True


def test_compare_reruns_a_response_with_its_context_on_another_model(
    watched: Watched, alice: openai.OpenAI, screenshots: Path
) -> None:
    first = alice.responses.create(model="gpt-4.1", input="My name is Ada.")
    original = alice.responses.create(
        model="gpt-4.1", previous_response_id=first.id, input="What is my name?", instructions="Answer briefly."
    )
    page = watched.page
    watched.open(f"#/compare/{original.id}")
    page.select_option("form.compare-form select[name=model]", "sim")
    page.fill("form.compare-form input[name=max_output_tokens]", "2000")
    page.click("form.compare-form button[type=submit]")
    columns = page.locator(".side-by-side .column[data-response]")
    expect(columns).to_have_count(2)
    rerun_id = columns.nth(1).get_attribute("data-response")
    assert rerun_id and rerun_id != original.id
    expect(columns.nth(1)).to_contain_text("sim")
    expect(columns.nth(1).locator(".timeline svg g.bar[data-kind=model]")).to_have_count(1)
    expect(columns.nth(0).locator(".timeline svg g.bar[data-kind=model]")).to_have_count(1)
    page.screenshot(path=screenshots / "console-compare.png", full_page=True)

    rerun = alice.responses.retrieve(rerun_id)
    assert rerun.model == "sim" and rerun.status == "completed" and rerun.max_output_tokens == 2000
    assert rerun.metadata == {"compare_of": original.id}
    assert rerun.previous_response_id == first.id and rerun.instructions == "Answer briefly."
    [asked] = alice.responses.input_items.list(rerun.id).data
    assert asked.type == "message" and asked.content[0].text == "What is my name?"


def test_the_server_page_shows_models_workers_and_counters(watched: Watched, screenshots: Path) -> None:
    page = watched.page
    watched.open("#/server")
    expect(page.locator("ul.models")).to_contain_text("up-model")
    expect(page.locator("ul.models")).to_contain_text(DEFAULT_MODEL_NAME)
    expect(page.locator("ul.models")).to_contain_text("gpt-4.1")
    expect(page.locator("ul.prompts")).to_contain_text("pmpt_greeting (versions 1)")
    workers = page.locator("table.workers tbody tr")
    expect(workers).to_have_count(2)
    expect(page.locator("table.workers")).to_contain_text("down")  # the worker nobody listens on
    expect(page.locator("table.workers")).to_contain_text("healthy")
    expect(workers.first).to_contain_text(" ms")
    expect(page.locator("[data-figure=request_rate]")).not_to_have_text("…")  # a second reading came
    assert int(page.locator("[data-figure=requests]").inner_text()) > 0
    page.screenshot(path=screenshots / "console-server.png", full_page=True)


def test_a_second_tenant_sees_none_of_the_first_tenants_responses(
    watched: Watched, alice: openai.OpenAI, console: LiveServer
) -> None:
    mine = alice.responses.create(model="sim", input="Only for alice", metadata={"owner": "alice"})
    page = watched.page
    watched.open("#/responses", key=BOB.key)
    expect(page.locator(".empty")).to_have_text("No responses match.")
    page.goto(f"{console.url}/#/responses/{mine.id}")
    expect(page.locator(".error")).to_contain_text("not found")
    page.goto(f"{console.url}/#/responses?metadata%5Bowner%5D=alice")
    expect(page.locator(".empty")).to_have_text("No responses match.")
    # The same list with alice's key has it.
    page.click("#key-button")
    page.fill("#key-input", "key-alice")
    page.click("#key-form button[type=submit]")
    expect(page.locator("table.responses tbody tr")).to_have_count(1)


def test_a_conversation_in_the_playground_has_its_own_page(watched: Watched) -> None:
    page = watched.page
    watched.open()
    page.select_option("select[name=mode]", "conversation")
    send(page, "Hello there", model="sim")
    last_turn_status(page, "completed")
    send(page, "Tell me more", model="sim")
    expect(page.locator(".turn")).to_have_count(2)
    last_turn_status(page, "completed")
    page.locator(".turn .stats a").last.click()
    page.locator("tr[data-name=conversation] a").click()
    expect(page.locator("h1")).to_contain_text("Conversation conv_")
    expect(page.locator("table.responses tbody tr")).to_have_count(2)
    expect(page.locator(".items .item-message")).to_have_count(4)


def test_the_embedded_model_answers_in_the_playground(watched: Watched, alice: openai.OpenAI) -> None:
    page = watched.page
    watched.open()
    page.fill("input[name=max_output_tokens]", "24")
    send(page, "Hello! Who are you?", model=DEFAULT_MODEL_NAME)
    status = page.locator(".turn .stats .status").last
    expect(status).to_have_attribute("data-status", re.compile("^(completed|incomplete)$"), timeout=120_000)
    stored = alice.responses.retrieve(last_turn_id(page))
    assert stored.model == DEFAULT_MODEL_NAME and stored.usage.output_tokens <= 24
    assert (
        stored.output_text
        and page.locator(".turn .output .item-message .text").inner_text() == stored.output_text.strip()
    )


def test_a_file_search_shows_its_passages_and_the_answer_its_sources(watched: Watched, alice: openai.OpenAI) -> None:
    notes = alice.files.create(file=("tides.txt", b"The moon's gravity pulls the oceans and makes the tides."),
                               purpose="assistants")  # fmt: skip
    store = alice.vector_stores.create(name="notes", file_ids=[notes.id])
    deadline = time.monotonic() + 30
    while alice.vector_stores.retrieve(store.id).file_counts.in_progress:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    answer = alice.responses.create(
        model="gpt-4.1", input="Search my documents about the tides",
        tools=[{"type": "file_search", "vector_store_ids": [store.id]}], include=["file_search_call.results"],
    )  # fmt: skip
    page = watched.page
    watched.open(f"#/responses/{answer.id}")
    search = page.locator(".item-file_search_call")
    expect(search).to_contain_text("Searched for:")
    expect(search.locator(".hit")).to_contain_text("tides.txt")
    expect(page.locator(".item-message .citations")).to_have_text("Sources: tides.txt")


def test_batches_show_their_progress_and_webhooks_their_deliveries(
    watched: Watched, alice: openai.OpenAI, screenshots: Path
) -> None:
    from tests.http.test_batches import line, upload
    from tests.webhook_receiver import Receiver

    with Receiver(statuses=[500]) as receiver:
        endpoint = alice.webhooks.create(name="ops", url=receiver.url, event_types=["batch.completed"])
        lines = [line(f"c{index}", {"model": "gpt-4.1", "input": "Hello"}) for index in range(3)]
        batch = alice.batches.create(
            input_file_id=upload(alice, lines), endpoint="/v1/responses", completion_window="24h"
        )
        page = watched.page
        watched.open("#/batches")
        row = page.locator(f"table.batches tr[data-id='{batch.id}']")
        expect(row.locator(".status")).to_have_attribute("data-status", "completed")  # read again until it ends
        expect(row.locator(".progress")).to_have_attribute("data-done", "3")
        page.screenshot(path=screenshots / "console-batches.png", full_page=True)
        receiver.next()
        receiver.next()  # the first answer was a 500: the retry came
        watched.open("#/webhooks", key=None)
        section = page.locator(f"section.endpoint[data-id='{endpoint.id}']")
        expect(section.locator("table.deliveries .status")).to_have_attribute("data-status", "delivered")
        expect(section.locator("table.deliveries")).to_contain_text("batch.completed")
