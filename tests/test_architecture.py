"""Imports flow one way (protocol ← engine ← http ← serve ← cli) and the public API is pinned."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import responsa.backends
import responsa.engine
import responsa.protocol
import responsa.store

PACKAGE = Path(responsa.protocol.__file__).parent.parent
FORBIDDEN = {
    "protocol": {"engine", "backends", "store", "http", "serve", "cli", "config", "external"},
    "backends": {"engine", "store", "http", "serve", "cli", "external"},
    "store": {"engine", "backends", "http", "serve", "cli", "external"},
    "external": {"engine", "backends", "store", "http", "serve", "cli"},
    "engine": {"http", "serve", "cli"},
    "http": {"serve", "cli"},
    "serve": {"cli"},
    "model_files": {"protocol", "engine", "backends", "store", "http", "serve", "cli", "config", "external"},
}
EXTERNAL_FORBIDDEN = {
    "protocol": {"httpx", "sqlalchemy", "starlette", "alembic"},
    "engine": {"httpx", "sqlalchemy", "aiosqlite", "starlette"},
}


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


@pytest.mark.parametrize("subpackage", sorted(FORBIDDEN))
def test_no_upward_imports(subpackage: str) -> None:
    for path in (PACKAGE / subpackage).rglob("*.py"):
        for name in imported_modules(path):
            parts = name.split(".")
            if parts[0] == "responsa" and len(parts) > 1:
                assert parts[1] not in FORBIDDEN[subpackage], f"{path} imports {name}"
            assert parts[0] not in EXTERNAL_FORBIDDEN.get(subpackage, set()), f"{path} imports {name}"


def test_the_engine_reaches_the_store_through_its_repository_protocols() -> None:
    """Only serve's lifespan picks the SQL implementation; the engine names protocols."""
    for path in (PACKAGE / "engine").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("responsa.store"):
                names = {alias.name for alias in node.names}
                assert "SqlStore" not in names and node.module == "responsa.store", f"{path} imports {names}"


ENGINE_ORDER = [
    "projects",
    "usage",
    "output",
    "files",
    "containers",
    "skills",
    "tools",
    "responses",
    "batches",
    "webhooks",
]
"""The engine's folders, each importing only those before it (and the engine's own leaves)."""


def engine_imports(path: Path) -> set[str]:
    """The engine modules ``path`` imports, relative ones resolved: dotted below ``responsa.engine``."""
    package = list(path.relative_to(PACKAGE / "engine").parts[:-1])
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if not isinstance(node, ast.ImportFrom):
            continue
        if node.level == 0:
            if (node.module or "").startswith("responsa.engine."):
                found.add((node.module or "").removeprefix("responsa.engine."))
            continue
        base = package[: len(package) - (node.level - 1)] if node.level > 1 else package
        module = [*base, *((node.module or "").split(".") if node.module else [])]
        found.update(".".join([*module, alias.name]) if not node.module else ".".join(module) for alias in node.names)
    return found


def test_the_engine_folders_import_one_way() -> None:
    """output ← files ← containers ← tools ← responses; the engine's root modules (shared leaves) import
    none of them; nothing outside the five folders but those leaves and the package itself."""
    engine = PACKAGE / "engine"
    assert {path.name for path in engine.iterdir() if path.is_dir() and path.name != "__pycache__"} == set(ENGINE_ORDER)
    for path in engine.rglob("*.py"):
        folder = path.relative_to(engine).parts[0]
        if path.parent == engine:
            if path.name != "__init__.py":
                assert not engine_imports(path), f"{path} is a shared leaf: it imports {engine_imports(path)}"
            continue
        allowed = set(ENGINE_ORDER[: ENGINE_ORDER.index(folder) + 1])
        for name in engine_imports(path):
            top = name.split(".")[0]
            assert top in allowed or top.startswith("_"), f"{path} ({folder}) imports engine.{name}"


RESPONSES_ORDER = ["features", "run", "opening"]
"""The create path's stages (``engine/responses/``), each importing only those before it and the
folder's shared leaf ``_context``; the service and conversations at the folder's root use them all."""


def test_the_create_stages_import_one_way() -> None:
    responses = PACKAGE / "engine" / "responses"
    folders = {path.name for path in responses.iterdir() if path.is_dir() and path.name != "__pycache__"}
    assert folders == set(RESPONSES_ORDER)
    leaf = {name for name in engine_imports(responses / "_context.py") if name.startswith("responses.")}
    assert not leaf, f"_context is a shared leaf: it imports {leaf}"
    for stage in RESPONSES_ORDER:
        allowed = {*RESPONSES_ORDER[: RESPONSES_ORDER.index(stage) + 1], "_context"}
        for path in (responses / stage).glob("*.py"):
            for name in engine_imports(path):
                parts = name.split(".")
                if parts[0] == "responses" and len(parts) > 1:
                    assert parts[1] in allowed, f"{path} ({stage}) imports engine.{name}"


def test_the_store_protocols_know_no_implementation() -> None:
    """``store/``'s protocols and values import nothing of ``store/sql/`` (its ``__init__`` re-exports
    ``SqlStore`` for the lifespan, the one place that picks an implementation)."""
    for path in (PACKAGE / "store").glob("_[!_]*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                module = node.module or ""
                assert not (module.startswith("sql") or module.startswith("responsa.store.sql")), (
                    f"{path} imports {module}"
                )


@pytest.mark.parametrize("leaf", ["tracing.py", "config"])
def test_leaves_every_layer_may_use_import_nothing_of_responsa(leaf: str) -> None:
    """``tracing`` and the ``config`` package import nothing of responsa's (the package only itself,
    relatively; ``python -m responsa.config`` names the package it is)."""
    path = PACKAGE / leaf
    for module in [path] if path.is_file() else sorted(path.glob("*.py")):
        imported = imported_modules(module)
        outside = {name for name in imported if name.split(".")[0] == "responsa" and name != "responsa.config"}
        assert not outside, f"{module} imports {outside}"


def test_public_api_is_pinned() -> None:
    assert set(responsa.engine.__all__) == {
        "Apart",
        "BATCH_RANK",
        "DEFAULT_IMAGES_MODEL",
        "ImagesApi",
        "BatchLines",
        "Started",
        "BatchRunner",
        "BatchService",
        "WebhookDeliverer",
        "WebhookService",
        "delivery_body",
        "endpoint_body",
        "Compactor",
        "PromptLibrary",
        "ModerationFeature",
        "MultiAgentFeature",
        "MultiAgentKind",
        "Rooms",
        "PromptCacheFeature",
        "ReasoningContextFeature",
        "ReasoningSealFeature",
        "ConfigurationFeature",
        "CompactionFeature",
        "BackgroundWindowsFeature",
        "PromptsFeature",
        "RequestFeature",
        "FeatureRun",
        "ContainerService",
        "ConversationService",
        "Embedder",
        "EmbeddingService",
        "FileService",
        "OutputBuilder",
        "ResponseService",
        "ResponseSetup",
        "Run",
        "Sealer",
        "MAX_STEERS",
        "Steer",
        "Steering",
        "inbox_of",
        "inject_created",
        "inject_failure",
        "injected",
        "load_features",
        "steer_failure",
        "steer_input",
        "successor_create",
        "VectorStoreService",
        "batch_body",
        "every",
        "file_body",
        "probe_pdf_text",
        "vector_store_body",
    }
    assert set(responsa.store.__all__) == {
        "AuditFilter",
        "AuditRow",
        "USAGE_DIMENSIONS",
        "USAGE_TOTALS",
        "PART_BYTES",
        "BatchFile",
        "BatchRepository",
        "ClaimedBatch",
        "ClaimedLine",
        "Delivery",
        "DueDelivery",
        "InputLine",
        "WebhookEndpointRow",
        "WebhookRepository",
        "ServiceAccountRow",
        "SkillRepository",
        "SpendAlertRow",
        "SkillRow",
        "SkillVersionRow",
        "event_payload",
        "secrets_of",
        "ChunkHit",
        "ContainerRepository",
        "ConversationRepository",
        "FileRepository",
        "ItemPage",
        "KeyRow",
        "LoggedEvent",
        "Order",
        "ProjectRepository",
        "ProjectRow",
        "ResponseFilter",
        "ResponsePage",
        "ResponseRepository",
        "Retention",
        "SqlStore",
        "Store",
        "StoreHealth",
        "StoredBatch",
        "StoredFile",
        "StoredVectorStore",
        "UsageFilter",
        "UsageRepository",
        "UsageRow",
        "VectorStoreRepository",
        "schema_state",
    }
    assert {"Backend", "BackendRegistry", "ModelRequest", "ModelEvent", "Finish"} <= set(responsa.backends.__all__)
    for module in (responsa.protocol, responsa.engine, responsa.store, responsa.backends):
        for name in module.__all__:
            assert hasattr(module, name), f"{module.__name__}.{name}"


def test_the_tests_mirror_the_package() -> None:
    """Every folder of tests/ that holds tests is named as the package it tests (tests/engine/tools for
    ``responsa/engine/tools``...); whole-server suites (the real clients, crashes, the CLI) sit at the top."""
    tests = Path(__file__).parent
    for folder in sorted({path.parent for path in tests.rglob("test_*.py")} - {tests}):
        relative = folder.relative_to(tests)
        assert (PACKAGE / relative).is_dir(), f"tests/{relative} has no responsa/{relative} to mirror"
