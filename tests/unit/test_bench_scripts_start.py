"""Every benchmark script starts: run as ``python bench/<name>.py``, its directory comes first on ``sys.path``, so
a script named like a standard-library module (``operator.py`` was one) breaks every other script's imports."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
SCRIPTS = sorted(BENCH.glob("*.py"))


def test_no_script_is_named_like_a_standard_library_module() -> None:
    assert SCRIPTS
    assert [p.name for p in SCRIPTS if p.stem in sys.stdlib_module_names] == []


@pytest.mark.parametrize("script", SCRIPTS, ids=[p.stem for p in SCRIPTS])
def test_the_script_starts(script: Path) -> None:
    result = subprocess.run(
        [sys.executable, str(script), "--help"], capture_output=True, text=True, timeout=90, check=False
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert "usage:" in result.stdout
