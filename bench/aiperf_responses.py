"""A neutral harness on the Responses API: NVIDIA's AIPerf (PyPI ``aiperf``, 0.13.0 here) drives
responsa's ``/v1/responses`` (its ``responses`` endpoint type, streaming or not) in front of the rig's
mock upstream, and, as the yardstick in the same run, the mock alone on its ``/v1/chat/completions``
(the ``chat`` endpoint type), with the same load: ``--concurrency`` clients, ``--requests`` requests.
The mock and AIPerf on core 0, responsa alone on core 1 (SQLite), as the rig lays them out.

AIPerf is installed on its own (its dependencies are not responsa's): ``python3 -m venv /tmp/aiperf &&
/tmp/aiperf/bin/pip install aiperf==0.13.0``. It counts tokens with a Hugging Face tokenizer, which
it would download; here a small byte-level BPE is trained on this machine's text (its license files
and docs/) and served from a cache of its own in offline mode (AIPerf 0.13's ``builtin`` tokenizer
still downloads tiktoken's table, and a local path is taken for a repository id offline), so nothing
leaves loopback. Token counts are the server's (``--use-server-token-count``). Prints AIPerf's
request throughput, time to first token and request latency for each.

    python bench/aiperf_responses.py --rig-python /tmp/rig/bin/python --aiperf-python /tmp/aiperf/bin/python
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from _server import RIG, responsa_server, rig_mock

_TOKENIZER = "local/bpe-8k"
_REVISION = "0" * 40

_TRAIN = """
import glob, sys
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import PreTrainedTokenizerFast
texts = [open(p, errors="ignore").read() for p in glob.glob("/usr/share/common-licenses/*") + glob.glob("docs/*.md")]
bpe = Tokenizer(models.BPE(unk_token="[UNK]"))
bpe.pre_tokenizer, bpe.decoder = pre_tokenizers.ByteLevel(add_prefix_space=False), decoders.ByteLevel()
bpe.train_from_iterator(texts, trainers.BpeTrainer(vocab_size=8000, special_tokens=["[UNK]", "<s>", "</s>"],
                                                   initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
fast = PreTrainedTokenizerFast(tokenizer_object=bpe, unk_token="[UNK]", bos_token="<s>", eos_token="</s>")
fast.save_pretrained(sys.argv[1])
"""


def local_tokenizer(python: str, home: Path) -> None:
    """A tokenizer trained here, laid out as a Hugging Face cache holds a download of ``_TOKENIZER``."""
    repo = home / "hub" / f"models--{_TOKENIZER.replace('/', '--')}"
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text(_REVISION)
    subprocess.run([python, "-c", _TRAIN, str(repo / "snapshots" / _REVISION)], check=True, capture_output=True)


def aiperf(python: str, env: dict[str, str], url: str, endpoint: str, args: argparse.Namespace, out: Path) -> Any:
    command = ["taskset", "-c", "0", python, "-m", "aiperf", "profile", "--model", "mock-model", "--url", url,
               "--endpoint-type", endpoint, "--concurrency", str(args.concurrency), "--request-count",
               str(args.requests), "--tokenizer", _TOKENIZER, "--use-server-token-count",
               "--synthetic-input-tokens-mean", "64", "--output-tokens-mean", "64", "--artifact-dir", str(out),
               "--ui-type", "none", *(["--streaming"] if args.stream else [])]  # fmt: skip
    subprocess.run(command, env=env, check=True, capture_output=True, timeout=900)
    return json.loads((out / "profile_export_aiperf.json").read_text())


def summary(name: str, result: dict[str, Any]) -> str:
    def metric(key: str, stat: str) -> float:
        return float(result[key][stat]) if key in result else float("nan")

    errors = int(metric("error_request_count", "avg")) if "error_request_count" in result else 0
    return (f"{name}: {metric('request_throughput', 'avg'):.1f} req/s, TTFT p50 "
            f"{metric('time_to_first_token', 'p50'):.2f} ms, latency p50 {metric('request_latency', 'p50'):.2f} ms, "
            f"errors {errors}")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rig", type=Path, default=RIG)
    parser.add_argument("--rig-python", required=True)
    parser.add_argument("--aiperf-python", required=True, help="the Python of a venv that has aiperf")
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--stream", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "hf"
        local_tokenizer(args.aiperf_python, home)
        env = {**os.environ, "HF_HOME": str(home), "HF_HUB_OFFLINE": "1"}
        with rig_mock(args.rig_python, "--tokens", "64", rig=args.rig) as upstream:
            mock = aiperf(args.aiperf_python, env, upstream.removesuffix("/v1"), "chat", args, Path(tmp) / "mock")
            flags = ["--db", f"sqlite:///{tmp}/a.db", "--no-embedded", "--no-simulator", "--upstream", upstream]
            with responsa_server(*flags, pin=1) as url:
                served = aiperf(args.aiperf_python, env, url, "responses", args, Path(tmp) / "responsa")
    mode = "streaming" if args.stream else "JSON"
    print(f"AIPerf, {mode}, c={args.concurrency}, {args.requests} requests")
    print(summary("the mock alone (chat)", mock))
    print(summary("responsa (responses)", served))
    print(f"responsa / the mock: {served['request_throughput']['avg'] / mock['request_throughput']['avg']:.1%}")


if __name__ == "__main__":
    main()
