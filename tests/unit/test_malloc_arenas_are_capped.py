"""The operator caps glibc's malloc arenas (``k8s.malloc_arenas``): threads that allocate at once share two
arenas instead of growing one each. Counted with glibc's own ``malloc_info`` in a fresh process, with and without
the cap, so the check can fail."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

CHILD = textwrap.dedent(
    """
    import ctypes, ctypes.util, sys, tempfile, threading
    from topic_operator.k8s.process.malloc_arenas import limit_malloc_arenas

    capped = limit_malloc_arenas() if sys.argv[1] == "cap" else False
    start = threading.Barrier(8)

    def churn():
        start.wait()
        for _ in range(200):
            kept = [bytearray(512) for _ in range(500)]  # C-level allocations, outside Python's small-object pool
            del kept

    threads = [threading.Thread(target=churn) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    libc = ctypes.CDLL(ctypes.util.find_library("c"))
    libc.fopen.restype = ctypes.c_void_p
    libc.fopen.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
    libc.malloc_info.argtypes = [ctypes.c_int, ctypes.c_void_p]
    libc.fclose.argtypes = [ctypes.c_void_p]
    with tempfile.NamedTemporaryFile(suffix=".xml") as out:
        stream = libc.fopen(out.name.encode(), b"w")
        libc.malloc_info(0, stream)
        libc.fclose(stream)
        print(capped, open(out.name).read().count("<heap nr="))
    """
)


def _arenas(mode: str) -> tuple[bool, int]:
    env = {k: v for k, v in os.environ.items() if k != "MALLOC_ARENA_MAX"}
    result = subprocess.run(
        [sys.executable, "-c", CHILD, mode], capture_output=True, text=True, env=env, timeout=60, check=True
    )
    capped, heaps = result.stdout.split()
    return capped == "True", int(heaps)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc")
def test_eight_allocating_threads_share_two_arenas_once_capped() -> None:
    assert _arenas("cap") == (True, 2)
    uncapped, heaps = _arenas("free")
    assert not uncapped
    assert heaps > 2  # without the cap glibc gives the threads arenas of their own


def test_an_explicit_environment_setting_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    from topic_operator.k8s.process.malloc_arenas import limit_malloc_arenas

    monkeypatch.setenv("MALLOC_ARENA_MAX", "4")
    assert limit_malloc_arenas() is False
