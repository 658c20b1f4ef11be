"""Several responses on one conversation at once: items never interleave and none are lost."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import openai
import pytest

from responsa.config import Settings
from tests.conftest import LiveServer, serve


@pytest.fixture(scope="module")
def paced(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    db = tmp_path_factory.mktemp("paced") / "responsa.db"
    with serve(Settings(db_url=f"sqlite:///{db}", sim_token_delay_ms=5)) as live:
        yield live


def test_concurrent_responses_on_one_conversation(paced: LiveServer) -> None:
    with openai.OpenAI(base_url=paced.v1, api_key="x", max_retries=0) as sdk:
        conversation = sdk.conversations.create()
        errors: list[BaseException] = []
        barrier = threading.Barrier(6)

        def turn(index: int) -> None:
            try:
                barrier.wait()
                words = " ".join(f"w{index}" for _ in range(10))
                if index % 2:
                    sdk.responses.create(model="sim", input=f"Reply with: {words}", conversation=conversation.id)
                else:
                    with sdk.responses.stream(
                        model="sim", input=f"Reply with: {words}", conversation=conversation.id
                    ) as stream:
                        stream.get_final_response()
            except BaseException as exc:
                errors.append(exc)

        threads = [threading.Thread(target=turn, args=(i,)) for i in range(6)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
        assert errors == []
        items = list(sdk.conversations.items.list(conversation.id, order="asc"))
        assert len(items) == 12
        for user, assistant in zip(items[::2], items[1::2], strict=True):
            assert user.role == "user" and assistant.role == "assistant"  # type: ignore[union-attr]
            tag = user.content[0].text.split()[-1]  # type: ignore[union-attr]
            assert assistant.content[0].text == " ".join([tag] * 10)  # type: ignore[union-attr]
        assert sorted(item.content[0].text.split()[-1] for item in items[::2]) == [f"w{i}" for i in range(6)]  # type: ignore[union-attr]
