"""The console's Admin API pages in a real browser: usage drawn as charts (requests, tokens, errors,
latency) by project, and projects with their keys (made, shown once, revoked), spend limit and
archive. The admin key is asked for on the page and kept apart from the API key."""

from __future__ import annotations

from pathlib import Path

import openai
import pytest
from playwright.sync_api import expect

from tests.conftest import LiveServer

from .conftest import ADMIN, Watched


def _admin_key(watched: Watched) -> None:
    form = watched.page.locator("form.admin-key")
    form.wait_for(state="visible")
    watched.page.fill("input[name=admin-key]", ADMIN)
    form.locator("button[type=submit]").click()


def test_the_usage_page_draws_what_was_used(watched: Watched, alice: openai.OpenAI, screenshots: Path) -> None:
    for number in range(3):
        alice.responses.create(model="gpt-4.1", input=f"Reply with: counted {number}")
    watched.open("#/usage", key=None)
    _admin_key(watched)
    page = watched.page
    expect(page.locator("figure.chart-box")).to_have_count(5)
    expect(page.locator("svg.chart[aria-label=Requests] polyline.series")).to_have_count(1)
    page.select_option("select[name=group]", "project_id")
    row = page.locator("table.usage-totals tr", has_text="alice")
    expect(row).to_have_count(1)
    assert int(row.locator("td").nth(1).inner_text()) >= 3
    latency = page.locator("svg.chart[aria-label='Latency (ms)']")
    expect(latency.locator("polyline[data-series='alice p50'], polyline[data-series='alice p99']")).to_have_count(2)
    expect(latency.locator("circle.point").first).to_be_visible()
    page.screenshot(path=screenshots / "console-usage.png", full_page=True)


def test_the_projects_page_makes_a_project_and_its_key(
    watched: Watched, console: LiveServer, screenshots: Path
) -> None:
    watched.open("#/projects", key=None)
    _admin_key(watched)
    page = watched.page
    page.fill("input[name=name]", "console team")
    page.click("button[name=create]")
    project = page.locator("section.project", has_text="console team")
    expect(project).to_have_count(1)
    project.locator("button[name=make-key]").click()
    secret = project.locator("code.new-key")
    expect(secret).to_contain_text("sk-proj-")
    key = secret.inner_text()
    client = openai.OpenAI(base_url=console.v1, api_key=key, max_retries=0)
    assert client.responses.create(model="gpt-4.1", input="Reply with: from the console").output_text
    expect(project.locator("tr[data-key]")).to_have_count(1)
    project.locator("input[name=limit]").fill("500")
    project.locator("form", has_text="Spend limit").locator("button").click()
    expect(project.locator("p.spend")).to_contain_text("Limit $5.00 a month")
    project.locator("details.limits summary").click()
    limits = project.locator("tr[data-model='gpt-4.1']")
    limits.locator("input[name=max_requests_per_1_minute]").fill("1")
    limits.locator("button[name=set-limits]").click()
    expect(limits.locator("input[name=max_requests_per_1_minute]")).to_have_value("1")
    assert client.responses.create(model="gpt-4.1", input="hi").status == "completed"  # this minute's one
    with pytest.raises(openai.RateLimitError):
        client.responses.create(model="gpt-4.1", input="hi")
    page.screenshot(path=screenshots / "console-projects.png", full_page=True)
    project.locator("button[name=revoke]").click()
    expect(project.locator("tr[data-key]")).to_have_count(0)
    with pytest.raises(openai.AuthenticationError):
        client.responses.create(model="gpt-4.1", input="hi")
    page.once("dialog", lambda dialog: dialog.accept())
    project.locator("button[name=archive]").click()
    expect(page.locator("section.project", has_text="console team")).to_have_count(0)
