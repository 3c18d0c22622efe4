"""The cases of this directory: Kafka's own tests at each release line's tag, as data (``generate.py`` wrote them).

``python tests/kafka_cases/cases.py`` prints how many cases each release line has, and from which tests.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent

Case = dict[str, Any]


def case_files() -> list[Path]:
    return sorted(HERE.glob("*.json"), key=lambda p: tuple(int(n) for n in p.stem.split(".")))


def load(path: Path) -> tuple[str, str, list[Case]]:
    """A line's name ("3.9"), the tag its cases were read at, and the cases."""
    document = json.loads(path.read_text())
    return document["line"], document["tag"], document["cases"]


def all_cases() -> list[tuple[str, Case]]:
    return [(line, case) for path in case_files() for line, _, cases in [load(path)] for case in cases]


def main() -> None:
    for path in case_files():
        line, tag, cases = load(path)
        tests = Counter(case["test"].split("[", 1)[0] for case in cases)
        print(f"Kafka {line} ({tag}): {len(cases)} cases from {len(tests)} tests")
        for test, count in sorted(tests.items()):
            print(f"    {count:4d}  {test}")


if __name__ == "__main__":
    main()
