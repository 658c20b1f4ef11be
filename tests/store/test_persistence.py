"""The SQLite store survives a restart: responses, input items and chains are all still there."""

from __future__ import annotations

from pathlib import Path

import openai
import pytest

from responsa.config import Settings
from tests.conftest import serve


def test_responses_survive_a_restart(db_path: Path) -> None:
    settings = Settings(db_url=f"sqlite:///{db_path}")
    with serve(settings) as first_run:
        with openai.OpenAI(base_url=first_run.v1, api_key="x", max_retries=0) as sdk:
            first = sdk.responses.create(model="sim", input="Reply with: before the restart", metadata={"k": "v"})
            with sdk.responses.stream(model="sim", input="Tell me about owls", previous_response_id=first.id) as stream:
                second = stream.get_final_response()
            deleted = sdk.responses.create(model="sim", input="Reply with: delete me")
            sdk.responses.delete(deleted.id)
    assert db_path.exists()

    with serve(settings) as second_run:
        with openai.OpenAI(base_url=second_run.v1, api_key="x", max_retries=0) as sdk:
            again = sdk.responses.retrieve(first.id)
            assert again.model_dump() == first.model_dump()
            assert sdk.responses.retrieve(second.id).output_text == second.output_text
            assert [i.content[0].text for i in sdk.responses.input_items.list(first.id)] == [
                "Reply with: before the restart"
            ]
            third = sdk.responses.create(model="sim", input="Reply with: after", previous_response_id=second.id)
            assert third.status == "completed"
            assert third.usage is not None and second.usage is not None
            assert third.usage.input_tokens > second.usage.input_tokens + second.usage.output_tokens
            with pytest.raises(openai.NotFoundError):
                sdk.responses.retrieve(deleted.id)


def test_schema_version_is_the_newest_migration() -> None:
    """The store skips migrating when the database says SCHEMA_VERSION: it must be the real head."""
    from alembic.config import Config
    from alembic.script import ScriptDirectory

    from responsa.store.sql._migrate import MIGRATIONS
    from responsa.store.sql._tables import SCHEMA_VERSION

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    assert ScriptDirectory.from_config(config).get_current_head() == SCHEMA_VERSION


@pytest.mark.parametrize("url", ["sqlite:///{path}", "sqlite://"])
def test_the_server_process_never_loads_alembic(db_path: Path, url: str) -> None:
    """A new file is migrated by a child process; an in-memory database (which no child can open)
    in the server's own. Either way the schema is there afterwards."""
    import subprocess
    import sys

    url = url.format(path=db_path)
    script = (
        "import asyncio, sys, uuid\n"
        "from responsa.store import SqlStore\n"
        "from responsa.protocol import Conversation\n"
        "async def main():\n"
        f"    store = SqlStore({url!r})\n"
        "    await store.migrate()\n"
        "    conversation = Conversation(id=f'conv_{uuid.uuid4().hex}', created_at=0, metadata={})\n"
        "    await store.conversations().create_conversation(conversation, [])\n"
        "    assert (await store.conversations().get_conversation(conversation.id)) is not None\n"
        "    await store.aclose()\n"
        "asyncio.run(main())\n"
        "print('alembic' in sys.modules)\n"
    )
    runs = [subprocess.run([sys.executable, "-c", script], capture_output=True, text=True) for _ in range(2)]
    assert [run.returncode for run in runs] == [0, 0], runs[0].stderr
    in_memory = url == "sqlite://"
    assert [run.stdout.strip() for run in runs] == [str(in_memory)] * 2
