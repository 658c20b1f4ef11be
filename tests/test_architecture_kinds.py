"""docs/architecture.md's table of tool kinds is the registry's: every built-in kind appears in the row
of its module, with each item type it owns and the prefix of that item's ids, and no row names a kind
the registry lacks."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

from responsa.engine.tools import ToolRegistry, client_kinds
from responsa.engine.tools.code_interpreter import CodeInterpreterKind
from responsa.engine.tools.file_search import FileSearchKind
from responsa.engine.tools.image_generation import ImageGenerationKind
from responsa.engine.tools.mcp import McpKind
from responsa.engine.tools.web_search import WebSearchKind
from responsa.external import McpConnector

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


def test_the_kinds_table_is_the_registry() -> None:
    registry = ToolRegistry([*client_kinds(), McpKind(McpConnector()), FileSearchKind(None), WebSearchKind(None),
                             ImageGenerationKind(None), CodeInterpreterKind(None)])  # fmt: skip
    rows = table_rows()
    assert set(rows) == {kind.name for kind in registry.kinds()}
    for kind in registry.kinds():
        module, _names, prefixes = rows[kind.name]
        defined = vars(importlib.import_module(f"responsa.engine.tools.{module.removesuffix('.py')}")).values()
        assert any(value is kind or value is type(kind) for value in defined), (kind.name, module)
        for item_type, prefix in kind.item_types.items():
            assert prefixes.get(item_type) == prefix, (kind.name, item_type)
