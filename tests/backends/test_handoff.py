"""The embedded model's handoff from its inference thread to the event loop: every message arrives,
in order, however the two race; once the taker has gone, the producer is told to stop."""

from __future__ import annotations

import asyncio
import threading

from responsa.backends.llama_cpp._handoff import Handoff


def test_messages_from_another_thread_arrive_in_order() -> None:
    async def main() -> list[int]:
        abandoned = threading.Event()
        handoff: Handoff[int] = Handoff(asyncio.get_running_loop(), abandoned)

        def produce() -> None:
            for number in range(5000):
                handoff.put(number)

        producer = threading.Thread(target=produce)
        producer.start()
        taken = [await handoff.get()]
        while len(taken) < 5000:  # both ways of taking, as the backend's stream does
            found = handoff.get_nowait()
            taken.append(found if found is not None else await handoff.get())
        producer.join()
        assert not abandoned.is_set()
        return taken

    assert asyncio.run(main()) == list(range(5000))


def test_a_message_after_the_taker_left_tells_the_producer_to_stop() -> None:
    async def main() -> tuple[bool, bool]:
        abandoned = threading.Event()
        handoff: Handoff[str] = Handoff(asyncio.get_running_loop(), abandoned)
        handoff.put("token")
        await asyncio.sleep(0)
        before = abandoned.is_set()
        handoff.close()
        threading.Thread(target=handoff.put, args=("late",)).start()
        for _ in range(100):
            if abandoned.is_set():
                break
            await asyncio.sleep(0.01)
        return before, abandoned.is_set() and handoff.get_nowait() is None

    assert asyncio.run(main()) == (False, True)


def test_a_waiting_taker_is_cancelled_cleanly() -> None:
    async def main() -> object:
        handoff: Handoff[int] = Handoff(asyncio.get_running_loop(), threading.Event())
        waiting = asyncio.ensure_future(handoff.get())
        await asyncio.sleep(0)
        waiting.cancel()
        try:
            await waiting
        except asyncio.CancelledError:
            pass
        handoff.put(7)  # a later message still reaches a later get
        return await asyncio.wait_for(handoff.get(), 5)

    assert asyncio.run(main()) == 7
