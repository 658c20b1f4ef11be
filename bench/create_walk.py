"""The walk of one create through responsa's modules: how many modules it enters, how often it returns
to a module it had left, and how many distinct calls go back into a module still waiting below on the
stack (a cycle between modules). A shorter walk is a create path that reads top to bottom.

    python bench/create_walk.py --rig-python /tmp/rig/bin/python [--stream]

It serves one create in process (as bench/in_process.py does: the ASGI app called straight, the upstream
answering from a canned completion), warms up with 50 creates, then traces one with ``sys.setprofile``,
keeping only frames of ``responsa`` modules (library frames in between are skipped: a responsa frame's
caller is the nearest responsa frame below it). Counted:

- modules entered: distinct ``responsa`` modules with a frame in the create;
- returns to a module left: returns from a frame of module B to a frame of module A != B (a coroutine's
  suspension counts as a return and its resumption as a call, so an ``await`` across modules counts);
- calls back: distinct (caller module, callee module) pairs where the callee's module already has a
  frame lower on the stack, below a frame of another module.

Run it with ``PYTHONPATH=<other checkout>/src`` to measure another version the same way.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from types import FrameType
from typing import Any

import orjson
import uvloop
from _server import RIG, rig_mock

from in_process import _create, answer_canned, served_app


class Walk:
    """The profile hook: a stack of responsa modules, and the counts."""

    def __init__(self) -> None:
        self.stack: list[str] = []
        self.modules: set[str] = set()
        self.returns = 0
        self.calls_back: set[tuple[str, str]] = set()

    def hook(self, frame: FrameType, event: str, _arg: Any) -> None:
        if event not in ("call", "return"):
            return
        module = frame.f_globals.get("__name__", "")
        if not module.startswith("responsa"):
            return
        if event == "call":
            caller = self.stack[-1] if self.stack else None
            if caller is not None and caller != module and module in self.stack:
                self.calls_back.add((caller, module))
            self.stack.append(module)
            self.modules.add(module)
        elif self.stack:
            self.stack.pop()
            if self.stack and self.stack[-1] != module:
                self.returns += 1


async def run(stream: bool, upstream: str) -> Walk:
    async with served_app(upstream) as app:
        body = orjson.dumps({"model": "mock-model", "input": "Hello there, how are you today?", "stream": stream,
                             "max_output_tokens": 16})  # fmt: skip
        for _ in range(50):
            await _create(app, body)
        walk = Walk()
        sys.setprofile(walk.hook)
        try:
            await _create(app, body)
        finally:
            sys.setprofile(None)
        return walk


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rig", type=str, default=str(RIG))
    parser.add_argument("--rig-python", required=True)
    parser.add_argument("--stream", action="store_true")
    parser.add_argument("--list", action="store_true", help="print the modules and the calls back")
    args = parser.parse_args()
    answer_canned(16)
    with rig_mock(args.rig_python, rig=Path(args.rig)) as upstream:
        walk = uvloop.run(run(args.stream, upstream))
    kind = "stream" if args.stream else "json"
    print(f"{kind}: {len(walk.modules)} modules entered, {walk.returns} returns to a module left, "
          f"{len(walk.calls_back)} calls back into a module left")  # fmt: skip
    if args.list:
        print("\n".join(sorted(walk.modules)))
        print("\n".join(f"{caller} -> {callee}" for caller, callee in sorted(walk.calls_back)))


if __name__ == "__main__":
    main()
