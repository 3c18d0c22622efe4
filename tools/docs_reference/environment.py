"""The environment the pages are generated in: the same on every machine.

Some defaults are read from the environment (``kto``'s ``--deadline`` defaults to ``$KTO_ZK_DEADLINE``) and
argparse wraps its usage lines at the terminal's width, so the pages are generated with every ``KTO_*`` variable
removed and a fixed width; what the reader sees are the defaults of a clean environment.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

USAGE_COLUMNS = "100"


@contextlib.contextmanager
def clean_environment() -> Iterator[None]:
    """No ``KTO_*`` variable and a terminal ``USAGE_COLUMNS`` wide, for the time of the block."""
    saved = dict(os.environ)
    try:
        for name in [name for name in os.environ if name.startswith("KTO_")]:
            del os.environ[name]
        os.environ["COLUMNS"] = USAGE_COLUMNS
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)
