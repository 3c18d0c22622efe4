"""A Kubernetes Service in front of several replicas, as the tests need one on 127.0.0.1: a TCP port that hands each
new connection to the next backend in turn, skipping a backend that refuses it (as the Service's endpoints drop a
pod that is gone), and counts what each backend was handed. TLS passes through untouched."""

from __future__ import annotations

import contextlib
import itertools
import selectors
import socket
import socketserver
import threading
from collections import Counter
from collections.abc import Sequence
from typing import Any

__all__ = ["RoundRobinService"]


class RoundRobinService:
    """``with RoundRobinService([port_a, port_b]) as service:`` listens on ``service.port``; ``service.handed``
    counts the connections each backend port took. Every socket operation is bounded: nothing can hang a test."""

    def __init__(self, backends: Sequence[int], *, timeout: float = 10.0) -> None:
        self.backends = list(backends)
        self.handed: Counter[int] = Counter()
        self._turn = itertools.cycle(range(len(self.backends)))
        self._lock = threading.Lock()
        self._timeout = timeout
        owner = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                owner._forward(self.request)

        self._server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.port: int = self._server.server_address[1]
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="round-robin-service", daemon=True
        )

    def __enter__(self) -> RoundRobinService:
        self._thread.start()
        return self

    def __exit__(self, *_: Any) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)

    def remove(self, port: int) -> None:
        """Take ``port`` out of the endpoints, as Kubernetes takes a pod out of its Services' endpoints as soon as
        the pod starts terminating, before its process has stopped."""
        with self._lock:
            self.backends.remove(port)

    def _connect(self) -> tuple[int, socket.socket] | None:
        with self._lock:
            first = next(self._turn)
            backends = list(self.backends)
        for step in range(len(backends)):
            port = backends[(first + step) % len(backends)]
            try:
                backend = socket.create_connection(("127.0.0.1", port), timeout=self._timeout)
            except OSError:
                continue  # gone: the next endpoint
            with self._lock:
                self.handed[port] += 1
            return port, backend
        return None

    def _forward(self, client: socket.socket) -> None:
        connected = self._connect()
        if connected is None:
            client.close()
            return
        _, backend = connected
        with contextlib.closing(backend), selectors.DefaultSelector() as selector:
            client.settimeout(self._timeout)
            backend.settimeout(self._timeout)
            selector.register(client, selectors.EVENT_READ, backend)
            selector.register(backend, selectors.EVENT_READ, client)
            while True:
                ready = selector.select(timeout=self._timeout)
                if not ready:
                    return  # idle for a whole timeout: close both ends
                for key, _ in ready:
                    source: socket.socket = key.fileobj  # type: ignore[assignment]
                    try:
                        data = source.recv(65536)
                    except OSError:
                        return
                    if not data:
                        return
                    try:
                        key.data.sendall(data)
                    except OSError:
                        return
