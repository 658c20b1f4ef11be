"""The embedded model through responsa versus the same model called directly with llama-cpp-python.

Same GGUF, same prompt (the chat template applied the same way), greedy decoding with the same
repetition penalty (the packaged model's default, 1.3 over the last 256 tokens: llama.cpp's penalty
sampler costs ~0.12 ms of a ~6 ms token, which a direct call with llama-cpp-python's defaults would
not pay), the prompt evaluated afresh each run; the two paths take turns, so both see the same
machine. Prints median decode speed (tokens/s, first token excluded) and time to first token, and
their ratio / difference; and the CPU the server's event loop spends a token, which the decoding (on
every core) loses: steadier than the ratio, which moves by a few points from run to run on a
two-core machine. Targets (issue 4): responsa at >= 95% of direct tokens/s; <= 5 ms added time to
first token (issue 30: >= 97%).

    python bench/embedded_speed.py [--tokens 128] [--repeat 7]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

import httpx
from _server import responsa_server

from responsa.backends.llama_cpp._backend import PACKAGED_SAMPLING

STORE = os.environ.get("BENCH_STORE", "1") == "1"
PROMPT = "Write a long story about a lighthouse keeper who finds a message in a bottle."


Run = tuple[float, float, int]  # time to first token, time for the rest, tokens


class Direct:
    """The model loaded in this process, called as llama-cpp-python users do, sampling as responsa does
    (the packaged model with its repetition penalty; another file, ``path``, with none, as responsa
    samples a model it is given)."""

    def __init__(self, path: Path | None = None) -> None:
        from llama_cpp import Llama
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        from responsa.backends.llama_cpp import default_gguf
        from responsa.backends.llama_cpp._slots import PENALTY_WINDOW

        self.repeat_penalty = (PACKAGED_SAMPLING.repetition_penalty or 1.0) if path is None else 1.0
        self.llm = Llama(
            model_path=str(path or default_gguf()), n_ctx=4096, n_threads=os.cpu_count() or 1, verbose=False,
            last_n_tokens_size=PENALTY_WINDOW,
        )  # fmt: skip
        model = self.llm._model
        template = self.llm.metadata["tokenizer.chat_template"]
        formatter = Jinja2ChatFormatter(
            template, model.token_get_text(self.llm.token_eos()), model.token_get_text(self.llm.token_bos())
        )
        self.prompt = formatter(messages=[{"role": "user", "content": PROMPT}]).prompt

    def run(self, tokens: int) -> Run:
        self.llm.reset()
        start = time.perf_counter()
        first, count = 0.0, 0
        chunks = self.llm.create_completion(self.prompt, max_tokens=tokens, temperature=0, stream=True,
                                            repeat_penalty=self.repeat_penalty)  # fmt: skip
        for _chunk in chunks:
            count += 1
            if count == 1:
                first = time.perf_counter()
        return first - start, time.perf_counter() - first, count


def through_responsa(http: httpx.Client, tokens: int) -> Run:
    body = {"model": "smollm2-135m-instruct", "input": PROMPT, "max_output_tokens": tokens, "temperature": 0,
            "seed": 1, "stream": True, "store": STORE}  # fmt: skip
    start = time.perf_counter()
    first, count = 0.0, 0
    with http.stream("POST", "/v1/responses", json=body) as reply:
        for line in reply.iter_lines():
            if line.startswith("data: {") and '"response.output_text.delta"' in line:
                count += 1
                if count == 1:
                    first = time.perf_counter()
            elif line.startswith("data: {") and ('"response.completed"' in line or '"response.incomplete"' in line):
                count = json.loads(line[6:])["response"]["usage"]["output_tokens"]
    return first - start, time.perf_counter() - first, count


def summarize(runs: list[tuple[float, float, int]]) -> tuple[float, float]:
    ttft = statistics.median(run[0] for run in runs) * 1000
    speed = statistics.median((run[2] - 1) / run[1] for run in runs if run[1] > 0)
    return speed, ttft


def loop_cpu_seconds(pid: int) -> float:
    """CPU time (user and system) of the server's main thread, which runs its event loop: what serving
    a token costs besides decoding it, and takes from the decoding threads on a machine they fill."""
    fields = Path(f"/proc/{pid}/task/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def measure(tokens: int, repeat: int) -> tuple[tuple[float, float], tuple[float, float], float]:
    """(tokens/s, TTFT ms) of llama-cpp-python called directly and of responsa, runs interleaved; and
    the server's event loop CPU per token streamed, in µs."""
    plain_runs: list[Run] = []
    via_runs: list[Run] = []
    direct = Direct()
    pids: list[int] = []
    loop_cpu = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        db = f"sqlite:///{Path(tmp) / 'b.db'}"
        server = responsa_server("--db", db, "--no-simulator", pids=pids)
        with server as url, httpx.Client(base_url=url, timeout=300) as http:
            through_responsa(http, 2)  # load the model
            for _ in range(repeat):  # interleaved, so both see the same machine
                plain_runs.append(direct.run(tokens))
                started = loop_cpu_seconds(pids[0])
                via_runs.append(through_responsa(http, tokens))
                loop_cpu += loop_cpu_seconds(pids[0]) - started
    streamed = sum(run[2] for run in via_runs)
    return summarize(plain_runs), summarize(via_runs), loop_cpu / streamed * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tokens", type=int, default=128)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    plain, via, loop_us = measure(args.tokens, args.repeat)
    print(f"{'path':<22} | {'decode tokens/s':>15} | {'time to first token ms':>22}")
    print("-" * 66)
    print(f"{'llama-cpp-python':<22} | {plain[0]:>15.1f} | {plain[1]:>22.2f}")
    print(f"{'responsa (HTTP, SSE)':<22} | {via[0]:>15.1f} | {via[1]:>22.2f}")
    ratio, added = via[0] / plain[0], via[1] - plain[1]
    print(f"\nresponsa / direct tokens/s: {ratio:.1%}   added time to first token: {added:+.2f} ms")
    print(f"the server's event loop: {loop_us:.0f} µs of CPU a token (Linux only; the decoding threads excluded)")
    print(f"(medians of {args.repeat} runs, {args.tokens} tokens, greedy, {os.cpu_count()} threads)")


if __name__ == "__main__":
    main()
