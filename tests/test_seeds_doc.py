"""docs/seeds.md cannot drift from the suite: every row of its tables links at least one test, every
linked test file and test function exists, and no row says a documented behaviour is ignored."""

from __future__ import annotations

import ast
import fnmatch
import re
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SEEDS = ROOT / "docs" / "seeds.md"
LINK = re.compile(r"`((?:[\w.-]+/)*test_[\w-]+\.py)(?:::([\w*\[\]-]+))?`")


def rows() -> list[tuple[str, list[str]]]:
    """(section, cells) of each table row that has a ``proof`` column."""
    found: list[tuple[str, list[str]]] = []
    section, proof_column = "", None
    for line in SEEDS.read_text().splitlines():
        if line.startswith("## "):
            section, proof_column = line[3:], None
        if not line.startswith("|"):
            continue
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if "proof" in cells:
            proof_column = cells.index("proof")
        elif proof_column is not None and not set("".join(cells)) <= set("-: "):
            found.append((section, cells))
    return found


@cache
def functions_in(path: Path) -> frozenset[str]:
    tree = ast.parse(path.read_text())
    return frozenset(node.name for node in ast.walk(tree) if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef))


ROWS = rows()


def test_the_tables_have_rows() -> None:
    assert len(ROWS) > 50


@pytest.mark.parametrize(("section", "cells"), ROWS, ids=[f"{s}: {c[0][:50]}" for s, c in ROWS])
def test_each_row_links_tests_that_exist(section: str, cells: list[str]) -> None:
    links = LINK.findall(cells[-1])
    assert links, f"{section}: the row {cells[0]!r} links no test"
    for path, name in links:
        file = ROOT / "tests" / path
        assert file.is_file(), f"{section}: {path} does not exist"
        if name:
            pattern = name.split("[")[0]
            assert fnmatch.filter(functions_in(file), pattern), f"{section}: no {pattern} in {path}"


@pytest.mark.parametrize(("section", "cells"), ROWS, ids=[f"{s}: {c[0][:50]}" for s, c in ROWS])
def test_no_row_says_a_behaviour_is_ignored(section: str, cells: list[str]) -> None:
    prose = re.sub(r"`[^`]*`", "", " ".join(cells[1:]))  # a field's name (`ignored_tools`) says nothing is ignored
    assert "ignored" not in prose.lower(), f"{section}: {cells[0]!r}"


def test_each_table_is_one_block_so_it_renders_whole() -> None:
    """A blank line inside a table ends it there: Markdown shows the rows after it as a paragraph."""
    lines = SEEDS.read_text().splitlines()
    broken = [number + 1 for number in range(1, len(lines) - 1)
              if not lines[number].strip() and lines[number - 1].startswith("|") and lines[number + 1].startswith("|")]  # fmt: skip
    assert broken == [], f"blank lines inside a table at lines {broken}"
