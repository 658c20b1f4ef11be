"""``input_file`` parts read for every model: the model reads each file's text (inline or uploaded,
text or PDF), ``input_tokens`` counts it, the stored input keeps the part as sent, and a file with no
text to read is a 400 naming the part."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest

from responsa.config import Settings
from responsa.protocol import InputFile, InputText, Message
from tests.http.test_vector_stores import make_pdf
from tests.in_process import InProcess, in_process
from tests.scripted import ScriptedBackend, text

ESSAY = " ".join(["The lighthouse keeper logged every passing ship in a leather book."] * 36)  # ~360 words


def _message(*parts: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"role": "user", "content": [{"type": "input_text", "text": "Summarise the file."}, *parts]}]


def _inline(name: str, data: bytes) -> dict[str, Any]:
    return {"type": "input_file", "filename": name, "file_data": base64.b64encode(data).decode()}


@pytest.fixture
def scripted(tmp_path: Path) -> Iterator[tuple[InProcess, ScriptedBackend]]:
    model = ScriptedBackend()
    with in_process(Settings(db_url=f"sqlite:///{tmp_path / 'r.db'}"), backends=[model]) as app:
        yield app, model


def test_the_model_reads_an_inline_file_and_a_pdf_and_an_upload(scripted: tuple[InProcess, ScriptedBackend]) -> None:
    app, model = scripted
    uploaded = app.sdk.files.create(file=("log.txt", b"Ship Aurora passed at dawn."), purpose="user_data")
    model.turns.extend([text("A keeper's log."), text("Again.")])
    parts = [_inline("essay.txt", ESSAY.encode()), _inline("note.pdf", make_pdf("Tides follow the moon")),
             {"type": "input_file", "file_id": uploaded.id}]  # fmt: skip
    first = app.sdk.responses.create(model="scripted", input=_message(*parts))  # type: ignore[arg-type]
    (message,) = [item for item in model.requests[0].items if isinstance(item, Message)]
    read = [part.text for part in message.content if isinstance(part, InputText)]  # type: ignore[union-attr]
    assert not [part for part in message.content if isinstance(part, InputFile)]  # type: ignore[union-attr]
    assert read[1].startswith("[file: essay.txt]") and "lighthouse keeper" in read[1]
    assert "Tides follow the moon" in read[2] and "Ship Aurora" in read[3] and "log.txt" in read[3]
    stored = app.sdk.responses.input_items.list(first.id).data[0]
    assert [part.type for part in stored.content] == ["input_text", "input_file", "input_file", "input_file"]  # type: ignore[union-attr]
    # A later turn's model reads the file again (its text is not stored).
    app.sdk.responses.create(model="scripted", input="And?", previous_response_id=first.id)
    assert "lighthouse keeper" in str(model.requests[1].items[0])


def test_input_tokens_count_the_file_on_the_simulator(app_client: openai.OpenAI) -> None:
    bare = app_client.responses.input_tokens.count(model="sim", input=_message())  # type: ignore[arg-type]
    with_file = app_client.responses.input_tokens.count(
        model="sim", input=_message(_inline("essay.txt", ESSAY.encode()))
    )  # type: ignore[arg-type]
    with_pdf = app_client.responses.input_tokens.count(model="sim", input=_message(_inline("n.pdf", make_pdf(ESSAY))))  # type: ignore[arg-type]
    assert with_file.input_tokens > bare.input_tokens + 300 and with_pdf.input_tokens > bare.input_tokens + 100


@pytest.mark.parametrize(
    ("part", "param"),
    [(_inline("blob.bin", b"\x00\x01\x02binary"), "input[0].content[1]"),
     ({"type": "input_file", "file_url": "https://example.com/a.pdf"}, "input[0].content[1].file_url"),
     ({"type": "input_file", "file_id": "file-missing"}, "input[0].content[1].file_id"),
     ({"type": "input_file", "filename": "x.txt", "file_data": "not base64!"}, "input[0].content[1].file_data")],
)  # fmt: skip
def test_a_file_that_cannot_be_read_is_a_400_naming_the_part(app_http: httpx.Client, part: dict[str, Any],
                                                            param: str) -> None:  # fmt: skip
    reply = app_http.post("/v1/responses", json={"model": "sim", "input": _message(part)})
    assert reply.status_code == 400, reply.text
    assert reply.json()["error"]["param"] == param
