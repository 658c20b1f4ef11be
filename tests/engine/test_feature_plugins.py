"""Request features from plug-ins: a distribution with a ``responsa.request_features`` entry point
(tests/engine/stamp_feature.py, installed into a folder on ``sys.path`` as pip would) takes part in the
creates that name it, at the fixed points docs/architecture.md lists, in that order; a create that
does not name it never asks it."""

from __future__ import annotations

import importlib
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from responsa.config import Settings
from tests.in_process import InProcess, in_process


@pytest.fixture
def stamped(tmp_path: Path) -> Iterator[InProcess]:
    site = tmp_path / "site"
    site.mkdir()
    shutil.copy(Path(__file__).with_name("stamp_feature.py"), site / "stamp_feature.py")
    info = site / "stamp_feature-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: stamp-feature\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[responsa.request_features]\nstamp = stamp_feature:FEATURE\n")
    sys.path.insert(0, str(site))
    importlib.invalidate_caches()
    try:
        with in_process(Settings(db_url=f"sqlite:///{tmp_path / 'r.db'}", embedded=False)) as app:
            yield app
    finally:
        sys.path.remove(str(site))
        sys.modules.pop("stamp_feature", None)


def test_a_plugin_feature_takes_its_hooks_in_order_where_named(stamped: InProcess) -> None:
    named = stamped.http.post("/v1/responses", json={"model": "sim", "input": "Hi", "stamp": True})
    assert named.status_code == 200, named.text
    assert named.json()["metadata"]["hooks"].split() == [
        "revise", "waits", "plan", "read", "screen_input", "answer", "fit", "shape", "begin", "item_opened", "item_done",
        "screen_output",
    ]  # fmt: skip
    streamed = stamped.http.post("/v1/responses", json={"model": "sim", "input": "Hi", "stamp": True, "stream": True})
    hooks = "revise waits plan read screen_input answer fit shape begin hold item_opened item_done screen_output"
    assert f'"hooks":"{hooks}"' in streamed.text  # a stream read: its events go through hold
    plain = stamped.http.post("/v1/responses", json={"model": "sim", "input": "Hi"})
    assert plain.status_code == 200 and plain.json()["metadata"] == {}
