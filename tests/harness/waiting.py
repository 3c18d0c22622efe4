"""Waiting for the event a test means, never for a fixed time: poll a check until it holds, within a bound."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

__all__ = ["eventually"]


def eventually(
    check: Callable[[], Any],
    *,
    timeout: float,
    what: str,
    interval: float = 0.1,
    expected: tuple[type[BaseException], ...] = (Exception,),
) -> Any:
    """Poll ``check`` until it returns something truthy, and return that. An ``expected`` exception counts as
    "not yet" (a server restarting, a leader being elected); after ``timeout`` seconds the test fails naming
    ``what`` and the last answer."""
    deadline = time.monotonic() + timeout
    last: Any = None
    while True:
        try:
            last = check()
            if last:
                return last
        except expected as error:
            last = error
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what} (last: {last!r})")
        time.sleep(interval)
