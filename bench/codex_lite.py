"""Codex in Responses Lite against Codex in its default mode, on the simulator: a session of
``--turns`` shell turns (each ``codex exec resume --last`` asking for one command), and the input
tokens of each turn as Codex reports them (``turn.completed`` usage). Lite sends its tools as an
``additional_tools`` item, its instructions as a developer message and ``reasoning.context:
all_turns``; the default mode sends ``tools`` and ``instructions``. Prints the per-turn medians and
the last turn of each (a benchmark: it prints numbers and asserts nothing).

    python bench/codex_lite.py --codex /path/to/node_modules/.bin/codex [--turns 20]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import tempfile
from pathlib import Path

import httpx
from _server import responsa_server

CONFIG = """model = "sim"
sandbox_mode = "danger-full-access"
approval_policy = "never"
openai_base_url = "{v1}"
model_catalog_json = "{catalog}"
"""


def session(codex: str, url: str, home: Path, turns: int) -> list[int]:
    """The input tokens of each turn of a ``turns``-turn shell session."""
    home.mkdir()
    work = home / "work"
    work.mkdir()
    catalog = httpx.get(f"{url}/v1/models", params={"client_version": "0.171.0"}, timeout=10).text
    (home / "models.json").write_text(catalog)
    (home / "config.toml").write_text(CONFIG.format(v1=f"{url}/v1", catalog=home / "models.json"))
    env = {**os.environ, "CODEX_HOME": str(home), "OPENAI_API_KEY": "unused", "NO_COLOR": "1"}
    counts = []
    for turn in range(turns):
        ask = f"Run the command `echo turn-{turn}` with exec_command and tell me what it printed"
        args = [codex, "exec", "--json", "--skip-git-repo-check", ask] if turn == 0 else \
            [codex, "exec", "resume", "--last", "--json", "--skip-git-repo-check", ask]  # fmt: skip
        done = subprocess.run(args, cwd=work, env=env, capture_output=True, text=True, timeout=300, check=True)
        events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
        usage = next(event["usage"] for event in reversed(events) if event["type"] == "turn.completed")
        counts.append(int(usage["input_tokens"]))
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--codex", required=True)
    parser.add_argument("--turns", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=Path.home()) as directory:  # Codex's home: not under /tmp
        for name, flags in (("default", ()), ("Responses Lite", ("--codex-responses-lite",))):
            db = f"sqlite:///{Path(directory) / (name + '.db')}"
            with responsa_server("--db", db, "--no-embedded", "--no-sim-latency", *flags) as url:
                counts = session(args.codex, url, Path(directory) / name.replace(" ", "-"), args.turns)
            print(f"Codex {name}: input tokens per turn median {statistics.median(counts):.0f}, "
                  f"first {counts[0]}, last {counts[-1]} ({len(counts)} turns)")  # fmt: skip


if __name__ == "__main__":
    main()
