"""What a probe and a per-call failure say: the real error in one line, never a group's wrapper."""

from __future__ import annotations

import anyio
import pytest

from responsa.protocol import failure_of, probe_in_child


def test_a_task_group_s_failure_is_told_by_its_first_cause() -> None:
    async def fail() -> None:
        raise ConnectionRefusedError("the provider refused")

    async def search() -> None:
        async with anyio.create_task_group() as group:
            group.start_soon(fail)

    with pytest.raises(BaseExceptionGroup) as caught:
        anyio.run(search)
    assert "TaskGroup" in str(caught.value)
    assert failure_of(caught.value) == "ConnectionRefusedError: the provider refused"


def test_a_probe_says_the_error_of_the_code_it_ran_in_one_line() -> None:
    assert probe_in_child("import json") is None
    failure = probe_in_child("import no_such_package_here")
    assert failure == "ModuleNotFoundError: No module named 'no_such_package_here'"
    assert probe_in_child("raise ValueError('two\\nlines')") == "ValueError: two lines"
