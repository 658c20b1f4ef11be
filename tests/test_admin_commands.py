"""``responsa projects …`` and ``responsa usage`` against a live server: an operator without a browser
makes a project and a key, sees its use, revokes the key and archives the project."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import openai
import pytest
from click.testing import CliRunner

from responsa.cli import main
from responsa.config import Settings
from tests.conftest import LiveServer, serve

ADMIN = "sk-admin-cli"


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    db = tmp_path_factory.mktemp("cli") / "responsa.db"
    with serve(Settings(db_url=f"sqlite:///{db}", embedded=False, sim_latency=False, admin_key=ADMIN)) as server:
        yield server


def _run(live: LiveServer, *args: str) -> str:
    result = CliRunner().invoke(main, [*args], env={"RESPONSA_URL": live.url, "RESPONSA_ADMIN_KEY": ADMIN})
    assert result.exit_code == 0, result.output
    return result.stdout


def test_a_project_and_its_key_from_the_shell(live: LiveServer, tmp_path: Path) -> None:
    made = _run(live, "projects", "create", "shell team").splitlines()
    project_id = made[1].split()[0]
    assert project_id.startswith("proj_") and "shell team" in made[1]
    assert project_id in _run(live, "projects", "list")
    key = _run(live, "projects", "key", project_id, "--name", "deploy").strip()
    assert key.startswith("sk-proj-")
    client = openai.OpenAI(base_url=live.v1, api_key=key, max_retries=0)
    reply = client.responses.create(model="sim", input="Reply with: from the shell")
    listed = _run(live, "projects", "keys", project_id)
    assert key[-4:] in listed and key not in listed
    used = _run(live, "usage", "--days", "1", "--by", "project_id")
    row = next(line for line in used.splitlines() if project_id in line).split()
    assert row[-3:] == ["1", str(reply.usage.input_tokens), str(reply.usage.output_tokens)]  # type: ignore[union-attr]
    assert "cost over 1 days: $0.0000" in used
    key_id = _run(live, "projects", "keys", project_id, "--json").split('"id": "')[1].split('"')[0]
    assert _run(live, "projects", "revoke", project_id, key_id).strip() == f"{key_id} revoked"
    with pytest.raises(openai.AuthenticationError):
        client.responses.create(model="sim", input="hi")
    assert "archived" in _run(live, "projects", "archive", project_id)
    assert project_id not in _run(live, "projects", "list")


def test_the_servers_refusal_is_the_commands_error(live: LiveServer) -> None:
    result = CliRunner().invoke(main, ["projects", "list"], env={"RESPONSA_URL": live.url, "RESPONSA_ADMIN_KEY": "x"})
    assert result.exit_code != 0 and "401" in result.output
    result = CliRunner().invoke(main, ["projects", "archive", "proj_none"],
                                env={"RESPONSA_URL": live.url, "RESPONSA_ADMIN_KEY": ADMIN})  # fmt: skip
    assert result.exit_code != 0 and "404: No project found with id 'proj_none'" in result.output
