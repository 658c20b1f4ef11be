"""The webhook deliverer over a real store (SQLite), its sender at the network's edge replaced by one that
records: each due delivery sent once, a failure retried after the first of ``RETRY_DELAYS``, a slow
receiver holding at most ``PER_ENDPOINT`` of the sends while another endpoint's events go on."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import pytest

from responsa.engine import WebhookDeliverer
from responsa.engine.webhooks._deliverer import PER_ENDPOINT, RETRY_DELAYS
from responsa.external import Attempt
from responsa.store import SqlStore, WebhookEndpointRow, WebhookRepository

pytestmark = pytest.mark.anyio


class RecordingSender:
    """Answers each send as its endpoint's URL says (``/ok``, ``/fail``, ``/slow`` waits for ``release``)."""

    timeout = 5.0

    def __init__(self) -> None:
        self.sent: list[tuple[str, str]] = []
        self.in_flight: dict[str, int] = {}
        self.most_in_flight: dict[str, int] = {}
        self.release = anyio.Event()

    async def send(self, url: str, body: str, message_id: str, secrets_: tuple[str, ...]) -> Attempt:
        self.sent.append((url, message_id))
        self.in_flight[url] = self.in_flight.get(url, 0) + 1
        self.most_in_flight[url] = max(self.most_in_flight.get(url, 0), self.in_flight[url])
        try:
            if url.endswith("/slow"):
                await self.release.wait()
            delivered = not url.endswith("/fail")
            return Attempt(delivered, 200 if delivered else 500, None if delivered else "HTTP 500")
        finally:
            self.in_flight[url] -= 1


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
async def outbox(tmp_path: Path) -> AsyncIterator[WebhookRepository]:
    store = SqlStore(f"sqlite:///{tmp_path / 'hooks.db'}")
    await store.migrate()
    try:
        yield store.webhooks()
    finally:
        await store.aclose()


async def _endpoint(outbox: WebhookRepository, name: str) -> str:
    now = int(time.time())
    row = WebhookEndpointRow(id=f"wh_{name}", name=name, url=f"https://hooks.example/{name}",
                             event_types=["response.completed"], secret="whsec_x", created_at=now, updated_at=now)  # fmt: skip
    await outbox.create_endpoint(row)
    return row.id


async def _until(check: object, seconds: float = 10) -> None:
    with anyio.fail_after(seconds):
        while not check():  # type: ignore[operator]
            await anyio.sleep(0.02)


async def test_each_delivery_is_sent_once_and_a_failure_waits_for_its_retry(outbox: WebhookRepository) -> None:
    ok, failing = await _endpoint(outbox, "ok"), await _endpoint(outbox, "fail")
    await outbox.enqueue(ok, "response.completed", "{}", "d_ok")
    await outbox.enqueue(failing, "response.completed", "{}", "d_fail")
    sender = RecordingSender()
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(WebhookDeliverer(outbox, sender).serve)  # type: ignore[arg-type]
        await _until(lambda: len(sender.sent) == 2)

        async def recorded() -> bool:
            return all(d is not None and d.attempts == 1 for d in
                       [await outbox.delivery("d_ok"), await outbox.delivery("d_fail")])  # fmt: skip

        with anyio.fail_after(10):
            while not await recorded():
                await anyio.sleep(0.02)
        await anyio.sleep(0.6)  # past one more look at the outbox (POLL): nothing is due again yet
        tasks.cancel_scope.cancel()
    assert sorted(message for _url, message in sender.sent) == ["d_fail", "d_ok"]
    done, failed = await outbox.delivery("d_ok"), await outbox.delivery("d_fail")
    assert done is not None and done.state == "delivered" and done.delivered_at is not None
    assert failed is not None and failed.state != "delivered" and failed.last_status_code == 500
    assert failed.next_attempt_at >= failed.created_at + RETRY_DELAYS[0] - 0.5  # tried again later, not at once


async def test_a_slow_receiver_holds_only_its_share(outbox: WebhookRepository) -> None:
    slow, ok = await _endpoint(outbox, "slow"), await _endpoint(outbox, "ok")
    for index in range(PER_ENDPOINT + 3):
        await outbox.enqueue(slow, "response.completed", "{}", f"d_slow_{index}")
    sender = RecordingSender()
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(WebhookDeliverer(outbox, sender, concurrency=4).serve)  # type: ignore[arg-type]
        await _until(lambda: sender.in_flight.get("https://hooks.example/slow") == PER_ENDPOINT)
        await outbox.enqueue(ok, "response.completed", "{}", "d_ok")  # another endpoint's event goes on
        await _until(lambda: ("https://hooks.example/ok", "d_ok") in sender.sent)
        sender.release.set()
        await _until(lambda: len(sender.sent) == PER_ENDPOINT + 4)
        tasks.cancel_scope.cancel()
    assert sender.most_in_flight["https://hooks.example/slow"] == PER_ENDPOINT
