"""Skills (``/v1/skills``) through the openai SDK, in process: created from a folder's files or a zip,
versioned, read back; hostile uploads refused; and mounted read-only in a hosted shell's container
(``skill_reference``, ``inline``), the model told of each, or described to a client's shell (local)."""

from __future__ import annotations

import base64
import io
import json
import stat
import zipfile
from pathlib import Path
from typing import Any

import openai
import pytest

from responsa.config import Settings
from responsa.external import probe_sandbox
from tests.in_process import InProcess, in_process
from tests.scripted import ScriptedBackend, call, text

needs_sandbox = pytest.mark.skipif(probe_sandbox() is not None, reason="no sandbox here")
MANIFEST = b"---\nname: basic-math\ndescription: Add or multiply numbers.\n---\n\nRun scripts/add.py A B to add.\n"
FILES = [
    ("basic-math/SKILL.md", MANIFEST),
    ("basic-math/scripts/add.py", b"import sys\nprint(sum(map(int, sys.argv[1:])))\n"),
]


def _zip(entries: dict[str, bytes], links: dict[str, str] | None = None) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in entries.items():
            archive.writestr(name, data)
        for name, target in (links or {}).items():
            info = zipfile.ZipInfo(name)
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
            archive.writestr(info, target)
    return buffer.getvalue()


def test_a_skill_is_created_versioned_and_read_back(scripted_module: tuple[InProcess, ScriptedBackend]) -> None:
    sdk = scripted_module[0].sdk
    skill = sdk.skills.create(files=FILES)
    assert (skill.name, skill.description, skill.default_version, skill.latest_version) == (
        "basic-math", "Add or multiply numbers.", "1", "1")  # fmt: skip
    assert sdk.skills.retrieve(skill.id) == skill and skill.id in [found.id for found in sdk.skills.list().data]
    with zipfile.ZipFile(io.BytesIO(sdk.skills.content.retrieve(skill.id).read())) as archive:
        assert sorted(archive.namelist()) == ["basic-math/SKILL.md", "basic-math/scripts/add.py"]
        assert archive.read("basic-math/SKILL.md") == MANIFEST
    changed = MANIFEST.replace(b"Add or multiply numbers.", b"Add, multiply or divide numbers.")
    second = sdk.skills.versions.create(skill.id, files=("skill.zip", _zip({"basic-math/SKILL.md": changed})))
    assert (second.version, second.skill_id, second.description) == ("2", skill.id, "Add, multiply or divide numbers.")
    assert sdk.skills.retrieve(skill.id).latest_version == "2" and sdk.skills.retrieve(skill.id).default_version == "1"
    assert [version.version for version in sdk.skills.versions.list(skill.id, order="asc").data] == ["1", "2"]
    assert sdk.skills.versions.retrieve("2", skill_id=skill.id).id == second.id
    assert sdk.skills.update(skill.id, default_version="2").default_version == "2"
    with zipfile.ZipFile(io.BytesIO(sdk.skills.content.retrieve(skill.id).read())) as archive:
        assert archive.read("basic-math/SKILL.md") == changed  # the default version's
    with pytest.raises(openai.BadRequestError):
        sdk.skills.versions.delete("2", skill_id=skill.id)  # the default
    first = sdk.skills.versions.retrieve("1", skill_id=skill.id)
    deleted = sdk.skills.versions.delete("1", skill_id=skill.id)
    assert deleted.deleted and deleted.version == "1" and deleted.id == first.id
    with pytest.raises(openai.NotFoundError):
        sdk.skills.versions.retrieve("1", skill_id=skill.id)
    assert sdk.skills.delete(skill.id).deleted
    with pytest.raises(openai.NotFoundError):
        sdk.skills.retrieve(skill.id)


@pytest.mark.parametrize(
    ("files", "says"),
    [
        ([("../escape/SKILL.md", MANIFEST)], "leaves the skill's folder"),
        ([("/etc/SKILL.md", MANIFEST)], "leaves the skill's folder"),
        ([("s.zip", _zip({"basic-math/SKILL.md": MANIFEST, "basic-math/../../evil.sh": b"x"}))], "leaves"),
        ([("s.zip", _zip({"basic-math/SKILL.md": MANIFEST}, links={"basic-math/passwd": "/etc/passwd"}))], "is a link"),
        ([("s.zip", _zip({"basic-math/SKILL.md": MANIFEST, "basic-math/zeros": bytes(60 * 1024 * 1024)}))], "larger"),
        ([("s.zip", _zip({"basic-math/SKILL.md": MANIFEST, "basic-math/big": bytes(26 * 1024 * 1024)}))], "larger"),
        ([("basic-math/SKILL.md", b"# Math\nNo front matter here.\n")], "no front matter"),
        ([("basic-math/SKILL.md", b"---\ndescription: x\n---\n")], "'name'"),
        ([("a/SKILL.md", MANIFEST), ("b/SKILL.md", MANIFEST)], "one top-level folder"),
        ([("basic-math/README.md", b"hi")], "no SKILL.md"),
        ([("s.zip", b"not a zip")], "could not be read"),
    ],
)
def test_hostile_uploads_are_refused_and_nothing_is_kept(
    scripted_module: tuple[InProcess, ScriptedBackend], files: list[tuple[str, bytes]], says: str
) -> None:
    served = scripted_module[0]
    before = len(served.sdk.skills.list(limit=100).data)
    multipart = [("files", (name, data)) for name, data in files]
    reply = served.http.post("/v1/skills", files=multipart)
    assert reply.status_code == 400, reply.text
    assert says in reply.json()["error"]["message"] and reply.json()["error"]["param"] == "files"
    assert len(served.sdk.skills.list(limit=100).data) == before


def _shell_with(*skills: dict[str, Any]) -> dict[str, Any]:
    return {"type": "shell", "environment": {"type": "container_auto", "skills": list(skills)}}


@needs_sandbox
def test_a_referenced_skill_is_mounted_read_only_and_the_model_is_told_of_it(
    scripted_module: tuple[InProcess, ScriptedBackend],
) -> None:
    served, model = scripted_module
    skill = served.sdk.skills.create(files=FILES)
    commands = ["cat /mnt/skills/basic-math/SKILL.md", "python3 /mnt/skills/basic-math/scripts/add.py 2 40",
                "touch /mnt/skills/basic-math/new; echo written > /mnt/skills/basic-math/SKILL.md"]  # fmt: skip
    model.turns += [call("shell", json.dumps({"commands": commands})), text("42.")]
    tool = _shell_with({"type": "skill_reference", "skill_id": skill.id})
    reply = served.sdk.responses.create(model="scripted", input="Add 2 and 40 with the skill.", tools=[tool])  # type: ignore[list-item]
    manifest, added, written = reply.output[1].output  # type: ignore[union-attr]
    assert manifest.stdout == MANIFEST.decode() and added.stdout == "42\n"
    assert written.outcome.exit_code != 0 and "Read-only file system" in written.stderr  # type: ignore[union-attr]
    [offered] = model.requests[-2].tools
    assert "basic-math: Add or multiply numbers." in (offered.description or "")
    assert "/mnt/skills/basic-math/SKILL.md" in (offered.description or "")
    content = served.sdk.skills.content.retrieve(skill.id).read()
    assert zipfile.ZipFile(io.BytesIO(content)).read("basic-math/SKILL.md") == MANIFEST  # the skill is untouched


@needs_sandbox
def test_an_inline_skill_is_mounted_under_its_name(scripted_module: tuple[InProcess, ScriptedBackend]) -> None:
    served, model = scripted_module
    data = base64.b64encode(_zip(dict(FILES))).decode()
    inline = {"type": "inline", "name": "adder", "description": "Adds numbers.",
              "source": {"type": "base64", "media_type": "application/zip", "data": data}}  # fmt: skip
    model.turns += [call("shell", json.dumps({"commands": ["ls /mnt/skills/adder"]})), text("Listed.")]
    reply = served.sdk.responses.create(model="scripted", input="List the skill.", tools=[_shell_with(inline)])  # type: ignore[list-item]
    assert reply.output[1].output[0].stdout.split() == ["SKILL.md", "scripts"]  # type: ignore[union-attr]
    assert "adder: Adds numbers." in (model.requests[-2].tools[0].description or "")


@pytest.mark.parametrize(
    ("skill", "status", "param"),
    [
        ({"type": "skill_reference", "skill_id": "skill_missing"}, 404, "tools[0].environment.skills[0].skill_id"),
        ({"type": "inline", "name": "x", "description": "x",
          "source": {"type": "base64", "media_type": "application/zip", "data": "%%%"}}, 400,
         "tools[0].environment.skills[0].source.data"),
        ({"type": "inline", "name": "../up", "description": "x",
          "source": {"type": "base64", "media_type": "application/zip", "data": ""}}, 400,
         "tools[0].environment.skills[0].name"),
    ],
)  # fmt: skip
def test_skills_a_container_cannot_have_are_refused_before_the_model_runs(
    scripted_module: tuple[InProcess, ScriptedBackend], skill: dict[str, Any], status: int, param: str
) -> None:
    served, model = scripted_module
    if probe_sandbox() is not None:
        pytest.skip("without a sandbox a hosted shell is refused first")
    asked = len(model.requests)
    reply = served.http.post("/v1/responses", json={"model": "scripted", "input": "hi", "tools": [_shell_with(skill)]})
    assert reply.status_code == status, reply.text
    assert reply.json()["error"]["param"] == param
    assert len(model.requests) == asked


def test_local_skills_are_described_to_the_clients_shell(scripted_module: tuple[InProcess, ScriptedBackend]) -> None:
    served, model = scripted_module
    local = {
        "type": "local",
        "skills": [{"name": "deploy", "description": "Ship a release.", "path": "/repo/skills/deploy"}],
    }
    model.turns.append(call("shell", json.dumps({"commands": ["cat /repo/skills/deploy/SKILL.md"]})))
    reply = served.sdk.responses.create(
        model="scripted", input="Ship it.", tools=[{"type": "shell", "environment": local}]
    )  # type: ignore[list-item]
    assert reply.output[0].environment.type == "local"  # type: ignore[union-attr]
    description = model.requests[-1].tools[0].description or ""
    assert "deploy: Ship a release." in description and "/repo/skills/deploy/SKILL.md" in description


def test_nothing_is_written_outside_a_skill(scripted_module: tuple[InProcess, ScriptedBackend], tmp_path: Path) -> None:
    """An upload is checked whole before anything is kept; a stored skill unpacks only inside its folder."""
    from responsa.engine.skills import read_bundle, unpack

    bundle = read_bundle(FILES)
    assert sorted(str(path) for path in unpack(bundle.archive)) == ["SKILL.md", "scripts/add.py"]


@needs_sandbox
def test_a_container_made_with_skills_mounts_them(scripted_module: tuple[InProcess, ScriptedBackend]) -> None:
    """The Containers API's ``skills``; a hosted shell in that container reads them."""
    served, model = scripted_module
    skill = served.sdk.skills.create(files=FILES)
    container = served.sdk.containers.create(
        name="with-skills", skills=[{"type": "skill_reference", "skill_id": skill.id}]
    )  # type: ignore[list-item]
    model.turns += [call("shell", json.dumps({"commands": ["ls /mnt/skills/basic-math"]})), text("Seen.")]
    tool = {"type": "shell", "environment": {"type": "container_reference", "container_id": container.id}}
    reply = served.sdk.responses.create(model="scripted", input="What skills?", tools=[tool])  # type: ignore[list-item]
    assert reply.output[1].output[0].stdout.split() == ["SKILL.md", "scripts"]  # type: ignore[union-attr]
    missing = served.http.post(
        "/v1/containers", json={"name": "x", "skills": [{"type": "skill_reference", "skill_id": "skill_none"}]}
    )
    assert missing.status_code == 404 and missing.json()["error"]["param"] == "skills[0].skill_id"


def test_skills_are_per_tenant(tmp_path: Path) -> None:
    from responsa.config import ApiKey

    keys = (ApiKey("sk-alice", "alice"), ApiKey("sk-bob", "bob"))
    with in_process(Settings(db_url=f"sqlite:///{tmp_path / 't.db'}", embedded=False, api_keys=keys)) as served:
        alice = openai.OpenAI(
            base_url=str(served.sdk.base_url), api_key="sk-alice", http_client=served.http, max_retries=0
        )
        bob = openai.OpenAI(base_url=str(served.sdk.base_url), api_key="sk-bob", http_client=served.http, max_retries=0)
        skill = alice.skills.create(files=FILES)
        assert [found.id for found in alice.skills.list().data] == [skill.id] and bob.skills.list().data == []
        for attempt in (lambda: bob.skills.retrieve(skill.id), lambda: bob.skills.content.retrieve(skill.id),
                        lambda: bob.skills.versions.list(skill.id), lambda: bob.skills.delete(skill.id)):  # fmt: skip
            with pytest.raises(openai.NotFoundError):
                attempt()
        tool = _shell_with({"type": "skill_reference", "skill_id": skill.id})
        refused = served.http.post("/v1/responses", headers={"authorization": "Bearer sk-bob"},
                                   json={"model": "sim", "input": "hi", "tools": [tool]})  # fmt: skip
        assert refused.status_code in (400, 404) and refused.json()["error"]["param"].startswith("tools[0].environment")
        assert alice.skills.retrieve(skill.id).name == "basic-math"
