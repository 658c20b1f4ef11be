"""The Admin API's usage and costs (``client.admin.organization.usage``) through openai's admin client:
what responses (stored or not, interactive or batch), their tool calls and moderations used, by
project, key, model and bucket, against what the responses themselves report; costs from the prices
set; paging; refusals; another process's usage reaching the store."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import openai
import pytest

from responsa.config import Price, Settings
from tests.conftest import fresh_store
from tests.http.test_admin_api import _answers, _client, _project_key, _until
from tests.http.test_batches import finished, line, upload
from tests.in_process import InProcess, in_process
from tests.webhook_receiver import Receiver

ADMIN = "sk-admin-usage"
PRICES = (
    Price("sim", "input", 2.0),
    Price("sim", "output", 8.0),
    Price("*", "web_search_calls", 10.0),
    Price("gpt-4.1-nano", "output", 1e6),
)  # a dollar a token: one answer passes a small spend limit


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def app(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[InProcess]:
    with fresh_store(request.param, tmp_path_factory.mktemp("usage")) as url:
        settings = Settings(db_url=url, embedded=False, sim_latency=False, admin_key=ADMIN, prices=PRICES,
                            webhook_allow_hosts=("127.0.0.1",))  # fmt: skip
        with in_process(settings) as served:
            yield served


@pytest.fixture(scope="module")
def used(app: InProcess) -> dict[str, object]:
    """Two projects' traffic, made once: what the responses say they used."""
    org = _client(app, ADMIN).admin.organization
    made: dict[str, object] = {"org": org, "since": int(time.time())}
    for name in ("one", "two"):
        project = org.projects.create(name=name)
        account = org.projects.service_accounts.create(project.id, name=f"{name}-bot")
        assert account.api_key is not None
        made[name] = (project.id, account.api_key.id, _client(app, account.api_key.value))
    _, _, one = made["one"]  # type: ignore[misc]
    _, _, two = made["two"]  # type: ignore[misc]
    replies = [one.responses.create(model="sim", input=f"Reply with: answer {n}") for n in range(3)]
    replies.append(one.responses.create(model="sim", input="Reply with: not kept", store=False))
    replies.append(one.responses.create(model="sim-large", input="hello"))
    searched = two.responses.create(model="sim", input="search the web for the weather in Paris",
                                    tools=[{"type": "web_search"}], tool_choice="required")  # fmt: skip
    two.moderations.create(input="hello")
    batch = two.batches.create(input_file_id=upload(two, [line(f"b{n}", {"model": "sim", "input": "hi"}) for n in (1, 2)]),
                               endpoint="/v1/responses", completion_window="24h")  # fmt: skip
    assert finished(two, batch.id).status == "completed"
    made["replies"], made["searched"] = replies, searched
    return made


def _results(page: object) -> list[dict[str, object]]:
    return [result.model_dump() for bucket in page.data for result in bucket.results]  # type: ignore[attr-defined]


def test_completions_by_model_project_and_key(used: dict[str, object]) -> None:
    org, since = used["org"], used["since"]
    one_id, one_key, _ = used["one"]  # type: ignore[misc]
    page = org.usage.completions(start_time=since, bucket_width="1h", group_by=["project_id", "api_key_id", "model"],  # type: ignore[attr-defined]
                                 project_ids=[one_id])  # fmt: skip
    results = {result["model"]: result for result in _results(page)}
    replies = used["replies"]
    for model in ("sim", "sim-large"):
        mine = [reply for reply in replies if reply.model == model]  # type: ignore[attr-defined]
        found = results[model]
        assert (found["project_id"], found["api_key_id"]) == (one_id, one_key)
        assert found["num_model_requests"] == len(mine)
        assert found["input_tokens"] == sum(reply.usage.input_tokens for reply in mine)
        assert found["output_tokens"] == sum(reply.usage.output_tokens for reply in mine)


def test_batch_apart_tool_calls_and_moderations(used: dict[str, object]) -> None:
    org, since = used["org"], used["since"]
    two_id, two_key, _ = used["two"]  # type: ignore[misc]
    by_batch = {result["batch"]: result for result in _results(org.usage.completions(  # type: ignore[attr-defined]
        start_time=since, group_by=["batch"], project_ids=[two_id]))}  # fmt: skip
    assert by_batch[True]["num_model_requests"] == 2 and by_batch[False]["num_model_requests"] == 1
    only = _results(org.usage.completions(start_time=since, batch=True, project_ids=[two_id]))  # type: ignore[attr-defined]
    assert [result["num_model_requests"] for result in only] == [2]
    searches = [call for call in used["searched"].output if call.type == "web_search_call"]  # type: ignore[attr-defined]
    web = _results(org.usage.web_search_calls(start_time=since, group_by=["api_key_id"]))  # type: ignore[attr-defined]
    assert [(result["num_requests"], result["num_model_requests"], result["api_key_id"]) for result in web] == [
        (len(searches), 1, two_key)]  # fmt: skip
    moderated = _results(org.usage.moderations(start_time=since, group_by=["project_id"]))  # type: ignore[attr-defined]
    assert [(result["num_model_requests"], result["project_id"]) for result in moderated] == [(1, two_id)]


def test_costs_from_the_prices_set(used: dict[str, object]) -> None:
    org, since = used["org"], used["since"]
    one_id, _, _ = used["one"]  # type: ignore[misc]
    costs = _results(org.usage.costs(start_time=since, group_by=["line_item"], project_ids=[one_id]))  # type: ignore[attr-defined]
    by_line = {result["line_item"]: result for result in costs}
    sim = [reply for reply in used["replies"] if reply.model == "sim"]  # type: ignore[attr-defined]
    input_tokens, output_tokens = (sum(getattr(r.usage, f) for r in sim) for f in ("input_tokens", "output_tokens"))
    assert by_line["sim, input"]["amount"]["value"] == pytest.approx(input_tokens * 2.0 / 1e6, abs=1e-6)
    assert by_line["sim, output"]["amount"]["value"] == pytest.approx(output_tokens * 8.0 / 1e6, abs=1e-6)
    assert by_line["sim, output"]["quantity"] == output_tokens
    assert by_line["sim-large, output"]["amount"]["value"] == 0 and by_line["sim-large, output"]["unpriced"]
    two_id, _, _ = used["two"]  # type: ignore[misc]
    tools = _results(org.usage.costs(start_time=since, group_by=["line_item"], project_ids=[two_id],  # type: ignore[attr-defined]
                                     line_items=["web search calls"]))  # fmt: skip
    assert tools and tools[0]["amount"]["value"] == pytest.approx(tools[0]["quantity"] * 10.0 / 1000)


def test_buckets_page_from_start_time(used: dict[str, object]) -> None:
    org, since = used["org"], used["since"]
    start = since - 600
    first = org.usage.completions(start_time=start, bucket_width="1m", limit=5)  # type: ignore[attr-defined]
    assert len(first.data) == 5 and first.has_more and first.data[0].start_time == start - start % 60
    assert all(bucket.end_time - bucket.start_time == 60 for bucket in first.data)
    second = org.usage.completions(start_time=start, bucket_width="1m", limit=5, page=first.next_page)  # type: ignore[attr-defined]
    assert second.data[0].start_time == first.data[-1].end_time


@pytest.mark.parametrize(("query", "param"), [
    ({}, "start_time"), ({"bucket_width": "1w"}, "bucket_width"), ({"group_by[]": "colour"}, "group_by"),
    ({"user_ids[]": "user-1"}, "user_ids"), ({"bucket_width": "1m", "limit": "2000"}, "limit"), ({"limit": "0"}, "limit"),
])  # fmt: skip
def test_what_cannot_be_answered_is_a_400_naming_it(app: InProcess, query: dict[str, str], param: str) -> None:
    asked = {"start_time": "0", **query} if param != "start_time" else query
    reply = app.http.get("/v1/organization/usage/completions", params=asked,
                         headers={"authorization": f"Bearer {ADMIN}"})  # fmt: skip
    assert reply.status_code == 400 and reply.json()["error"]["param"] == param


def test_a_spend_limit_stops_a_project_until_it_is_raised(app: InProcess) -> None:
    org = _client(app, ADMIN).admin.organization
    project_id, key = _project_key(org, "thrifty")
    client = _client(app, key)
    with pytest.raises(openai.NotFoundError):
        org.projects.spend_limit.retrieve(project_id)
    limit = org.projects.spend_limit.update(project_id, threshold_amount=100, currency="USD", interval="month")
    assert (limit.threshold_amount, limit.enforcement.status) == (100, "inactive")
    client.responses.create(model="gpt-4.1-nano", input="Reply with: dear")  # a dollar or more

    def refused() -> bool:
        try:
            client.responses.create(model="sim", input="hi")
        except openai.RateLimitError as error:
            return error.code == "spend_limit_exceeded"
        return False

    _until(refused)
    assert org.projects.spend_limit.retrieve(project_id).enforcement.status == "enforcing"
    with pytest.raises(openai.RateLimitError):
        client.moderations.create(input="hi")
    org.projects.spend_limit.update(project_id, threshold_amount=10**9, currency="USD", interval="month")
    _until(lambda: not refused())
    assert org.projects.spend_limit.delete(project_id).deleted
    assert client.responses.create(model="sim", input="Reply with: free").output_text == "free"


def test_a_spend_alert_reaches_the_projects_webhook_endpoints(app: InProcess) -> None:
    org = _client(app, ADMIN).admin.organization
    project_id, key = _project_key(org, "alerted")
    client = _client(app, key)
    alerts = org.projects.spend_alerts
    with Receiver() as receiver:
        endpoint = client.webhooks.create(name="spend", url=receiver.url, event_types=["project.spend_alert.triggered"])
        with pytest.raises(openai.BadRequestError) as refused:
            alerts.create(project_id, threshold_amount=100, currency="USD", interval="month",
                          notification_channel={"type": "email", "recipients": ["ops@example.com"]})  # fmt: skip
        assert refused.value.param == "notification_channel.type"
        alert = alerts.create(project_id, threshold_amount=100, currency="USD", interval="month",
                              notification_channel={"type": "webhook"})  # type: ignore[typeddict-item]  # fmt: skip
        assert [found.id for found in alerts.list(project_id)] == [alert.id]
        assert alerts.retrieve(alert.id, project_id=project_id).threshold_amount == 100
        client.responses.create(model="gpt-4.1-nano", input="Reply with: dear")  # a dollar or more
        headers, body = receiver.next()
        client.webhooks.verify_signature(body, headers, secret=endpoint.signing_secret)
        event = json.loads(body)
        assert (event["type"], event["data"]["id"]) == ("project.spend_alert.triggered", alert.id)
    raised = alerts.update(alert.id, project_id=project_id, threshold_amount=10**9, currency="USD", interval="month",
                           notification_channel={"type": "webhook"})  # type: ignore[typeddict-item]  # fmt: skip
    assert raised.threshold_amount == 10**9
    assert alerts.delete(alert.id, project_id=project_id).deleted
    assert alerts.list(project_id).data == []


def test_another_process_usage_reaches_the_store(tmp_path: Path) -> None:
    settings = Settings(db_url=f"sqlite:///{tmp_path / 'u.db'}", embedded=False, sim_latency=False, admin_key=ADMIN,
                        keys_poll_secs=0.05)  # fmt: skip
    since = int(time.time())
    with in_process(settings) as one, in_process(settings) as two:
        org = _client(one, ADMIN).admin.organization
        project_id, key = _project_key(org, "elsewhere")
        there = _client(two, key)
        _until(lambda: _answers(there))
        there.responses.create(model="sim", input="Reply with: from two")

        def counted() -> bool:
            return bool(_results(org.usage.completions(start_time=since, project_ids=[project_id])))

        _until(counted)  # the other process writes what it counted about once a second


def test_vector_stores_usage_is_what_they_hold_over_time(tmp_path: Path) -> None:
    """A project's vector store bytes, as their mean over the bucket: what it holds now once it held it
    for most of the bucket; less once its file is gone; nothing for a project with no store."""
    settings = Settings(db_url=f"sqlite:///{tmp_path / 'v.db'}", embedded=False, sim_latency=False, admin_key=ADMIN)
    since = int(time.time())
    with in_process(settings) as served:
        org = _client(served, ADMIN).admin.organization
        project_id, key = _project_key(org, "stores")
        empty_id, _ = _project_key(org, "no stores")
        project = _client(served, key)
        upload = project.files.create(file=("facts.txt", b"Bees dance to tell where flowers are. " * 40),
                                      purpose="assistants")  # fmt: skip
        store = project.vector_stores.create(name="facts", file_ids=[upload.id])
        _until(lambda: project.vector_stores.retrieve(store.id).status == "completed")
        held = project.vector_stores.retrieve(store.id).usage_bytes
        assert held > 0

        def usage() -> dict[str, int]:
            page = org.usage.vector_stores(start_time=since, group_by=["project_id"])
            return {result["project_id"]: result["usage_bytes"] for result in _results(page)}  # type: ignore[misc]

        first = usage()
        assert 0 < first[project_id] <= held and empty_id not in first
        total = _results(org.usage.vector_stores(start_time=since))  # ungrouped: every project's mean added up
        assert len(total) == 1 and total[0].get("project_id") is None and total[0]["usage_bytes"] >= first[project_id]
        time.sleep(1.5)  # time is what is measured: held for longer, the mean moves towards what it holds
        assert first[project_id] <= usage()[project_id] <= held
        project.vector_stores.files.delete(upload.id, vector_store_id=store.id)
        time.sleep(1.5)  # ... and towards nothing once it holds nothing
        assert usage()[project_id] < held
        with pytest.raises(openai.BadRequestError):
            org.usage.vector_stores(start_time=since, group_by=["model"])  # type: ignore[list-item]
