"""Webhooks through the openai SDK (``client.webhooks``): endpoints managed as OpenAI's, events of
background responses and batches signed so that ``client.webhooks.unwrap`` verifies them, retried
after a failure with the same ``webhook-id``, rotated secrets, and the egress policy attacked."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any

import openai
import pytest
from openai import InvalidWebhookSignatureError

from responsa.config import ApiKey, Settings
from tests.conftest import LiveServer, serve
from tests.webhook_receiver import Receiver


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    db = tmp_path_factory.mktemp("webhooks") / "r.db"
    with serve(Settings(db_url=f"sqlite:///{db}")) as server:
        yield server


@pytest.fixture
def sdk(live: LiveServer) -> Iterator[openai.OpenAI]:
    with openai.OpenAI(base_url=live.v1, api_key="unused", max_retries=0) as client:
        yield client


def test_endpoints_are_managed_as_openai_does(sdk: openai.OpenAI) -> None:
    with Receiver() as receiver:
        made = sdk.webhooks.create(name="ops", url=receiver.url, event_types=["response.completed"])
        assert made.signing_secret.startswith("whsec_") and made.signing_secret_hint
        assert made.signing_secret_hint.endswith(made.signing_secret[-4:])
        got = sdk.webhooks.retrieve(made.id)
        assert not hasattr(got, "signing_secret") and got.url == receiver.url and got.updated_at == made.updated_at
        updated = sdk.webhooks.update(made.id, name="ops2", event_types=["batch.completed", "response.failed"])
        assert (updated.name, updated.event_types) == ("ops2", ["batch.completed", "response.failed"])
        assert made.id in [endpoint.id for endpoint in sdk.webhooks.list()]
        assert "batch.expired" in sdk.webhooks.event_types.list().data
        rotated = sdk.webhooks.rotate_secret(made.id)
        assert rotated.signing_secret != made.signing_secret
        tested = sdk.webhooks.test(made.id, event_type="batch.completed")
        assert (tested.status_code, tested.event_type, tested.webhook_endpoint_id) == (200, "batch.completed", made.id)
        headers, body = receiver.next()
        event = sdk.webhooks.unwrap(body, headers, secret=rotated.signing_secret)
        assert event.type == "batch.completed"
        with pytest.raises(InvalidWebhookSignatureError):
            sdk.webhooks.unwrap(body, headers, secret=made.signing_secret)  # the old secret was not kept
        deleted = sdk.webhooks.delete(made.id)
        assert deleted.deleted and deleted.id == made.id
        with pytest.raises(openai.NotFoundError):
            sdk.webhooks.retrieve(made.id)
        with pytest.raises(openai.BadRequestError) as unknown:
            sdk.webhooks.create(name="x", url=receiver.url, event_types=["video.completed"])
        assert unknown.value.body["param"] == "event_types"  # type: ignore[index]


def test_a_background_response_and_a_batch_announce_their_end_signed(sdk: openai.OpenAI) -> None:
    with Receiver() as receiver:
        endpoint = sdk.webhooks.create(
            name="all", url=receiver.url, event_types=["response.completed", "batch.completed"]
        )
        response = sdk.responses.create(model="sim", input="hello", background=True)
        headers, body = receiver.next()
        event = sdk.webhooks.unwrap(body, headers, secret=endpoint.signing_secret)
        assert event.type == "response.completed" and event.data.id == response.id and event.id.startswith("evt_")
        assert sdk.responses.retrieve(response.id).status == "completed"
        sdk.responses.create(model="sim", input="not background")  # no event: only background responses announce
        text = json.dumps(
            {"custom_id": "a", "method": "POST", "url": "/v1/responses", "body": {"model": "sim", "input": "x"}}
        )
        file = sdk.files.create(file=("in.jsonl", io.BytesIO(text.encode())), purpose="batch")
        batch = sdk.batches.create(input_file_id=file.id, endpoint="/v1/responses", completion_window="24h")
        headers, body = receiver.next()
        event = sdk.webhooks.unwrap(body, headers, secret=endpoint.signing_secret)
        assert event.type == "batch.completed" and event.data.id == batch.id
        assert sdk.batches.retrieve(batch.id).status == "completed"
        with pytest.raises(InvalidWebhookSignatureError):
            sdk.webhooks.unwrap(body.replace(batch.id, "batch_forged"), headers, secret=endpoint.signing_secret)
        sdk.webhooks.delete(endpoint.id)


def test_a_failed_delivery_is_retried_with_the_same_id_and_logged(sdk: openai.OpenAI) -> None:
    with Receiver(statuses=[503]) as receiver:
        endpoint = sdk.webhooks.create(name="flaky", url=receiver.url, event_types=["response.completed"])
        sdk.responses.create(model="sim", input="hello", background=True)
        first, _ = receiver.next()
        second, body = receiver.next()
        assert first["webhook-id"] == second["webhook-id"]
        sdk.webhooks.unwrap(body, second, secret=endpoint.signing_secret)
        entry = _log(sdk, endpoint.id, lambda entry: entry["status"] == "delivered")
        assert (entry["attempts"], entry["last_status_code"], entry["id"]) == (2, 200, first["webhook-id"])
        sdk.webhooks.delete(endpoint.id)


def test_a_secret_kept_for_a_day_signs_beside_the_new_one(sdk: openai.OpenAI) -> None:
    with Receiver() as receiver:
        endpoint = sdk.webhooks.create(name="r", url=receiver.url, event_types=["response.completed"])
        rotated = sdk.webhooks.rotate_secret(endpoint.id, keep_old_secret_active_for_24_hours=True)
        sdk.webhooks.test(endpoint.id, event_type="response.completed")
        headers, body = receiver.next()
        assert len(headers["webhook-signature"].split()) == 2
        for secret in (endpoint.signing_secret, rotated.signing_secret):
            sdk.webhooks.unwrap(body, headers, secret=secret)
        sdk.webhooks.delete(endpoint.id)


@pytest.mark.parametrize(
    "url",
    [
        "http://169.254.169.254/latest/meta-data",
        "http://[fe80::1]/",
        "http://metadata.google.internal/",
        "file:///etc/passwd",
        "http://0.0.0.0:9/",
        # The metadata address carried in IPv6 forms: mapped, compatible, NAT64 (well-known prefix, and
        # the local-use prefix at /48 and /96), 6to4, Teredo (as the client's address, obfuscated).
        "http://[::ffff:169.254.169.254]/",
        "http://[::169.254.169.254]/",
        "http://[64:ff9b::a9fe:a9fe]/",
        "http://[64:ff9b:1:a9fe:a9:fe00::]/",
        "http://[64:ff9b:1::a9fe:a9fe]/",
        "http://[2002:a9fe:a9fe::]/",
        "http://[2001:0:808:808::5601:5601]/",
    ],
)
def test_webhook_urls_pass_the_egress_policy(sdk: openai.OpenAI, url: str) -> None:
    with pytest.raises(openai.BadRequestError) as refused:
        sdk.webhooks.create(name="evil", url=url, event_types=["response.completed"])
    assert refused.value.body["param"] == "url"  # type: ignore[index]


def test_an_ipv6_address_carrying_a_public_ipv4_one_is_judged_as_that_address(sdk: openai.OpenAI) -> None:
    """The policy judges the address a form carries, not the form: NAT64 of a public address is public."""
    endpoint = sdk.webhooks.create(
        name="nat64", url="http://[64:ff9b::808:808]/hook", event_types=["response.completed"]
    )
    sdk.webhooks.delete(endpoint.id)


def test_with_api_keys_loopback_is_closed_unless_allowed(tmp_path_factory: pytest.TempPathFactory) -> None:
    """A tenant must not reach the server's own ports (a database, an admin page) through a webhook."""
    keys = (ApiKey("key-a", "a"),)
    for allowed, refused in (((), True), (("127.0.0.1",), False)):
        db = tmp_path_factory.mktemp("webhook-keys") / "r.db"
        settings = Settings(db_url=f"sqlite:///{db}", api_keys=keys, webhook_allow_hosts=allowed)
        with serve(settings) as server, Receiver() as receiver:
            client = openai.OpenAI(base_url=server.v1, api_key="key-a", max_retries=0)
            if refused:
                with pytest.raises(openai.BadRequestError):
                    client.webhooks.create(name="x", url=receiver.url, event_types=["response.completed"])
            else:
                assert client.webhooks.create(name="x", url=receiver.url, event_types=["response.completed"]).id


def test_a_slow_receiver_is_cut_off_and_stalls_nothing(tmp_path_factory: pytest.TempPathFactory) -> None:
    db = tmp_path_factory.mktemp("webhook-slow") / "r.db"
    import socket

    with socket.socket() as silent:  # accepts connections, never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        url = f"http://127.0.0.1:{silent.getsockname()[1]}/hook"
        with serve(Settings(db_url=f"sqlite:///{db}", webhook_timeout_secs=0.5)) as server:
            client = openai.OpenAI(base_url=server.v1, api_key="unused", max_retries=0)
            endpoint = client.webhooks.create(name="silent", url=url, event_types=["response.completed"])
            with pytest.raises(openai.BadRequestError) as unreachable:
                client.webhooks.test(endpoint.id, event_type="response.completed")
            assert "0.5s" in unreachable.value.message
            started = time.monotonic()
            response = client.responses.create(model="sim", input="hi", background=True)
            while client.responses.retrieve(response.id).status != "completed":
                time.sleep(0.02)
            assert time.monotonic() - started < 5
            entry = _log(client, endpoint.id, lambda entry: entry["attempts"] >= 1)
            assert "0.5s" in entry["last_error"] and entry["status"] == "pending"


def test_a_silent_receiver_holds_up_no_other_endpoint(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Twelve events owed to a receiver that never answers (each attempt waits out its 3 s deadline)
    hold at most two of a process's eight senders: another endpoint's event arrives meanwhile."""
    import socket

    db = tmp_path_factory.mktemp("webhook-silent") / "r.db"
    with socket.socket() as silent, Receiver() as receiver:
        silent.bind(("127.0.0.1", 0))
        silent.listen(64)
        with serve(Settings(db_url=f"sqlite:///{db}", webhook_timeout_secs=3)) as server:
            client = openai.OpenAI(base_url=server.v1, api_key="unused", max_retries=0)
            client.webhooks.create(name="silent", url=f"http://127.0.0.1:{silent.getsockname()[1]}/hook",
                                   event_types=["response.completed"])  # fmt: skip
            answers = client.webhooks.create(name="ok", url=receiver.url, event_types=["response.failed"])
            for _ in range(12):
                client.responses.create(model="sim", input="hi", background=True)
            started = time.monotonic()
            failed = client.responses.create(model="sim", input="hi", background=True,
                                             extra_headers={"x-responsa-fault": "mid_stream"})  # fmt: skip
            headers, body = receiver.next(30)
            assert client.webhooks.unwrap(body, headers, secret=answers.signing_secret).data.id == failed.id
            assert time.monotonic() - started < 2.5  # before the first silent attempts gave up


def _log(client: openai.OpenAI, endpoint_id: str, done: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
    """The endpoint's newest delivery once ``done`` says so (the log is what the test waits on)."""
    deadline = time.monotonic() + 20
    while True:
        entries = client.get(f"/webhook_endpoints/{endpoint_id}/deliveries", cast_to=dict)["data"]
        if entries and done(entries[0]):
            return entries[0]
        assert time.monotonic() < deadline, entries
        time.sleep(0.05)


def test_a_receiver_cannot_redirect_a_delivery_elsewhere(sdk: openai.OpenAI) -> None:
    """A 302 is an answer, not a place to go: the redirect's target never hears of the event."""
    import http.server
    import threading

    with Receiver() as target:

        class Redirecting(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                self.rfile.read(int(self.headers["content-length"]))
                self.send_response(302)
                self.send_header("location", target.url)
                self.send_header("content-length", "0")
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Redirecting)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        try:
            url = f"http://127.0.0.1:{server.server_address[1]}/hook"
            endpoint = sdk.webhooks.create(name="redirect", url=url, event_types=["response.completed"])
            sdk.responses.create(model="sim", input="hi", background=True)
            entry = _log(sdk, endpoint.id, lambda entry: entry["attempts"] >= 1)
            assert (entry["status"], entry["last_status_code"]) == ("pending", 302)
            assert target.deliveries.empty()
            sdk.webhooks.delete(endpoint.id)
        finally:
            server.shutdown()
            server.server_close()


def test_an_endless_answer_is_cut_short(sdk: openai.OpenAI) -> None:
    """A receiver that answers 200 and then streams forever is read a few KiB, and the delivery ends."""
    import socket
    import threading

    stop = threading.Event()

    def endless(listener: socket.socket) -> None:
        connection, _ = listener.accept()
        with connection:
            connection.recv(65536)
            connection.sendall(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n")
            while not stop.is_set():
                try:
                    connection.sendall(b"4000\r\n" + b"x" * 0x4000 + b"\r\n")
                except OSError:
                    return

    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        threading.Thread(target=endless, args=(listener,), daemon=True).start()
        url = f"http://127.0.0.1:{listener.getsockname()[1]}/hook"
        endpoint = sdk.webhooks.create(name="endless", url=url, event_types=["response.completed"])
        sdk.responses.create(model="sim", input="hi", background=True)
        entry = _log(sdk, endpoint.id, lambda entry: entry["status"] != "sending" and entry["attempts"] >= 1)
        stop.set()
        assert (entry["status"], entry["last_status_code"]) == ("delivered", 200)
        sdk.webhooks.delete(endpoint.id)


def test_a_static_endpoint_from_the_command_line(tmp_path_factory: pytest.TempPathFactory) -> None:
    """``--webhook-url`` and ``--webhook-secret``: a single-tenant server sends every event there,
    signed with the secret given; the endpoint is listed as ``whep_static``."""
    from responsa.external import new_secret

    secret = new_secret()
    db = tmp_path_factory.mktemp("webhook-static") / "r.db"
    with Receiver() as receiver, serve(Settings(db_url=f"sqlite:///{db}", webhook_url=receiver.url,
                                                webhook_secret=secret)) as server:  # fmt: skip
        client = openai.OpenAI(base_url=server.v1, api_key="unused", max_retries=0)
        (static,) = client.webhooks.list().data
        assert (static.id, static.url) == ("whep_static", receiver.url) and "batch.expired" in static.event_types
        response = client.responses.create(model="sim", input="hi", background=True)
        headers, body = receiver.next()
        event = client.webhooks.unwrap(body, headers, secret=secret)
        assert (event.type, event.data.id) == ("response.completed", response.id)
    command = [sys.executable, "-m", "responsa.cli", "serve", "--port", "0", "--db", f"sqlite:///{db}",
               "--no-embedded", "--webhook-url", "http://127.0.0.1:9/hook"]  # fmt: skip
    refused = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert refused.returncode != 0 and "--webhook-url needs --webhook-secret" in refused.stdout + refused.stderr
