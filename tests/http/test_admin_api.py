"""The Admin API (``/v1/organization/...``) through openai's own admin client: projects, service
accounts and their keys, model and hosted-tool permissions, admin keys; what each change does to the
keys the server honours, at once and in another process on the same store; on SQLite and PostgreSQL."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import nullcontext

import openai
import pytest
from click.testing import CliRunner

from responsa.cli import main
from responsa.config import ApiKey, Settings
from tests.conftest import fresh_store
from tests.in_process import BASE, InProcess, in_process

ADMIN = "sk-admin-for-the-tests"
ALICE = ApiKey("key-alice", "alice")


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def app(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[InProcess]:
    with fresh_store(request.param, tmp_path_factory.mktemp("admin")) as url:
        settings = Settings(db_url=url, embedded=False, sim_latency=False, admin_key=ADMIN, api_keys=(ALICE,))
        with in_process(settings) as served:
            yield served


def _client(app: InProcess, key: str) -> openai.OpenAI:
    """The SDK with ``key`` on the app (not to be closed: it would close the app's client too)."""
    return openai.OpenAI(base_url=f"{BASE}/v1", api_key=key, admin_api_key=key, http_client=app.http, max_retries=0)


@pytest.fixture
def org(app: InProcess) -> openai.resources.admin.organization.Organization:
    return _client(app, ADMIN).admin.organization


def _project_key(org: openai.resources.admin.organization.Organization, name: str) -> tuple[str, str]:
    """A new project with a service account: its id and the account's key."""
    project = org.projects.create(name=name)
    account = org.projects.service_accounts.create(project.id, name=f"{name}-bot")
    assert account.api_key is not None
    return project.id, account.api_key.value


def test_only_an_admin_key_reaches_the_admin_api_and_only_it(app: InProcess) -> None:
    with pytest.raises(openai.AuthenticationError):
        _client(app, "sk-admin-wrong").admin.organization.projects.list()
    assert app.http.get("/v1/organization/projects").status_code == 401
    with pytest.raises(openai.PermissionDeniedError) as refused:
        _client(app, ALICE.key).admin.organization.projects.list()
    assert refused.value.code == "insufficient_permissions"
    with pytest.raises(openai.PermissionDeniedError) as refused:
        _client(app, ADMIN).responses.create(model="sim", input="hi")
    assert refused.value.code == "admin_key_not_allowed"


def test_the_admin_api_is_off_without_an_admin_key(tmp_path: object) -> None:
    with in_process(Settings(db_url="sqlite:///:memory:", embedded=False, sim_latency=False)) as served:
        reply = served.http.get("/v1/organization/projects", headers={"authorization": "Bearer anything"})
        assert reply.status_code == 401
        assert "admin key" in reply.json()["error"]["message"]
        assert served.sdk.responses.create(model="sim", input="Reply with: open").output_text == "open"


def test_a_project_from_creation_to_archive(org: openai.resources.admin.organization.Organization,
                                             app: InProcess) -> None:  # fmt: skip
    project_id, key = _project_key(org, "lifecycle")
    assert org.projects.retrieve(project_id).name == "lifecycle"
    renamed = org.projects.update(project_id, name="renamed")
    assert (renamed.name, renamed.status) == ("renamed", "active")
    listed = [project.id for project in org.projects.list(limit=100)]
    assert {project_id, "alice", "default"} <= set(listed) and listed == sorted(listed)
    first = org.projects.list(limit=1)
    assert len(first.data) == 1 and first.has_more
    after = org.projects.list(limit=100, after=first.data[0].id)
    assert first.data[0].id not in [project.id for project in after.data]

    with nullcontext(_client(app, key)) as project:
        assert project.responses.create(model="sim", input="Reply with: works").output_text == "works"
        archived = org.projects.archive(project_id)
        assert archived.status == "archived" and archived.archived_at is not None
        with pytest.raises(openai.AuthenticationError):  # an archived project's keys stop at once
            project.responses.create(model="sim", input="hi")
    assert project_id not in [p.id for p in org.projects.list(limit=100)]
    assert project_id in [p.id for p in org.projects.list(limit=100, include_archived=True)]
    with pytest.raises(openai.BadRequestError) as refused:
        org.projects.update(project_id, name="again")
    assert refused.value.code == "project_archived"
    with pytest.raises(openai.NotFoundError):
        org.projects.retrieve("proj_missing")


def test_what_cannot_be_honoured_is_a_400_naming_it(org: openai.resources.admin.organization.Organization) -> None:
    with pytest.raises(openai.BadRequestError) as refused:
        org.projects.create(name="eu", geography="EU")
    assert refused.value.param == "geography"
    project_id, _ = _project_key(org, "scoped")
    with pytest.raises(openai.BadRequestError) as refused:
        org.projects.service_accounts.create(project_id, name="reader", extra_body={"scopes": ["api.all.read"]})
    assert refused.value.param == "scopes"
    with pytest.raises(openai.BadRequestError) as refused:
        org.projects.create(name="")
    assert refused.value.param == "name"


def test_service_accounts_and_their_keys(org: openai.resources.admin.organization.Organization, app: InProcess) -> None:
    project_id, key = _project_key(org, "accounts")
    other_id, other_key = _project_key(org, "neighbour")
    with nullcontext(_client(app, key)) as project, nullcontext(_client(app, other_key)) as neighbour:
        made = project.responses.create(model="sim", input="Reply with: mine")
        with pytest.raises(openai.NotFoundError):  # a project is a tenant
            neighbour.responses.retrieve(made.id)

    accounts = org.projects.service_accounts.list(project_id)
    account = accounts.data[0]
    assert (account.name, account.role) == ("accounts-bot", "member")
    assert org.projects.service_accounts.retrieve(account.id, project_id=project_id).id == account.id
    assert org.projects.service_accounts.update(account.id, project_id=project_id, role="owner").role == "owner"
    lonely = org.projects.service_accounts.create(project_id, name="no-key", create_service_account_only=True)
    assert (lonely.role, lonely.api_key) == ("none", None)

    second = org.projects.service_accounts.api_keys.create(account.id, project_id=project_id, expires_in_seconds=3600)
    assert second.value.startswith("sk-proj-") and second.expires_at == second.created_at + 3600
    keys = org.projects.api_keys.list(project_id).data
    assert {item.id for item in keys} >= {second.id}
    listed = next(item for item in keys if item.id == second.id)
    assert listed.redacted_value.endswith(second.value[-4:]) and second.value not in listed.model_dump_json()
    assert listed.owner.service_account is not None and listed.owner.service_account.id == account.id
    used = next(item for item in keys if item.id != second.id)
    assert used.last_used_at is not None  # the first key answered a request above
    assert org.projects.api_keys.list(project_id, owner_project_access="inactive").data == []
    updated = org.projects.api_keys.update(second.id, project_id=project_id, expires_in_seconds=60)
    assert updated.expires_at is not None and updated.expires_at <= second.created_at + 120

    with nullcontext(_client(app, second.value)) as client:
        assert client.responses.create(model="sim", input="Reply with: second").output_text == "second"
        assert org.projects.api_keys.delete(second.id, project_id=project_id).deleted
        with pytest.raises(openai.AuthenticationError):  # a revoked key stops at once
            client.responses.create(model="sim", input="hi")
    with nullcontext(_client(app, key)) as client:
        assert org.projects.service_accounts.delete(account.id, project_id=project_id).deleted
        with pytest.raises(openai.AuthenticationError):  # and an account's keys with it
            client.responses.create(model="sim", input="hi")
    with pytest.raises(openai.NotFoundError):
        org.projects.api_keys.retrieve(second.id, project_id=project_id)
    assert org.projects.retrieve(other_id).status == "active"


def test_model_and_hosted_tool_permissions(org: openai.resources.admin.organization.Organization,
                                           app: InProcess) -> None:  # fmt: skip
    project_id, key = _project_key(org, "permissions")
    permissions = org.projects.model_permissions
    assert permissions.retrieve(project_id).mode == "deny_list"
    with nullcontext(_client(app, key)) as client:
        assert permissions.update(project_id, mode="allow_list", model_ids=["sim-large"]).model_ids == ["sim-large"]
        with pytest.raises(openai.PermissionDeniedError) as refused:
            client.responses.create(model="sim", input="hi")
        assert (refused.value.code, refused.value.param) == ("model_not_found", "model")
        assert client.responses.create(model="sim-large", input="Reply with: allowed").output_text == "allowed"
        with pytest.raises(openai.PermissionDeniedError):
            client.chat.completions.create(model="sim", messages=[{"role": "user", "content": "hi"}])
        with pytest.raises(openai.PermissionDeniedError):
            client.embeddings.create(model="sim", input="hi")
        permissions.update(project_id, mode="deny_list", model_ids=["sim-large"])
        assert client.responses.create(model="sim", input="Reply with: again").output_text == "again"
        with pytest.raises(openai.PermissionDeniedError):
            client.responses.create(model="sim-large", input="hi")
        assert permissions.delete(project_id).deleted
        assert client.responses.create(model="sim-large", input="Reply with: all").output_text == "all"

        tools = org.projects.hosted_tool_permissions
        assert tools.retrieve(project_id).web_search.enabled
        changed = tools.update(project_id, web_search={"enabled": False})
        assert not changed.web_search.enabled and changed.mcp.enabled
        search = [{"type": "function", "name": "f", "parameters": {"type": "object"}}, {"type": "web_search"}]
        with pytest.raises(openai.PermissionDeniedError) as refused:
            client.responses.create(model="sim", input="hi", tools=search)  # type: ignore[arg-type]
        assert (refused.value.code, refused.value.param) == ("hosted_tool_not_permitted", "tools[1]")
        assert client.responses.create(model="sim", input="Reply with: no tools").output_text == "no tools"
        tools.update(project_id, web_search={"enabled": True})
    with pytest.raises(openai.BadRequestError) as refused:
        tools.update(project_id, mcp={"enabled": "yes"})  # type: ignore[typeddict-item]
    assert refused.value.param == "mcp.enabled"


def test_the_keys_files_projects_are_read_only(org: openai.resources.admin.organization.Organization,
                                              app: InProcess) -> None:  # fmt: skip
    assert org.projects.retrieve("alice").name == "alice"
    keys = org.projects.api_keys.list("alice").data
    assert [key.redacted_value[-4:] for key in keys] == [ALICE.key[-4:]]
    for change in (lambda: org.projects.update("alice", name="x"), lambda: org.projects.archive("alice"),
                   lambda: org.projects.service_accounts.create("alice", name="x")):  # fmt: skip
        with pytest.raises(openai.BadRequestError) as refused:
            change()
        assert refused.value.code == "read_only_project"
    with nullcontext(_client(app, ALICE.key)) as alice:
        assert alice.responses.create(model="sim", input="Reply with: file").output_text == "file"


def test_admin_keys(org: openai.resources.admin.organization.Organization, app: InProcess) -> None:
    made = org.admin_api_keys.create(name="ops")
    assert made.value.startswith("sk-admin-") and made.name == "ops"
    with nullcontext(_client(app, made.value)) as other:
        assert other.admin.organization.admin_api_keys.retrieve(made.id).redacted_value.endswith(made.value[-4:])
        assert made.id in [key.id for key in org.admin_api_keys.list(limit=100)]
        assert org.admin_api_keys.delete(made.id).deleted
        with pytest.raises(openai.AuthenticationError):
            other.admin.organization.projects.list()


def test_a_change_reaches_another_process_on_the_same_store(tmp_path: object) -> None:
    """Two servers on one store (as two workers or replicas): a key made through one works on the other
    once it has read the store's count of changes, and a key revoked through one stops there too."""
    import pathlib

    db = f"sqlite:///{pathlib.Path(str(tmp_path)) / 'shared.db'}"
    settings = Settings(db_url=db, embedded=False, sim_latency=False, admin_key=ADMIN, keys_poll_secs=0.05)
    with in_process(settings) as one, in_process(settings) as two:
        org = _client(one, ADMIN).admin.organization
        project_id, key = _project_key(org, "shared")
        with nullcontext(_client(two, key)) as there:
            _until(lambda: _answers(there))
            org.projects.archive(project_id)
            _until(lambda: not _answers(there))


def _answers(client: openai.OpenAI) -> bool:
    try:
        client.models.list()
    except openai.AuthenticationError:
        return False
    return True


def _until(condition: object, seconds: float = 10.0) -> None:
    """Wait for ``condition`` (a callable) to hold, looking again as the other process polls."""
    import time

    deadline = time.monotonic() + seconds
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, "the other process never read the change"
        time.sleep(0.02)


def test_responsa_admin_key_makes_one_in_the_store(tmp_path: object) -> None:
    import pathlib

    db = f"sqlite:///{pathlib.Path(str(tmp_path)) / 'cli.db'}"
    made = CliRunner().invoke(main, ["admin-key", "--db", db, "--name", "first"])
    assert made.exit_code == 0, made.output
    secret = made.stdout.strip()
    assert secret.startswith("sk-admin-")
    with in_process(Settings(db_url=db, embedded=False, sim_latency=False)) as served:
        listed = _client(served, secret).admin.organization.admin_api_keys.list().data
        assert [key.name for key in listed] == ["first"]
        with pytest.raises(openai.AuthenticationError):  # a key known: the server now requires one
            served.sdk.responses.create(model="sim", input="hi")


def test_the_audit_log_holds_every_admin_action_and_refusal(org: openai.resources.admin.organization.Organization,
                                                            app: InProcess) -> None:  # fmt: skip
    since = int(time.time())
    project_id, key = _project_key(org, "audited")
    org.projects.update(project_id, name="audited-renamed")
    org.projects.model_permissions.update(project_id, mode="allow_list", model_ids=["sim-large"])
    with pytest.raises(openai.PermissionDeniedError):
        _client(app, key).responses.create(model="sim", input="hi")
    with pytest.raises(openai.PermissionDeniedError):
        _client(app, key).admin.organization.projects.list()
    logs = org.audit_logs.list(project_ids=[project_id], limit=100).data
    types = [log.type for log in logs]
    assert types == ["api_key.permission_denied", "api_key.permission_denied", "project.updated", "project.updated",
                     "api_key.created", "service_account.created", "project.created"]  # fmt: skip
    assert [log.effective_at for log in logs] == sorted((log.effective_at for log in logs), reverse=True)
    created = logs[-1].project_created
    assert created is not None and (created.id, created.data.name) == (project_id, "audited")  # type: ignore[union-attr]
    assert logs[3].project_updated is not None and logs[3].project_updated.changes_requested.title == "audited-renamed"  # type: ignore[union-attr]
    refused = logs[1].model_extra["api_key.permission_denied"]  # type: ignore[index]
    assert refused["data"]["code"] == "model_not_found" and logs[1].actor.api_key.id == refused["id"]  # type: ignore[union-attr]
    assert logs[0].model_extra["api_key.permission_denied"]["data"]["code"] == "insufficient_permissions"  # type: ignore[index]

    only = org.audit_logs.list(event_types=["project.created"], project_ids=[project_id]).data
    assert [log.type for log in only] == ["project.created"]
    assert org.audit_logs.list(resource_ids=[project_id], limit=100).data[-1].type == "project.created"
    assert org.audit_logs.list(effective_at={"gte": since + 3600}).data == []
    first = org.audit_logs.list(project_ids=[project_id], limit=2)
    assert first.has_more and len(first.data) == 2
    rest = org.audit_logs.list(project_ids=[project_id], limit=100, after=first.data[-1].id).data
    assert [log.type for log in rest] == types[2:]
    made = org.admin_api_keys.create(name="audited-admin")
    tenant = org.audit_logs.list(tenant_only=True, limit=100).data
    assert any(log.type == "tenant.admin_api_key.created" for log in tenant)
    org.admin_api_keys.delete(made.id)
    with pytest.raises(openai.BadRequestError) as refused_listing:
        org.audit_logs.list(actor_emails=["someone@example.com"])
    assert refused_listing.value.param == "actor_emails"
