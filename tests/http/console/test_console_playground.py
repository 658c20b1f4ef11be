"""The playground leads with the conversation: the transcript first, the settings beside it, and
beneath it what to send, with files and images attached and a reusable prompt picked with its
variables; what reaches the server is what the page showed."""

from __future__ import annotations

import base64

import openai
from playwright.sync_api import expect

from .conftest import Watched

PIXEL = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)


def test_a_turn_with_attachments_and_a_reusable_prompt(watched: Watched, alice: openai.OpenAI) -> None:
    page = watched.page
    watched.open()
    conversation, settings = page.locator(".playground > .conversation"), page.locator(".playground .settings")
    assert conversation.bounding_box()["x"] < settings.bounding_box()["x"]  # type: ignore[index]  # the transcript leads
    page.select_option("select[name=model]", "gpt-4.1")
    page.select_option("select[name=prompt]", "pmpt_greeting@1")
    page.fill("textarea[name=variables]", "name=Ada")
    page.set_input_files("input[name=attach]", [
        {"name": "notes.txt", "mimeType": "text/plain", "buffer": b"The launch is on Tuesday."},
        {"name": "dot.png", "mimeType": "image/png", "buffer": PIXEL},
    ])  # fmt: skip
    page.fill("textarea[name=input]", "Reply with: attached")
    page.click("button[name=send]")
    turn = page.locator(".turn").last
    expect(turn.locator(".stats .status")).to_have_attribute("data-status", "completed")
    expect(turn.locator(".user")).to_contain_text("[file notes.txt]")
    expect(turn.locator(".user img.thumb")).to_have_count(1)
    stored = alice.responses.retrieve(turn.locator(".stats a").inner_text())
    assert stored.prompt is not None and stored.prompt.id == "pmpt_greeting"
    assert stored.prompt.variables == {"name": "Ada"}
    (message,) = alice.responses.input_items.list(stored.id).data
    kinds = [part.type for part in message.content]  # type: ignore[union-attr]
    assert kinds == ["input_text", "input_file", "input_image"]
    expect(page.locator("input[name=attach]")).to_have_value("")
