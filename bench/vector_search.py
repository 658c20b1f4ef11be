"""Vector stores: ingestion rate and keyword search latency, through the HTTP API of a `responsa
serve` process on loopback (no model service: search runs on the store's own full-text index).

Synthetic documents are drawn from a 20,000-word vocabulary with Zipf-like frequencies (as prose
is), cut into chunks of 100 tokens (static chunking, no overlap). The script ingests 10,000 chunks
and reports the rate, grows the store to --chunks, then times --queries searches of two or three
words (max_num_results 10), one at a time.

    python bench/vector_search.py                       # SQLite, 100,000 chunks
    python bench/vector_search.py --db postgresql://postgres@127.0.0.1:5432/bench
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from pathlib import Path

import httpx
from _server import responsa_server

CHUNK_TOKENS = 100
CHUNKS_PER_FILE = 500
VOCABULARY = 20_000


def words(rng: random.Random) -> list[str]:
    return [f"w{rng.randrange(VOCABULARY):x}{'abcdefgh'[n % 8]}" for n in range(VOCABULARY)]


def document(rng: random.Random, vocabulary: list[str], weights: list[float], chunks: int) -> bytes:
    tokens = rng.choices(vocabulary, weights=weights, k=chunks * CHUNK_TOKENS)
    return " ".join(tokens).encode()


def ingest(http: httpx.Client, store: str, rng: random.Random, vocabulary: list[str], weights: list[float],
           chunks: int) -> float:  # fmt: skip
    """Upload and attach documents holding ``chunks`` chunks as one batch; seconds until all are searchable."""
    file_ids = []
    for start in range(0, chunks, CHUNKS_PER_FILE):
        data = document(rng, vocabulary, weights, min(CHUNKS_PER_FILE, chunks - start))
        upload = http.post("/v1/files", files={"file": ("doc.txt", data)}, data={"purpose": "assistants"})
        file_ids.append(upload.raise_for_status().json()["id"])
    chunking = {"type": "static", "static": {"max_chunk_size_tokens": CHUNK_TOKENS, "chunk_overlap_tokens": 0}}
    started = time.perf_counter()
    batch = http.post(f"/v1/vector_stores/{store}/file_batches", json={"file_ids": file_ids,
                                                                      "chunking_strategy": chunking})  # fmt: skip
    batch_id = batch.raise_for_status().json()["id"]
    while http.get(f"/v1/vector_stores/{store}/file_batches/{batch_id}").json()["status"] == "in_progress":
        time.sleep(0.05)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--db", help="store URL (default: a new SQLite file)")
    parser.add_argument("--chunks", type=int, default=100_000, help="chunks in the store when searching")
    parser.add_argument("--queries", type=int, default=300)
    args = parser.parse_args()
    rng = random.Random(7)
    vocabulary = words(rng)
    weights = [1 / (rank + 1) for rank in range(VOCABULARY)]
    with tempfile.TemporaryDirectory() as folder:
        db = args.db or f"sqlite:///{Path(folder) / 'bench.db'}"
        with responsa_server("--no-embedded", "--db", db) as url, httpx.Client(base_url=url, timeout=600) as http:
            store = http.post("/v1/vector_stores", json={"name": "bench"}).raise_for_status().json()["id"]
            first = ingest(http, store, rng, vocabulary, weights, 10_000)
            print(f"store: {db.split(':')[0]}; chunks of {CHUNK_TOKENS} tokens, {VOCABULARY} words")
            print(f"ingest 10,000 chunks: {first:.1f} s = {10_000 / first:,.0f} chunks/s "
                  f"({10_000 * CHUNK_TOKENS / first:,.0f} tokens/s), extraction, chunking and indexing")  # fmt: skip
            rest = args.chunks - 10_000
            if rest > 0:
                more = ingest(http, store, rng, vocabulary, weights, rest)
                print(f"ingest {rest:,} more: {more:.1f} s = {rest / more:,.0f} chunks/s")
            latencies, hits = [], []
            for _ in range(args.queries):
                query = " ".join(rng.choice(vocabulary[: VOCABULARY // 4]) for _ in range(rng.choice((2, 3))))
                started = time.perf_counter()
                found = http.post(f"/v1/vector_stores/{store}/search", json={"query": query, "max_num_results": 10})
                latencies.append((time.perf_counter() - started) * 1000)
                hits.append(len(found.raise_for_status().json()["data"]))
            cuts = statistics.quantiles(latencies, n=100)
            print(f"search at {args.chunks:,} chunks, {args.queries} queries of 2-3 words, top 10, over HTTP: "
                  f"p50 {statistics.median(latencies):.1f} ms, p95 {cuts[94]:.1f} ms, p99 {cuts[98]:.1f} ms; "
                  f"{statistics.mean(hits):.1f} results a query")  # fmt: skip


if __name__ == "__main__":
    main()
