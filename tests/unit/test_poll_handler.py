"""The kazoo handler that waits with poll(2) answers every wait exactly as kazoo's stock ``selector_select`` does.

Real sockets in each state a connection goes through (idle, data waiting, send buffer full, peer closed, closed
here); the stock function is the reference, so a difference in either direction fails.
"""

from __future__ import annotations

import contextlib
import socket
import time
from collections.abc import Iterator

import pytest
from kazoo.handlers.utils import selector_select

from topic_operator.zookeeper.poll_handler import PollingThreadingHandler

HANDLER = PollingThreadingHandler()


@pytest.fixture
def pair() -> Iterator[tuple[socket.socket, socket.socket]]:
    here, there = socket.socketpair()
    here.setblocking(False)
    yield here, there
    here.close()
    there.close()


def _both(rlist: list[object], wlist: list[object]) -> None:
    assert HANDLER.select(rlist, wlist, [], 0) == selector_select(rlist, wlist, [], 0)


def test_idle_socket_is_writable_not_readable(pair: tuple[socket.socket, socket.socket]) -> None:
    here, _ = pair
    assert HANDLER.select([here], [], [], 0) == ([], [], [])
    assert HANDLER.select([], [here], [], 0) == ([], [here], [])
    _both([here], [])
    _both([], [here])
    _both([here], [here])


def test_waiting_data_makes_it_readable(pair: tuple[socket.socket, socket.socket]) -> None:
    here, there = pair
    there.sendall(b"reply")
    assert HANDLER.select([here], [], [], 0) == ([here], [], [])
    _both([here], [])
    _both([here], [here])  # both ready: reported as readable only, as the stock function does
    _both([], [here])


def test_full_send_buffer_is_not_writable(pair: tuple[socket.socket, socket.socket]) -> None:
    here, _ = pair
    with contextlib.suppress(BlockingIOError):
        while True:
            here.send(b"x" * 65536)
    assert HANDLER.select([], [here], [], 0) == ([], [], [])
    _both([], [here])


def test_peer_closed_counts_as_ready(pair: tuple[socket.socket, socket.socket]) -> None:
    here, there = pair
    there.close()
    assert HANDLER.select([here], [], [], 0) == ([here], [], [])
    _both([here], [])
    _both([], [here])
    _both([here], [here])


def test_the_timeout_is_in_seconds(pair: tuple[socket.socket, socket.socket]) -> None:
    here, _ = pair
    started = time.monotonic()
    assert HANDLER.select([here], [], [], 0.2) == ([], [], [])
    assert 0.15 <= time.monotonic() - started < 2.0


def test_bad_arguments_are_refused_as_the_stock_function_refuses_them(
    pair: tuple[socket.socket, socket.socket],
) -> None:
    here, _ = pair
    for timeout in (-1, "1"):
        for select in (HANDLER.select, selector_select):
            with pytest.raises((ValueError, TypeError)):
                select([here], [], [], timeout)
    closed = socket.socket()
    closed.close()
    for select in (HANDLER.select, selector_select):
        with pytest.raises(TypeError, match="Invalid file descriptor"):
            select([closed], [], [], 0)
