"""web_search run by the server for any model: a scripted Chat Completions upstream (or the embedded
model, forced) calls it, the server searches a loopback provider (SearXNG, Brave, Tavily fakes), reads
the pages through the egress policy, and the answer cites them."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest

from responsa.backends.llama_cpp import DEFAULT_MODEL_NAME
from responsa.config import Settings, UpstreamConfig
from tests.backends.mock_upstream import MockUpstream, Stream, text_chunks
from tests.conftest import LiveServer, serve, serve_app, served_upstream
from tests.engine.tools.web_fakes import FakeWeb
from tests.http.test_streaming import parse_frames
from tests.spec import hosted_call_errors


@pytest.fixture(scope="module")
def web() -> Iterator[FakeWeb]:
    fake = FakeWeb()
    with serve_app(fake.app) as live:
        fake.base = live.url
        yield fake


@pytest.fixture(scope="module")
def upstream() -> Iterator[MockUpstream]:
    with served_upstream() as mock:
        yield mock


def _server(stack: ExitStack, tmp: Path, upstream: MockUpstream, **settings: Any) -> LiveServer:
    models = (UpstreamConfig(name="up-model", urls=(upstream.url,)),)  # type: ignore[attr-defined]
    base: dict[str, Any] = {"db_url": f"sqlite:///{tmp / 'r.db'}", "embedded": False, "models": models}
    return stack.enter_context(serve(Settings(**{**base, **settings})))


@pytest.fixture(scope="module")
def searx(web: FakeWeb, upstream: MockUpstream, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    with ExitStack() as stack:
        yield _server(stack, tmp_path_factory.mktemp("ws"), upstream, web_search=f"searxng:{web.base}",
                      web_fetch_timeout_secs=1.0)  # fmt: skip


def _search_then_answer(upstream: MockUpstream, query: str, answer: str) -> None:
    call = {"index": 0, "id": "call_0", "type": "function",
            "function": {"name": "web_search", "arguments": json.dumps({"query": query})}}  # fmt: skip
    upstream.script.append(Stream([{"choices": [{"index": 0, "delta": {"tool_calls": [call]}}]},
                                   {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}]))  # fmt: skip
    upstream.script.append(Stream(text_chunks(answer)))


def _tool_result(upstream: MockUpstream) -> str:
    [result] = [message for message in upstream.requests[-1]["messages"] if message["role"] == "tool"]
    return str(result["content"])


def test_an_upstream_model_searches_reads_the_pages_and_cites_them(
    searx: LiveServer, web: FakeWeb, upstream: MockUpstream
) -> None:
    _search_then_answer(upstream, "comets", "Comets are icy and grow tails [1].")
    with openai.OpenAI(base_url=searx.v1, api_key="x", max_retries=0) as client:
        reply = client.responses.create(model="up-model", input="What are comets?", tools=[{"type": "web_search"}])
        assert [item.type for item in reply.output] == ["web_search_call", "message"]
        call = reply.output[0]
        assert call.status == "completed" and call.id.startswith("ws_")  # type: ignore[union-attr]
        assert call.action.type == "search" and call.action.query == "comets"  # type: ignore[union-attr]
        assert call.action.sources is None  # type: ignore[union-attr]  # only with include, as OpenAI
        [annotation] = reply.output[1].content[0].annotations  # type: ignore[union-attr]
        text = reply.output_text
        assert annotation.type == "url_citation" and annotation.url == f"{web.base}/pages/comets"  # type: ignore[union-attr]
        assert annotation.title == "Comets explained"  # type: ignore[union-attr]
        assert text[annotation.start_index : annotation.end_index] == "[1]"  # type: ignore[union-attr]
        shown = client.responses.retrieve(reply.id, include=["web_search_call.action.sources"])
        assert [source.url for source in shown.output[0].action.sources] == [f"{web.base}/pages/comets"]  # type: ignore[union-attr]
    assert [tool["function"]["name"] for tool in upstream.requests[-2]["tools"]] == ["web_search"]
    result = _tool_result(upstream)
    assert "[1] Comets explained" in result and "glowing coma and tail" in result  # the page's text, extracted
    assert "Copyright the fake web" not in result  # boilerplate left out
    assert "comets" in web.fetched


def test_the_stream_has_openai_s_events_in_order(searx: LiveServer, upstream: MockUpstream) -> None:
    _search_then_answer(upstream, "tides", "The Moon pulls the oceans [1].")
    body = {"model": "up-model", "input": "Why are there tides?", "tools": [{"type": "web_search_preview"}],
            "stream": True, "include": ["web_search_call.action.sources"]}  # fmt: skip
    events = parse_frames(httpx.post(f"{searx.v1}/responses", json=body, timeout=30).content)
    kinds = [event["type"] for event in events if event.get("output_index") == 0]
    assert kinds == ["response.output_item.added", "response.web_search_call.in_progress",
                     "response.web_search_call.searching", "response.web_search_call.completed",
                     "response.output_item.done"]  # fmt: skip
    added, done = events[kinds.index("response.output_item.added") + 2], None
    done = next(
        event for event in events if event["type"] == "response.output_item.done" and event["output_index"] == 0
    )
    assert done["item"]["action"]["query"] == "tides" and done["item"]["action"]["sources"][0]["url"].endswith("/tides")
    assert added is not None
    completed = events[-1]["response"]
    assert (
        completed["status"] == "completed"
        and completed["output"][1]["content"][0]["annotations"][0]["type"] == "url_citation"
    )


def test_allowed_domains_are_enforced_on_what_is_read(searx: LiveServer, web: FakeWeb, upstream: MockUpstream) -> None:
    """Subdomains of an allowed domain pass; anything else is never fetched, whatever the provider returns."""
    port = web.base.rsplit(":", 1)[1]
    web.extra_hits = [{"url": f"http://localhost:{port}/pages/tides", "title": "Tides", "snippet": "tides"}]
    fetched = len(web.fetched)
    try:
        _search_then_answer(upstream, "comets", "Here [1].")
        tool = {"type": "web_search", "filters": {"allowed_domains": ["https://LOCALHOST/"]}}
        body = {"model": "up-model", "input": "comets?", "tools": [tool], "include": ["web_search_call.action.sources"]}
        reply = httpx.post(f"{searx.v1}/responses", json=body, timeout=30).json()
    finally:
        web.extra_hits = []
    sources = [source["url"] for source in reply["output"][0]["action"]["sources"]]
    assert sources == [f"http://localhost:{port}/pages/tides"]
    assert web.fetched[fetched:] == ["tides"]  # the 127.0.0.1 comets page was never read


def test_hostile_results_never_stall_or_leak(searx: LiveServer, web: FakeWeb, upstream: MockUpstream) -> None:
    """A metadata address, a redirect to one, a page that never ends, an 8 MB page and a binary file among
    the results: the response completes, and the model reads only what the policy and the limits let
    through (the snippet, where a page could not be read)."""
    hostile = ["http://169.254.169.254/latest/meta-data/", f"{web.base}/pages/to-metadata", f"{web.base}/pages/slow",
               f"{web.base}/pages/huge", f"{web.base}/pages/binary", "file:///etc/passwd"]  # fmt: skip
    web.extra_hits = [{"url": url, "title": f"hostile {i}", "snippet": f"snippet {i}"} for i, url in enumerate(hostile)]
    try:
        _search_then_answer(upstream, "comets", "Done.")
        body = {"model": "up-model", "input": "comets?", "include": ["web_search_call.results"],
                "tools": [{"type": "web_search", "search_context_size": "high"}]}  # fmt: skip
        reply = httpx.post(f"{searx.v1}/responses", json=body, timeout=60).json()
    finally:
        web.extra_hits = []
    assert reply["status"] == "completed" and reply["output"][0]["status"] == "completed"
    results = {hit["url"]: hit["text"] for hit in reply["output"][0]["results"]}
    assert "file:///etc/passwd" not in results  # not a web URL: never even a hit
    assert results["http://169.254.169.254/latest/meta-data/"] == "snippet 0"
    assert results[f"{web.base}/pages/to-metadata"] == "snippet 1"  # the redirect was refused
    assert results[f"{web.base}/pages/slow"] == "snippet 2"  # past --web-fetch-timeout-secs
    assert len(results[f"{web.base}/pages/huge"]) <= 6000  # capped at search_context_size's length
    assert results[f"{web.base}/pages/binary"] == "snippet 4"  # not text: not read
    assert len(_tool_result(upstream)) < 8 * 6000 + 2000


@pytest.mark.parametrize(
    ("url", "allowed"),
    [("http://93.184.216.34/page", True), ("http://127.0.0.1/page", True), ("http://10.0.0.7/page", False),
     ("http://192.168.1.1/", False), ("http://169.254.169.254/latest/meta-data/", False),
     ("http://metadata.google.internal/", False), ("http://[fe80::1]/", False), ("file:///etc/passwd", False),
     ("ftp://93.184.216.34/", False)],
)  # fmt: skip
def test_the_page_policy_lets_only_public_addresses_through(url: str, allowed: bool) -> None:
    """Public addresses, and loopback only as MCP allows it (no API keys); never private, link-local,
    metadata or non-web URLs."""
    from responsa.external import UrlPolicy
    from responsa.protocol import InvalidRequest

    policy = UrlPolicy(allow_loopback=True, public=True, subject="page URL")
    if allowed:
        policy.check(url, "url")
    else:
        with pytest.raises(InvalidRequest):
            policy.check(url, "url")
    with pytest.raises(InvalidRequest):
        UrlPolicy(allow_loopback=False, public=True).check("http://127.0.0.1/page", "url")


def test_a_redirect_is_judged_again(web: FakeWeb) -> None:
    """A page on an allowed host that redirects to one the policy refuses is not followed there."""
    import anyio

    from responsa.external import PageFetcher, UrlPolicy

    port = web.base.rsplit(":", 1)[1]
    fetcher = PageFetcher(UrlPolicy(allowed_hosts=["localhost"], allow_loopback=False, public=True), timeout=5)
    fetched = len(web.fetched)
    assert anyio.run(fetcher.fetch, f"http://localhost:{port}/pages/to-loopback") is None
    assert web.fetched[fetched:] == ["to-loopback"]  # never the 127.0.0.1 page it pointed to
    page = anyio.run(fetcher.fetch, f"http://localhost:{port}/pages/tides")
    assert page is not None and page.title == "Why tides happen" and "two bulges" in page.text


@pytest.mark.parametrize("provider", ["brave", "tavily"])
def test_brave_and_tavily_with_their_keys(provider: str, web: FakeWeb, upstream: MockUpstream, tmp_path: Path) -> None:
    keys = {"brave_api_key": "brave-key", "tavily_api_key": "tavily-key"}
    with ExitStack() as stack:
        server = _server(stack, tmp_path, upstream, web_search=f"{provider}:{web.base}", **keys)
        _search_then_answer(upstream, "tides", "Gravity [1].")
        tool = {"type": "web_search", "user_location": {"type": "approximate", "country": "NO"}}
        reply = httpx.post(f"{server.v1}/responses", json={"model": "up-model", "input": "tides?", "tools": [tool]},
                           timeout=30).json()  # fmt: skip
        status = httpx.get(f"{server.v1}/server").json()["hosted_tools"]["web_search"]
    assert web.searches[-1]["provider"] == provider and web.searches[-1]["query"] == "tides"
    if provider == "brave":
        assert web.searches[-1]["country"] == "no"
    assert reply["output"][0]["status"] == "completed" and "[1]" in reply["output_text"]
    assert status == {"enabled": True, "provider": provider, "detail": "run by the server"}


def test_a_provider_that_fails_is_a_failed_call_not_a_failed_response(
    upstream: MockUpstream, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Reported at start (it did not answer), tried again by the call; the log names the real cause."""
    with ExitStack() as stack:
        server = _server(stack, tmp_path, upstream, web_search="searxng:http://127.0.0.1:9")
        _search_then_answer(upstream, "comets", "I could not search.")
        reply = httpx.post(f"{server.v1}/responses", json={"model": "up-model", "input": "comets?",
                                                            "tools": [{"type": "web_search"}]}, timeout=30).json()  # fmt: skip
    assert reply["status"] == "completed" and reply["output"][0]["status"] == "failed"
    assert "failed" in _tool_result(upstream)
    assert "web_search_provider is off: http://127.0.0.1:9 did not answer a search: ConnectError" in caplog.text
    assert "web search for 'comets' failed with searxng: ConnectError" in caplog.text
    assert "TaskGroup" not in caplog.text


def test_with_api_keys_loopback_pages_are_closed(web: FakeWeb, upstream: MockUpstream, tmp_path: Path) -> None:
    """Clients are not trusted once keys are configured: a result on a loopback address is never read."""
    from responsa.config import ApiKey

    with ExitStack() as stack:
        server = _server(stack, tmp_path, upstream, web_search=f"searxng:{web.base}", api_keys=(ApiKey.bare("k"),))
        fetched = len(web.fetched)
        _search_then_answer(upstream, "comets", "Snippets only [1].")
        reply = httpx.post(f"{server.v1}/responses", headers={"Authorization": "Bearer k"},
                           json={"model": "up-model", "input": "comets?", "tools": [{"type": "web_search"}]},
                           timeout=30).json()  # fmt: skip
    assert reply["output"][0]["status"] == "completed"
    assert web.fetched[fetched:] == []
    result = _tool_result(upstream)
    assert "[1] Comets explained" in result and "glowing coma" not in result  # the snippet, not the page


def test_without_a_provider_it_is_left_out_and_the_server_says_why(upstream: MockUpstream, tmp_path: Path) -> None:
    with ExitStack() as stack:
        server = _server(stack, tmp_path, upstream)
        upstream.script.append(Stream(text_chunks("No search here.")))
        reply = httpx.post(f"{server.v1}/responses", json={"model": "up-model", "input": "comets?",
                                                            "tools": [{"type": "web_search"}]}, timeout=30).json()  # fmt: skip
        status = httpx.get(f"{server.v1}/server").json()["hosted_tools"]["web_search"]
    assert [entry["type"] for entry in reply["ignored_tools"]] == ["web_search"]
    assert status["enabled"] is False and "--web-search" in status["detail"]


@pytest.mark.parametrize(
    ("tool", "param"),
    [({"type": "web_search_preview", "search_content_types": ["image"]}, "tools[0].search_content_types"),
     ({"type": "web_search", "search_context_size": "huge"}, "tools[0].search_context_size")],
)  # fmt: skip
def test_what_no_search_here_can_honour_is_a_400(searx: LiveServer, tool: dict[str, Any], param: str) -> None:
    reply = httpx.post(f"{searx.v1}/responses", json={"model": "up-model", "input": "x", "tools": [tool]})
    assert reply.status_code == 400 and reply.json()["error"]["param"] == param


def test_without_external_web_access_no_page_is_fetched(
    searx: LiveServer, web: FakeWeb, upstream: MockUpstream
) -> None:
    """Codex sends ``external_web_access: false`` (a cached search): the engine's snippets only, no fetch."""
    fetched = len(web.fetched)
    _search_then_answer(upstream, "comets", "Icy [1].")
    tool = {"type": "web_search", "external_web_access": False, "search_content_types": ["text", "image"]}
    reply = httpx.post(f"{searx.v1}/responses", json={"model": "up-model", "input": "comets?", "tools": [tool]},
                       timeout=30).json()  # fmt: skip
    assert reply["output"][0]["status"] == "completed" and web.fetched[fetched:] == []
    assert "[1] Comets explained" in _tool_result(upstream) and "glowing coma" not in _tool_result(upstream)


def test_the_conformance_suites_offline_web_search_validates(
    searx: LiveServer, web: FakeWeb, upstream: MockUpstream
) -> None:
    """The upstream Open Responses suite's ``offline-web-search``, as it sends it: a forced search with
    live web access off and its sources included; the response validates (see ``hosted_call_errors``)
    and no page is fetched."""
    fetched = len(web.fetched)
    _search_then_answer(upstream, "OpenResponses", "Cached [1].")
    body = {"model": "up-model", "input": "Find the most relevant cached result for OpenResponses.",
            "tools": [{"type": "web_search", "external_web_access": False}], "tool_choice": {"type": "web_search"},
            "include": ["web_search_call.action.sources"]}  # fmt: skip
    reply = httpx.post(f"{searx.v1}/responses", json=body, timeout=30)
    assert reply.status_code == 200, reply.text
    response = reply.json()
    [call] = [item for item in response["output"] if item["type"] == "web_search_call"]
    assert hosted_call_errors(response, call) == []
    assert call["status"] == "completed" and isinstance(call["action"]["sources"], list)  # included, as asked
    assert web.fetched[fetched:] == [] and response["output"][-1]["type"] == "message"


def test_the_embedded_model_searches_when_forced(web: FakeWeb, tmp_path: Path) -> None:
    """The packaged 135M model, held to the call by grammar (tool_choice), then answering freely. Its
    query runs to the schema's 200 characters (about 60 tokens): the budget leaves room for the answer."""
    with ExitStack() as stack:
        server = stack.enter_context(serve(Settings(db_url=f"sqlite:///{tmp_path / 'e.db'}",
                                                    web_search=f"searxng:{web.base}")))  # fmt: skip
        client = stack.enter_context(openai.OpenAI(base_url=server.v1, api_key="x", max_retries=0))
        reply = client.responses.create(model=DEFAULT_MODEL_NAME, input="Search the web: what are comets?",
                                        tools=[{"type": "web_search"}], tool_choice={"type": "web_search"},
                                        include=["web_search_call.action.sources"], max_output_tokens=120,
                                        temperature=0)  # fmt: skip
    assert reply.output[0].type == "web_search_call" and reply.output[0].status == "completed"
    assert reply.output[0].action.query  # type: ignore[union-attr]
    assert reply.output[-1].type == "message" and reply.status in ("completed", "incomplete")
