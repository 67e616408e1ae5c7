"""The referee's side of a ``Play`` stream (proto/ttr/v1/bot_service.proto): one bidirectional
stream per game and seat, for a bot that offers it in ``StartGameResponse.play_stream``.

Both the referee (referee.match) and the compliance kit (sdk.compliance) drive bots through
it, and neither may import the other, so it sits below both; not in referee.games, whose code
has no threads and no clock (tests/games/test_purity.py).
"""

from __future__ import annotations

import contextlib
import math
import queue
import threading
import time

import grpc

from ttr.v1 import bot_service_pb2

#: What :meth:`PlayStream.ask` returns when no answer came in time.
NO_ANSWER = object()


class PlayStream:
    """One seat's ``Play`` stream for one game (proto: a bot that set ``play_stream``), as the
    referee (referee.match) and the compliance kit (sdk.compliance) drive it.

    Sync gRPC cannot read a stream with a deadline, so the caller reads the next answer itself
    and a watchdog thread cancels the stream once the decision's deadline has passed: a
    reader thread handing answers over would cost every message a thread switch (bench/README.md,
    "Wire overhead (issue 25)"). Only one answer is read at a time, so a bot that floods the
    stream is held back by gRPC's flow control.

    The watchdog sleeps until the deadline it last saw and is woken only for an earlier one.
    A decision's deadline is its start plus the move limit and the bank left, and the bank
    shrinks by no more than the time that passed, so each deadline is at least the one before:
    the first request and the close wake it, the rest of a game's requests do not. (It used
    to look at the clock every 10 ms: a hundred wake-ups a second per seat, each taking the
    interpreter lock from the game loop, and a timeout up to 10 ms late.)
    """

    def __init__(self, channel: grpc.Channel, method: str) -> None:
        self._requests: queue.SimpleQueue[bot_service_pb2.ActRequest | None] = queue.SimpleQueue()
        play = channel.stream_stream(
            method,
            request_serializer=bot_service_pb2.ActRequest.SerializeToString,
            response_deserializer=None,
        )
        self._call = play(iter(self._requests.get, None))
        self._cond = threading.Condition(threading.Lock())
        self._deadline = 0.0  #: time.monotonic() of the pending answer's deadline; 0: none
        self._wake_at = math.inf  #: when the watchdog will look next, at the latest
        self._timed_out = False
        self._closed = False
        self._ended = False  #: no more requests will be sent (:meth:`end`)
        self._watchdog = threading.Thread(target=self._watch, name="ttr-play-watchdog", daemon=True)
        self._watchdog.start()

    def _watch(self) -> None:
        with self._cond:
            while not self._closed:
                deadline = self._deadline
                now = time.monotonic()
                if deadline and now >= deadline:
                    self._timed_out = True
                    self._call.cancel()  # type: ignore[no-untyped-call]
                    return
                self._wake_at = deadline or math.inf
                self._cond.wait(deadline - now if deadline else None)

    def _set_deadline(self, deadline: float) -> None:
        """Called with the lock held: wakes the watchdog only if it would look too late."""
        self._deadline = deadline
        if deadline < self._wake_at:
            self._wake_at = deadline
            self._cond.notify()

    def ask(self, request: bot_service_pb2.ActRequest, timeout_s: float) -> object:
        """The next thing the stream brings within ``timeout_s``: an answer's bytes, the
        error that ended the stream, None (the bot ended it) or :data:`NO_ANSWER`. After
        anything but bytes the stream is over."""
        with self._cond:
            self._set_deadline(time.monotonic() + timeout_s)
        got: object
        self._requests.put(request)
        try:
            got = next(self._call)  # type: ignore[call-overload]
        except StopIteration:
            got = None
        except grpc.RpcError as e:
            got = e
        with self._cond:
            self._deadline = 0.0
            if self._timed_out:
                return NO_ANSWER  # whatever came, it came after the deadline
        return got

    def end(self, wait_s: float = 0.0) -> None:
        """No more requests: the bot has ``wait_s`` from now to end the stream, after which
        :meth:`close` cancels it. Ending every seat's stream before closing any lets the bots
        end theirs side by side (a round trip each, one after the other, cost a game about
        3 ms; bench/README.md). Idempotent: a later call keeps the first deadline."""
        if self._ended:
            return
        self._ended = True
        self._requests.put(None)  # also frees gRPC's thread waiting for the next request
        with self._cond:
            if not self._timed_out:
                self._set_deadline(time.monotonic() + wait_s)

    def close(self, wait_s: float = 0.0) -> None:
        """End the stream (:meth:`end`, unless it was) and wait for it: the bot has ``wait_s``
        to end it, then it is cancelled. The watchdog is gone when this returns."""
        self.end(wait_s)
        with contextlib.suppress(grpc.RpcError):
            for _ in self._call:
                pass  # answers nobody asked for
        with self._cond:
            self._closed = True
            self._cond.notify()
        self._watchdog.join()
