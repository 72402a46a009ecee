"""Async functions' blocking calls run on their own bounded pool, with the caller's context."""

import asyncio
import contextvars
import threading

from orders import threads

ORDER = contextvars.ContextVar("order", default=None)


def test_calls_see_the_callers_context_and_run_off_the_loop():
    async def main():
        ORDER.set("acme~1")
        loop_thread = threading.get_ident()
        return await threads.off_loop(lambda: (ORDER.get(), threading.get_ident() != loop_thread,
                                               threading.current_thread().name))

    order, elsewhere, name = asyncio.run(main())
    assert (order, elsewhere) == ("acme~1", True)
    assert name.startswith("orders-offload")


def test_at_most_offload_threads_run_at_once_and_the_rest_wait():
    running, peak, lock = 0, 0, threading.Lock()
    release = threading.Event()

    def blocking():
        nonlocal running, peak
        with lock:
            running += 1
            peak = max(peak, running)
        release.wait(5)
        with lock:
            running -= 1

    async def main():
        calls = [asyncio.ensure_future(threads.off_loop(blocking))
                 for _ in range(threads.OFFLOAD_THREADS + 4)]
        while True:  # until the pool is full (no sleep-and-hope: poll the counter)
            with lock:
                if running == threads.OFFLOAD_THREADS:
                    break
            await asyncio.sleep(0)
        release.set()
        await asyncio.gather(*calls)

    asyncio.run(main())
    assert peak == threads.OFFLOAD_THREADS


def test_errors_reach_the_caller():
    def fails():
        raise LookupError("no such order")

    async def main():
        try:
            await threads.off_loop(fails)
        except LookupError as exc:
            return str(exc)

    assert asyncio.run(main()) == "no such order"
