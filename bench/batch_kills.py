"""A batch killed again and again: a ``--lines``-line batch of ``/v1/responses`` lines on the simulator,
the server (its whole process tree) SIGKILLed ``--kills`` times as the batch goes on, each time once
another share of its lines has completed, and restarted on the same store. Per run: lines lost (a
``custom_id`` missing from the output), lines twice in the output, and responses stored twice (the
store holding more responses than the batch has lines: a line whose response was stored but whose
result was not, run again). Each run on a fresh store.

    python bench/batch_kills.py [--runs 10] [--lines 600] [--kills 6] [--store sqlite|postgresql] [--workers 2]
"""

from __future__ import annotations

import argparse
import io
import json
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import openai

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the drill's helpers live with the tests

from tests.conftest import fresh_store
from tests.crash_drill import kill_tree, query, serve


def _completed(client: openai.OpenAI, batch_id: str) -> tuple[str, int]:
    batch = client.batches.retrieve(batch_id)
    return batch.status, batch.request_counts.completed if batch.request_counts else 0


def one_run(kind: str, lines: int, kills: int, workers: int) -> tuple[int, int, int]:
    """(lost, twice in the output, stored twice) for one batch killed ``kills`` times."""
    with tempfile.TemporaryDirectory() as directory, fresh_store(kind, Path(directory)) as db_url:
        log = Path(directory) / "serve.log"
        process, url = serve(db_url, log, 1.0, workers)
        client = openai.OpenAI(base_url=f"{url}/v1", api_key="unused", max_retries=2)
        text = "\n".join(json.dumps({"custom_id": f"line-{i}", "method": "POST", "url": "/v1/responses",
                                     "body": {"model": "sim", "input": f"Write about item {i}.",
                                              "max_output_tokens": 16}}) for i in range(lines))  # fmt: skip
        file_id = client.files.create(file=("in.jsonl", io.BytesIO(text.encode())), purpose="batch").id
        batch_id = client.batches.create(input_file_id=file_id, endpoint="/v1/responses", completion_window="24h").id
        for kill in range(1, kills + 1):
            while _completed(client, batch_id)[1] < lines * kill // (kills + 1):
                time.sleep(0.01)
            kill_tree(process)
            process.wait()
            process, url = serve(db_url, log, 1.0, workers)
            client = openai.OpenAI(base_url=f"{url}/v1", api_key="unused", max_retries=2)
        while _completed(client, batch_id)[0] != "completed":
            time.sleep(0.1)
        batch = client.batches.retrieve(batch_id)
        assert batch.output_file_id is not None
        output = client.files.content(batch.output_file_id).text.splitlines()
        seen = Counter(json.loads(entry)["custom_id"] for entry in output)
        process.terminate()
        process.wait(30)
        stored = int(query(db_url, "SELECT count(*) FROM responses")[0][0])
        lost = lines - len(seen)
        return lost, sum(1 for count in seen.values() if count > 1), max(0, stored - lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--lines", type=int, default=600)
    parser.add_argument("--kills", type=int, default=6)
    parser.add_argument("--store", default="sqlite", choices=["sqlite", "postgresql"])
    parser.add_argument("--workers", type=int, default=1)
    args = parser.parse_args()
    print(f"{args.lines}-line batch killed {args.kills} times, {args.store}, {args.workers} worker(s)")
    print("run | lost | twice in output | stored twice")
    for run in range(1, args.runs + 1):
        lost, twice, stored_twice = one_run(args.store, args.lines, args.kills, args.workers)
        print(f"{run:3} | {lost:4} | {twice:15} | {stored_twice:12}", flush=True)


if __name__ == "__main__":
    main()
