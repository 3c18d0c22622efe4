"""The repository's text says why in its own words, never by an issue number: a reader of the code, the docs or a
bench cannot open "issue 24", and what it stood for is lost with the tracker. Every tracked text file is read."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
ISSUE_NUMBER = re.compile(r"\bissues? #?\d+", re.IGNORECASE)
TEXT_SUFFIXES = frozenset(
    {
        ".py",
        ".md",
        ".yaml",
        ".yml",
        ".toml",
        ".txt",
        ".lua",
        ".json",
        ".tpl",
        ".dot",
        ".cfg",
        ".sh",
        ".properties",
    }
)

pytestmark = pytest.mark.timeout(30)


def _tracked_text_files() -> list[Path]:
    listed = subprocess.run(
        ["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=False, timeout=20
    ).stdout.decode()
    names = [name for name in listed.split("\0") if name]
    if not names:
        pytest.skip("not a git checkout: no tracked files to read")
    paths = [
        REPO / name for name in names if REPO / name != Path(__file__)
    ]  # this file quotes what it refuses
    return [
        p
        for p in paths
        if p.is_file() and not p.is_symlink() and (p.suffix in TEXT_SUFFIXES or p.name == "Makefile")
    ]


def issue_numbers_in(text: str) -> list[str]:
    return [match.group(0) for match in ISSUE_NUMBER.finditer(text)]


def test_no_tracked_text_names_an_issue_by_number() -> None:
    found = [
        f"{path.relative_to(REPO)}:{number}: {line.strip()[:100]}"
        for path in _tracked_text_files()
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), start=1)
        if issue_numbers_in(line)
    ]
    assert not found, "say what the issue stood for instead:\n" + "\n".join(found)


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("Until issue 24, kopf ran each reconcile", ["issue 24"]),
        ("the deadline of Issue 11's outage", ["Issue 11"]),
        ("see issues 46 and 48", ["issues 46"]),
        ("fixed in issue #7", ["issue #7"]),
        ("an issue with 3 brokers: tissue 5 is not one", []),
        ("KAFKA-6590 and the issues list", []),
    ],
)
def test_the_check_finds_an_issue_number_and_only_that(text: str, found: list[str]) -> None:
    assert issue_numbers_in(text) == found
