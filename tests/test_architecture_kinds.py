"""Kind knowledge lives in its kind: docs/architecture.md's table of tool kinds is the registry's (every
built-in kind in the row of its module, with each item type it owns and the prefix of its ids), and no
module outside ``engine/tools/`` and ``protocol/`` names a kind's tool or item type."""

from __future__ import annotations

import ast
import functools
import importlib
import re
import tempfile
from pathlib import Path

from responsa.config import Settings
from responsa.engine.tools import ToolRegistry
from tests.in_process import in_process

ARCHITECTURE = Path(__file__).parents[1] / "docs" / "architecture.md"


def table_rows() -> dict[str, tuple[str, list[str], dict[str, str]]]:
    """Each kind the table names: its row's module, and the row's items with their prefixes."""
    text = ARCHITECTURE.read_text()
    section = text[text.index("| module | kinds |") : text.index("A kind answers these questions:")]
    rows: dict[str, tuple[str, list[str], dict[str, str]]] = {}
    for line in section.splitlines()[2:]:
        if not line.startswith("| `"):
            continue
        module, kinds, _types, items, _run_by = (cell.strip() for cell in line.strip("|").split("|"))
        names = re.findall(r"`([a-z_]+)`", kinds)
        prefixes = dict(re.findall(r"`([a-z_]+)` \(`([a-z]+)`\)", items))
        for name in names:
            rows[name] = (module.strip("`"), names, prefixes)
    return rows


@functools.cache
def built_in_registry() -> ToolRegistry:
    """The registry ``create_app`` builds and serves (no copy of its list of kinds: the app's own)."""
    with tempfile.TemporaryDirectory() as directory:
        settings = Settings(db_url=f"sqlite:///{Path(directory) / 'r.db'}", embedded=False)
        with in_process(settings) as app:
            registry: ToolRegistry = app.http.app.state.services.tools  # type: ignore[attr-defined]
    return registry


def test_the_kinds_table_is_the_registry() -> None:
    registry = built_in_registry()
    rows = table_rows()
    assert set(rows) == {kind.name for kind in registry.kinds()}
    for kind in registry.kinds():
        module, _names, prefixes = rows[kind.name]
        defined = vars(importlib.import_module(f"responsa.engine.tools.{module.removesuffix('.py')}")).values()
        assert any(value is kind or value is type(kind) for value in defined), (kind.name, module)
        for item_type, prefix in kind.item_types.items():
            assert prefixes.get(item_type) == prefix, (kind.name, item_type)


PACKAGE = Path(__file__).parents[1] / "src" / "responsa"
KIND_HOMES = ("engine/tools/", "protocol/")
ELSEWHERE = {
    "backends/": "the backends' own wire formats (Chat Completions' function tools and calls) and the "
    "simulator's simulated hosted calls: backends sit below the engine and cannot ask its kinds",
    "http/chat/": "Chat Completions' wire: its function tools, tool calls and tool messages",
    "http/_errors.py": "Chat Completions' nested function object in a chat-shaped tool_choice",
}
"""Where the same words name something else (each says what)."""


def named_types(path: Path, names: set[str]) -> set[str]:
    """The string constants of ``path`` that are one of ``names`` (``__all__`` entries left aside)."""
    tree = ast.parse(path.read_text())
    exported = {id(node) for stmt in tree.body if isinstance(stmt, ast.Assign)
                and any(isinstance(t, ast.Name) and t.id == "__all__" for t in stmt.targets)
                for node in ast.walk(stmt.value)}  # fmt: skip
    return {node.value for node in ast.walk(tree) if isinstance(node, ast.Constant) and id(node) not in exported
            and isinstance(node.value, str) and node.value in names}  # fmt: skip


def test_no_module_outside_the_kinds_names_a_kind_type() -> None:
    registry = built_in_registry()
    names = {kind.name for kind in registry.kinds()}
    for kind in registry.kinds():
        names |= set(kind.tool_types) | set(kind.item_types)
    for path in sorted(PACKAGE.rglob("*.py")):
        where = path.relative_to(PACKAGE).as_posix()
        if where.startswith(KIND_HOMES) or any(where.startswith(place) for place in ELSEWHERE):
            continue
        assert not named_types(path, names), f"{where} names {sorted(named_types(path, names))}"
