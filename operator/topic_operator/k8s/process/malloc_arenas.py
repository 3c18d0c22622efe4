"""Cap glibc's malloc arenas for the long-running operator process.

glibc gives each thread that allocates concurrently an arena of its own (up to eight per core), and memory freed
in an arena stays with it. The operator's threads (kazoo's connection threads, a batch thread per cluster, the
event loop) allocate and free topic bodies, plans and znode payloads all the time, so every arena ends up
holding its own fragmented high-water mark: with 3,000 KafkaTopics, 176 MB of RSS where two arenas need 150 MB
(``bench/operator.py``). ``MALLOC_ARENA_MAX=2`` is the usual fix for Python services; the operator applies it
itself, through ``mallopt``, so that it holds however ``kto run`` is started. An explicit ``MALLOC_ARENA_MAX``
in the environment wins; on a C library without ``mallopt`` (musl) nothing is done.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os

__all__ = ["DEFAULT_ARENAS", "limit_malloc_arenas"]

DEFAULT_ARENAS = 2
_M_ARENA_MAX = -8
"""``mallopt``'s parameter number for the arena limit (glibc's malloc.h)."""


def limit_malloc_arenas(arenas: int = DEFAULT_ARENAS) -> bool:
    """Cap the arenas at ``arenas`` unless the environment sets ``MALLOC_ARENA_MAX`` (glibc read it at start).
    Returns whether this call set the limit. Call it before threads start: an arena a thread already has stays
    in use."""
    if "MALLOC_ARENA_MAX" in os.environ:
        return False
    name = ctypes.util.find_library("c")
    if name is None:
        return False
    try:
        mallopt = ctypes.CDLL(name).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    return bool(mallopt(_M_ARENA_MAX, arenas))
