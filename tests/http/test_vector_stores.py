"""``/v1/vector_stores`` through the openai SDK on SQLite and PostgreSQL: files of every supported type
(a real PDF included) ingested in the background, keyword search with scores, attribute filters and a
score threshold, failures reported on the file, deletion that removes chunks, tenants kept apart."""

from __future__ import annotations

import json
import time
import uuid

import openai
import pytest

from responsa.config import ApiKey
from tests.conftest import LiveServer, sqlite_server
from tests.in_process import in_process_client  # noqa: F401  # client: the app in process


def make_pdf(text: str) -> bytes:
    """A one-page PDF showing ``text`` (Helvetica), with a correct cross-reference table."""
    stream = f"BT /F1 12 Tf 72 720 Td ({text}) Tj ET".encode()
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n%s\nendstream" % (len(stream), stream),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


DOCUMENTS = {
    "balloons.pdf": make_pdf("Helium balloons rise because helium is lighter than air"),
    "tides.md": b"# Tides\n\nThe moon's gravity pulls the oceans, which makes the tides.",
    "volcano.html": b"<html><script>var lava = 1;</script><p>Volcanoes erupt when magma reaches the surface.</p></html>",
    "bees.json": json.dumps({"fact": "Honeybees communicate with a waggle dance"}).encode(),
    "trains.txt": b"Steam trains were powered by coal fires heating water in a boiler.",
}


def _wait_done(client: openai.OpenAI, vector_store_id: str) -> openai.types.VectorStore:
    deadline = time.monotonic() + 30
    while (store := client.vector_stores.retrieve(vector_store_id)).file_counts.in_progress:
        assert time.monotonic() < deadline, "ingestion did not finish"
        time.sleep(0.05)
    return store


def test_ingest_every_type_and_search(client: openai.OpenAI) -> None:
    files = {name: client.files.create(file=(name, data), purpose="assistants") for name, data in DOCUMENTS.items()}
    store = client.vector_stores.create(name="facts", file_ids=[f.id for f in files.values()], metadata={"k": "v"})
    assert store.object == "vector_store" and store.id.startswith("vs_") and store.name == "facts"
    assert store.file_counts.total == 5 and store.metadata == {"k": "v"}
    store = _wait_done(client, store.id)
    assert store.status == "completed" and store.file_counts.completed == 5 and store.usage_bytes > 0

    for query, name, word in [
        ("why do helium balloons rise", "balloons.pdf", "lighter"),
        ("what makes the tides", "tides.md", "gravity"),
        ("magma eruption volcanoes", "volcano.html", "surface"),
        ("how do honeybees communicate", "bees.json", "waggle"),
        ("steam trains coal", "trains.txt", "boiler"),
    ]:
        results = client.vector_stores.search(store.id, query=query, max_num_results=3).data
        assert results and results[0].filename == name and results[0].file_id == files[name].id, query
        assert 0 < results[0].score <= 1 and word in results[0].content[0].text
    assert "lava" not in client.vector_stores.search(store.id, query="lava volcanoes").data[0].content[0].text
    assert client.vector_stores.search(store.id, query="quantum chromodynamics").data == []
    strict = client.vector_stores.search(store.id, query="tides", ranking_options={"score_threshold": 0.999})
    assert strict.data == []

    listed = client.vector_stores.files.list(store.id)
    assert {f.id for f in listed} == {f.id for f in files.values()}
    assert all(f.status == "completed" and f.chunking_strategy.type == "static" for f in listed)

    # A deleted file leaves the store with its chunks.
    client.files.delete(files["tides.md"].id)
    assert client.vector_stores.search(store.id, query="tides moon").data == []
    assert client.vector_stores.retrieve(store.id).file_counts.total == 4
    client.vector_stores.files.delete(files["trains.txt"].id, vector_store_id=store.id)
    assert client.vector_stores.search(store.id, query="steam trains").data == []
    assert client.vector_stores.delete(store.id).deleted
    with pytest.raises(openai.NotFoundError):
        client.vector_stores.retrieve(store.id)


def test_attributes_filter_results_and_chunking_is_configurable(client: openai.OpenAI) -> None:
    topic = uuid.uuid4().hex[:8]
    store = client.vector_stores.create(name="filtered")
    for year, region in [(2023, "north"), (2024, "south"), (2025, "north")]:
        upload = client.files.create(
            file=(f"r{year}.txt", f"Rainfall report {topic} {year}".encode()), purpose="assistants"
        )
        client.vector_stores.files.create(store.id, file_id=upload.id, attributes={"year": year, "region": region})
    long_text = " ".join(f"word{n}" for n in range(500)).encode()
    big = client.files.create(file=("long.txt", long_text), purpose="assistants")
    linked = client.vector_stores.files.create(
        store.id, file_id=big.id,
        chunking_strategy={"type": "static", "static": {"max_chunk_size_tokens": 100, "chunk_overlap_tokens": 50}},
    )  # fmt: skip
    assert linked.status == "in_progress"
    _wait_done(client, store.id)

    def years(**filters: object) -> list[str]:
        found = client.vector_stores.search(store.id, query=f"rainfall {topic}", **filters).data  # type: ignore[arg-type]
        return sorted(result.filename for result in found)

    assert years() == ["r2023.txt", "r2024.txt", "r2025.txt"]
    assert years(filters={"type": "eq", "key": "region", "value": "north"}) == ["r2023.txt", "r2025.txt"]
    both = {
        "type": "and",
        "filters": [{"type": "gte", "key": "year", "value": 2024}, {"type": "eq", "key": "region", "value": "north"}],
    }
    assert years(filters=both) == ["r2025.txt"]
    assert years(filters={"type": "in", "key": "year", "value": [2023, 2024]}) == ["r2023.txt", "r2024.txt"]
    with pytest.raises(openai.BadRequestError):
        client.vector_stores.search(store.id, query="x", filters={"type": "near", "key": "year"})  # type: ignore[typeddict-item]
    # 500 tokens in windows of 100 stepping by 50: 9 chunks, each found by its own words.
    assert (
        client.vector_stores.search(store.id, query="word450", max_num_results=50)
        .data[0]
        .content[0]
        .text.startswith("word400")
    )
    updated = client.vector_stores.files.update(file_id=big.id, vector_store_id=store.id, attributes={"kind": "long"})
    assert updated.attributes == {"kind": "long"}
    with pytest.raises(openai.BadRequestError):
        client.vector_stores.files.create(
            store.id, file_id=big.id,
            chunking_strategy={"type": "static", "static": {"max_chunk_size_tokens": 100, "chunk_overlap_tokens": 80}},
        )  # fmt: skip


def test_an_unreadable_file_fails_with_its_reason(client: openai.OpenAI) -> None:
    binary = client.files.create(file=("blob.txt", b"\x00\x01\xff\xfe" * 100), purpose="assistants")
    store = client.vector_stores.create(name="bad", file_ids=[binary.id])
    store = _wait_done(client, store.id)
    assert store.file_counts.failed == 1
    failed = client.vector_stores.files.retrieve(binary.id, vector_store_id=store.id)
    assert failed.status == "failed" and failed.last_error and failed.last_error.code == "unsupported_file"
    with pytest.raises(openai.NotFoundError):
        client.vector_stores.create(name="x", file_ids=["file-missing"])


@pytest.fixture(scope="module")
def two_tenants(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    keys = (ApiKey("sk-alice", "alice"), ApiKey("sk-bob", "bob"))
    yield from sqlite_server(tmp_path_factory, "vs-tenants", api_keys=keys, embedded=False)


def test_tenants_see_only_their_own_stores(two_tenants: LiveServer) -> None:
    with (
        openai.OpenAI(base_url=two_tenants.v1, api_key="sk-alice", max_retries=0) as alice,
        openai.OpenAI(base_url=two_tenants.v1, api_key="sk-bob", max_retries=0) as bob,
    ):
        upload = alice.files.create(file=("a.txt", b"alice private notes"), purpose="assistants")
        store = alice.vector_stores.create(name="mine", file_ids=[upload.id])
        assert store.id not in [s.id for s in bob.vector_stores.list()]
        for call in (lambda: bob.vector_stores.retrieve(store.id), lambda: bob.vector_stores.search(store.id, query="notes"),
                     lambda: bob.vector_stores.delete(store.id), lambda: bob.vector_stores.files.list(store.id)):  # fmt: skip
            with pytest.raises(openai.NotFoundError):
                call()
        theirs = bob.vector_stores.create(name="theirs")
        with pytest.raises(openai.NotFoundError):  # bob cannot attach alice's file
            bob.vector_stores.files.create(theirs.id, file_id=upload.id)


def test_file_batches(client: openai.OpenAI) -> None:
    ids = [
        client.files.create(
            file=(f"b{n}.txt", f"Batch document {n} about lighthouses".encode()), purpose="assistants"
        ).id
        for n in range(3)
    ]
    store = client.vector_stores.create(name="batches")
    batch = client.vector_stores.file_batches.create(store.id, file_ids=ids, attributes={"source": "batch"})
    assert batch.object == "vector_store.files_batch" and batch.id.startswith("vsfb_") and batch.file_counts.total == 3
    deadline = time.monotonic() + 30
    while (
        batch := client.vector_stores.file_batches.retrieve(batch.id, vector_store_id=store.id)
    ).status == "in_progress":
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert batch.status == "completed" and batch.file_counts.completed == 3
    listed = list(client.vector_stores.file_batches.list_files(batch.id, vector_store_id=store.id))
    assert sorted(f.id for f in listed) == sorted(ids) and all(f.attributes == {"source": "batch"} for f in listed)
    assert len(client.vector_stores.search(store.id, query="lighthouses").data) == 3

    other = client.files.create(file=("own.txt", b"A file with its own attributes"), purpose="assistants")
    second = client.vector_stores.file_batches.create(store.id, files=[{"file_id": other.id, "attributes": {"n": 1}}])
    cancelled = client.vector_stores.file_batches.cancel(second.id, vector_store_id=store.id)
    assert cancelled.status == "cancelled"
    # Ingested before the cancel arrived, or cancelled: never left in progress.
    assert client.vector_stores.files.retrieve(other.id, vector_store_id=store.id).status in ("completed", "cancelled")
    with pytest.raises(openai.BadRequestError):
        client.vector_stores.file_batches.create(store.id, file_ids=[])
    with pytest.raises(openai.NotFoundError):
        client.vector_stores.file_batches.retrieve("vsfb_missing", vector_store_id=store.id)


@pytest.fixture(scope="module")
def sweeping(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    """A server whose retention sweep runs every quarter second (a one-second conversation TTL)."""
    yield from sqlite_server(tmp_path_factory, "vs-sweep", embedded=False, conversation_store_ttl_secs=1)


def test_an_expired_store_is_shown_expired_then_removed(sweeping: LiveServer) -> None:
    import sqlite3

    with openai.OpenAI(base_url=sweeping.v1, api_key="unused", max_retries=0) as client:
        upload = client.files.create(file=("x.txt", b"ephemeral knowledge"), purpose="assistants")
        store = client.vector_stores.create(
            name="short", file_ids=[upload.id], expires_after={"anchor": "last_active_at", "days": 1}
        )
        assert store.expires_after and store.expires_after.days == 1
        assert store.expires_at == store.last_active_at + 86400
        database = sweeping.settings.db_url.removeprefix("sqlite:///")
        with sqlite3.connect(database) as conn:
            conn.execute(
                "UPDATE vector_stores SET last_active_at = last_active_at - 2 * 86400 WHERE id = ?", (store.id,)
            )
        deadline = time.monotonic() + 10
        while True:
            try:
                assert client.vector_stores.retrieve(store.id).status == "expired"
            except openai.NotFoundError:
                break  # swept
            assert time.monotonic() < deadline, "the expired store was never swept"
            time.sleep(0.05)
        with sqlite3.connect(database) as conn:
            assert conn.execute("SELECT count(*) FROM chunks WHERE vector_store_id = ?", (store.id,)).fetchone() == (0,)
        assert client.files.retrieve(upload.id).id == upload.id  # the file itself stays
