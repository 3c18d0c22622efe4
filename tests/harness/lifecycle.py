"""A server a test starts is stopped by whoever started it, even when starting it fails half-way."""

from __future__ import annotations

from types import TracebackType
from typing import Self

__all__ = ["StartedServer"]


class StartedServer:
    """``with Server(...) as server:`` starts it, and stops whatever did start if ``start`` raises (a broker of
    three, etcd without its API server): no process outlives the fixture that made it."""

    def start(self) -> Self:
        raise NotImplementedError

    def stop(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.stop()
