"""A real browser (Debian's Chromium, driven by Playwright; nothing downloads a browser) pointed at a
live server with two tenants' keys, an upstream worker, the simulator and the embedded model.

Every page a test opens is watched: a request to any host but the server fails the test.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

import openai
import pytest

from responsa.config import ApiKey, Settings, UpstreamConfig
from tests.backends.mock_upstream import MockUpstream
from tests.conftest import LiveServer, free_port, serve, serve_app
from tests.engine.tools.mcp_server import streamable_app

playwright_sync = pytest.importorskip("playwright.sync_api")

ALICE = ApiKey("key-alice", "alice")
BOB = ApiKey("key-bob", "bob")
ADMIN = "sk-admin-console"


def chromium_path() -> str | None:
    return os.environ.get("RESPONSA_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture(scope="package")  # Playwright's sync driver holds this thread's event loop: only for this package
def browser() -> Iterator[playwright_sync.Browser]:
    path = chromium_path()
    if path is None:
        if os.environ.get("RESPONSA_REQUIRE_BROWSER"):
            pytest.fail("RESPONSA_REQUIRE_BROWSER is set but no chromium was found")
        pytest.skip("no chromium on this machine (apt-get install chromium)")
    with playwright_sync.sync_playwright() as driver:
        launched = driver.chromium.launch(executable_path=path, args=["--no-sandbox"])
        yield launched
        launched.close()


@pytest.fixture(scope="package")
def mcp_url() -> Iterator[str]:
    """A real MCP server (the SDK's) on loopback, which the console's server is allowed to call."""
    with serve_app(streamable_app()) as live:
        yield f"{live.url}/mcp"


@pytest.fixture(scope="package")
def console(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """The server: keys for alice and bob, one healthy upstream worker and one that is down."""
    db = tmp_path_factory.mktemp("console") / "r.db"
    prompts = db.parent / "prompts"
    prompts.mkdir()
    (prompts / "pmpt_greeting.toml").write_text('[versions.1]\ninstructions = "Greet {{name}}."\n')
    with ExitStack() as stack:
        upstream = MockUpstream(models=("up-model",))
        healthy = f"{stack.enter_context(serve_app(upstream.app)).url}/v1"
        down = f"http://127.0.0.1:{free_port()}/v1"
        settings = Settings(
            db_url=f"sqlite:///{db}",
            api_keys=(ALICE, BOB),
            admin_key=ADMIN,
            models=(UpstreamConfig(name="up-model", urls=(healthy, down)),),
            upstream_health_interval_secs=0.5,
            sim_token_delay_ms=15,
            sim_latency=False,  # the token delay alone paces a stream
            prompts_dir=prompts,
            mcp_allow_hosts=("127.0.0.1",),  # with API keys, loopback MCP servers must be allowed by name
            webhook_allow_hosts=("127.0.0.1",),  # and loopback webhook receivers
        )
        yield stack.enter_context(serve(settings))


@pytest.fixture
def alice(console: LiveServer) -> Iterator[openai.OpenAI]:
    with openai.OpenAI(base_url=console.v1, api_key=ALICE.key, max_retries=0) as sdk:
        yield sdk


@dataclass
class Watched:
    """A browser page on the console, and every URL it asked for."""

    page: playwright_sync.Page
    base: str
    requested: list[str] = field(default_factory=list)

    def open(self, route: str = "#/playground", key: str | None = ALICE.key) -> None:
        """Open ``route``; give ``key`` when the console asks for one."""
        self.page.goto(f"{self.base}/{route}")
        if key is not None:
            form = self.page.locator("#key-form")
            form.wait_for(state="visible")
            self.page.fill("#key-input", key)
            form.locator("button[type=submit]").click()
            form.wait_for(state="hidden")

    def foreign(self) -> list[str]:
        return [url for url in self.requested if not url.startswith(self.base + "/") and not url.startswith("data:")]


@pytest.fixture
def watched(browser: playwright_sync.Browser, console: LiveServer) -> Iterator[Watched]:
    context = browser.new_context(viewport={"width": 1360, "height": 900})
    page = context.new_page()
    page.set_default_timeout(30_000)
    seen = Watched(page, console.url)
    page.on("request", lambda request: seen.requested.append(request.url))
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    yield seen
    context.close()
    assert seen.foreign() == [], "the console asked another host"
    assert errors == [], "the console's scripts threw"


@pytest.fixture(scope="session")
def screenshots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the tests' screenshots go: RESPONSA_SCREENSHOTS (docs/images to refresh the docs), else a
    temporary folder."""
    chosen = os.environ.get("RESPONSA_SCREENSHOTS")
    folder = Path(chosen) if chosen else tmp_path_factory.mktemp("screenshots")
    folder.mkdir(parents=True, exist_ok=True)
    return folder
