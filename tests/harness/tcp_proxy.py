"""A TCP proxy on 127.0.0.1 that a test can cut: one process's road to a server, closed while others keep theirs.

Used to take the API server away from one operator replica only (its kubeconfig names the proxy), which is what
a replica cut off from the control plane, but not from ZooKeeper, looks like. TLS passes through untouched: the
API server's certificate names 127.0.0.1, which the proxy's address is too.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from types import TracebackType

from topic_operator.testing.local_server import free_port

__all__ = ["TcpProxy"]


class TcpProxy:
    """Forwards ``127.0.0.1:port`` to ``127.0.0.1:target``; ``cut()`` closes every connection and refuses new
    ones until ``restore()``. With ``hold``, a connection is accepted but nothing crosses it until that event is
    set; ``connected`` is set once a client has connected."""

    def __init__(self, target: int, *, hold: threading.Event | None = None) -> None:
        self.target = target
        self.hold = hold
        self.connected = threading.Event()
        self.port = free_port()
        self._open = threading.Event()
        self._open.set()
        self._sockets: set[socket.socket] = set()
        self._lock = threading.Lock()
        self._listener = socket.create_server(("127.0.0.1", self.port))
        self._listener.settimeout(0.2)
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._accept, name="tcp-proxy", daemon=True)

    def __enter__(self) -> TcpProxy:
        self._thread.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self._stopped.set()
        self.cut()
        self._thread.join(5)
        self._listener.close()

    def cut(self) -> None:
        self._open.clear()
        with self._lock:
            for sock in self._sockets:
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
                sock.close()
            self._sockets.clear()

    def restore(self) -> None:
        self._open.set()

    def _accept(self) -> None:
        while not self._stopped.is_set():
            try:
                client, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            if not self._open.is_set():
                client.close()
                continue
            try:
                upstream = socket.create_connection(("127.0.0.1", self.target), timeout=5)
            except OSError:
                client.close()
                continue
            upstream.settimeout(None)
            with self._lock:
                self._sockets.update((client, upstream))
            self.connected.set()
            for source, sink in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(source, sink), daemon=True).start()

    def _pipe(self, source: socket.socket, sink: socket.socket) -> None:
        if self.hold is not None:
            while not self.hold.wait(0.2):
                if self._stopped.is_set():
                    return
        with contextlib.suppress(OSError):
            while True:
                data = source.recv(65536)
                if not data:
                    break
                sink.sendall(data)
        for sock in (source, sink):
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
