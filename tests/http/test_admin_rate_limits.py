"""A project's rate limits per model (``client.admin.organization.projects.rate_limits``) through openai's
admin client: each served model listed, a change holding at once for the project's keys on responses,
images and the WebSocket, per model and per kind (requests and tokens a minute, requests a day), logged
in the audit log; across two replicas through Redis; across workers through their shared file."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import openai
import pytest

from responsa.config import Settings
from responsa.engine.projects import LimitTable, RateLimits
from responsa.protocol import RateLimited
from responsa.serve._shared_limits import SharedRateLimiter
from tests.http import test_admin_api
from tests.http.test_admin_api import _client, _project_key, _until
from tests.in_process import InProcess, in_process
from tests.serve import test_redis_limits

ADMIN = test_admin_api.ADMIN
app = test_admin_api.app
"""The admin API's app (on SQLite, then on PostgreSQL), one of this module's own."""
org = test_admin_api.org
redis_url = test_redis_limits.redis_url
"""The shared test Redis (skipped when none answers, unless CI requires it)."""
Org = openai.resources.admin.organization.Organization


def _refused(call: object) -> openai.RateLimitError:
    with pytest.raises(openai.RateLimitError) as refused:
        call()  # type: ignore[operator]
    return refused.value


def test_each_served_model_is_listed_and_a_limit_holds_at_once(org: Org, app: InProcess) -> None:
    project_id, key = _project_key(org, "limited")
    listed = {limit.model: limit for limit in org.projects.rate_limits.list_rate_limits(project_id)}
    assert {"sim", "sim-large"} <= set(listed)
    assert listed["sim"].id == "rl-sim" and listed["sim"].object == "project.rate_limit"
    assert (listed["sim"].max_requests_per_1_minute, listed["sim"].max_tokens_per_1_minute) == (0, 0)

    made = org.projects.rate_limits.update_rate_limit("rl-sim", project_id=project_id, max_requests_per_1_minute=2)
    assert (made.model, made.max_requests_per_1_minute, made.max_tokens_per_1_minute) == ("sim", 2, 0)
    again = {limit.model: limit for limit in org.projects.rate_limits.list_rate_limits(project_id)}
    assert again["sim"].max_requests_per_1_minute == 2

    project = _client(app, key)
    for n in range(2):
        assert project.responses.create(model="sim", input=f"Reply with: {n}").output_text == str(n)
    refused = _refused(lambda: project.responses.create(model="sim", input="hi"))
    assert refused.code == "rate_limit_exceeded" and "for sim: requests per minute (2)" in refused.message
    assert int(refused.response.headers["retry-after"]) >= 1
    assert project.responses.create(model="sim-large", input="hello").status == "completed"  # its own model
    _, other_key = _project_key(org, "unlimited")
    assert _client(app, other_key).responses.create(model="sim", input="Reply with: free").output_text == "free"

    org.projects.rate_limits.update_rate_limit("rl-sim", project_id=project_id, max_requests_per_1_minute=0)
    assert project.responses.create(model="sim", input="Reply with: again").output_text == "again"
    logged = org.audit_logs.list(event_types=["rate_limit.updated"], project_ids=[project_id])
    changes = [entry.to_dict()["rate_limit.updated"] for entry in logged.data]
    assert {"id": "rl-sim", "changes_requested": {"max_requests_per_1_minute": 0}} in changes
    assert {"id": "rl-sim", "changes_requested": {"max_requests_per_1_minute": 2}} in changes


def test_tokens_a_minute_and_requests_a_day(org: Org, app: InProcess) -> None:
    project_id, key = _project_key(org, "tokens")
    project = _client(app, key)
    org.projects.rate_limits.update_rate_limit("rl-sim", project_id=project_id, max_tokens_per_1_minute=5)
    first = project.responses.create(model="sim", input="Reply with: a long enough answer to spend the tokens")
    assert first.usage is not None and first.usage.total_tokens > 5  # admitted while tokens were left
    refused = _refused(lambda: project.responses.create(model="sim", input="hi"))
    assert "tokens per minute (5)" in refused.message

    org.projects.rate_limits.update_rate_limit(
        "rl-sim-large", project_id=project_id, max_requests_per_1_day=1, max_requests_per_1_minute=100
    )
    listed = {limit.model: limit for limit in org.projects.rate_limits.list_rate_limits(project_id)}
    assert (listed["sim-large"].max_requests_per_1_day, listed["sim-large"].max_requests_per_1_minute) == (1, 100)
    assert project.responses.create(model="sim-large", input="hello").status == "completed"
    refused = _refused(lambda: project.responses.create(model="sim-large", input="hello"))
    assert "requests per day (1)" in refused.message
    assert int(refused.response.headers["retry-after"]) > 3600  # a day's bucket refills over the day


def test_the_websocket_and_the_images_endpoint_hold_to_the_limits(org: Org, app: InProcess) -> None:
    project_id, key = _project_key(org, "sockets")
    org.projects.rate_limits.update_rate_limit("rl-sim", project_id=project_id, max_requests_per_1_minute=1)
    with app.http.websocket_connect("/v1/responses", headers={"authorization": f"Bearer {key}"}) as socket:
        socket.send_text(json.dumps({"type": "response.create", "model": "sim", "input": "Reply with: one"}))
        assert _last(socket)["type"] == "response.completed"
        socket.send_text(json.dumps({"type": "response.create", "model": "sim", "input": "Reply with: two"}))
        error = _last(socket)
        assert error["type"] == "error" and error["error"]["code"] == "rate_limit_exceeded"
    images = app.http.post("/v1/images/generations", json={"model": "sim", "prompt": "a cat"},
                           headers={"authorization": f"Bearer {key}"})  # fmt: skip
    assert images.status_code == 429 and "for sim" in images.json()["error"]["message"]


def _last(socket: object) -> dict[str, object]:
    """The event that ends a ``response.create`` on the socket: its completion or an error."""
    while True:
        event: dict[str, object] = json.loads(socket.receive_text())  # type: ignore[attr-defined]
        if event["type"] in ("response.completed", "response.failed", "error"):
            return event


def test_what_is_not_counted_here_is_a_400_and_unknown_ids_a_404(org: Org) -> None:
    project_id, _ = _project_key(org, "refusals")
    for name in ("max_images_per_1_minute", "max_audio_megabytes_per_1_minute", "batch_1_day_max_input_tokens"):
        with pytest.raises(openai.BadRequestError) as refused:
            org.projects.rate_limits.update_rate_limit("rl-sim", project_id=project_id, **{name: 5})  # type: ignore[arg-type]
        assert refused.value.param == name
    with pytest.raises(openai.BadRequestError) as refused:
        org.projects.rate_limits.update_rate_limit("rl-sim", project_id=project_id, max_requests_per_1_minute=-1)
    assert refused.value.param == "max_requests_per_1_minute"
    with pytest.raises(openai.NotFoundError):
        org.projects.rate_limits.update_rate_limit(
            "rl-no-such-model", project_id=project_id, max_requests_per_1_minute=1
        )
    with pytest.raises(openai.NotFoundError):
        org.projects.rate_limits.list_rate_limits("proj_none")
    with pytest.raises(openai.BadRequestError) as refused:  # the keys file's project changes there
        org.projects.rate_limits.update_rate_limit("rl-sim", project_id="alice", max_requests_per_1_minute=1)
    assert refused.value.code == "read_only_project"
    page = org.projects.rate_limits.list_rate_limits(project_id, limit=1)
    assert len(page.data) == 1 and page.has_more
    rest = org.projects.rate_limits.list_rate_limits(project_id, after=page.data[0].id)
    assert page.data[0].id not in [limit.id for limit in rest.data] and rest.data


def test_two_replicas_share_a_projects_model_limit_through_redis(tmp_path: Path, redis_url: str) -> None:
    """Two servers on one store and one Redis: the limit made through one holds on both, as one."""
    settings = Settings(db_url=f"sqlite:///{tmp_path / 'shared.db'}", embedded=False, sim_latency=False,
                        admin_key=ADMIN, keys_poll_secs=0.05, redis_url=redis_url)  # fmt: skip
    with in_process(settings) as one, in_process(settings) as two:
        org = _client(one, ADMIN).admin.organization
        project_id = org.projects.create(name="fleet").id
        org.projects.rate_limits.update_rate_limit("rl-sim", project_id=project_id, max_requests_per_1_minute=2)
        account = org.projects.service_accounts.create(project_id, name="fleet-bot")  # the key after the limit
        assert account.api_key is not None
        key = account.api_key.value
        here, there = _client(one, key), _client(two, key)
        assert here.responses.create(model="sim", input="hi").status == "completed"
        _until(lambda: _refuses_after_one(there))


def _refuses_after_one(client: openai.OpenAI) -> bool:
    """The other replica, once it has read the key (and so its project's limit, set before the key was
    made), admits one more request (the limit's second) and refuses the next."""
    try:
        client.responses.create(model="sim", input="hi")
    except openai.AuthenticationError:  # not read yet
        return False
    refused = _refused(lambda: client.responses.create(model="sim", input="hi"))
    return "for sim" in refused.message


def test_workers_share_a_limit_made_at_runtime_in_their_file(tmp_path: Path) -> None:
    """Two workers' limiters on one file: a model limit neither knew at start is one limit between them."""
    tables = [LimitTable(), LimitTable()]
    workers = [SharedRateLimiter(table, tmp_path / "limits") for table in tables]

    async def run() -> list[bool]:
        for table in tables:  # as each worker's key directory writes it on its next poll
            table.models = {("proj_x", "sim"): RateLimits(requests_per_minute=3)}
        admitted = []
        for n in range(4):
            try:
                await workers[n % 2].admit("proj_x", "sim")
                admitted.append(True)
            except RateLimited:
                admitted.append(False)
        await workers[0].admit("proj_x", "other")  # another model: no limit
        for worker in workers:
            await worker.aclose()
        return admitted

    assert asyncio.run(run()) == [True, True, True, False]
