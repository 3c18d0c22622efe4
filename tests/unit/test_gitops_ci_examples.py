"""The CI jobs the site's "GitOps pull requests" guide gives to copy: YAML that parses, shell that ``bash -n``
accepts, and ``kto`` command lines that kto's own parser accepts (neither GitHub nor GitLab can run here)."""

from __future__ import annotations

import re
import shlex
import subprocess
from pathlib import Path
from typing import Any

import yaml

from topic_operator.cli.main import build_parser

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "how-to" / "gitops-pull-requests.md"


def ci_examples() -> list[dict[str, Any]]:
    text = GUIDE.read_text()
    return [yaml.safe_load(block) for block in re.findall(r"```yaml\n(.*?)```", text, flags=re.DOTALL)]


def scripts(example: dict[str, Any]) -> list[str]:
    if "jobs" in example:  # GitHub Actions
        return [step["run"] for job in example["jobs"].values() for step in job["steps"] if "run" in step]
    return ["\n".join(job["script"]) for job in example.values()]  # GitLab CI


def test_both_examples_parse_and_their_shell_is_valid() -> None:
    examples = ci_examples()
    assert len(examples) == 2
    assert "pull_request" in examples[0][True]  # YAML 1.1 reads the key `on` as True
    assert examples[1]["kto-plan"]["rules"][0]["if"] == '$CI_PIPELINE_SOURCE == "merge_request_event"'
    for example in examples:
        for script in scripts(example):
            checked = subprocess.run(["bash", "-n"], input=script, capture_output=True, text=True, timeout=10)
            assert checked.returncode == 0, (script, checked.stderr)


def test_their_kto_commands_are_commands_kto_takes() -> None:
    commands = [
        line.strip()
        for example in ci_examples()
        for script in scripts(example)
        for line in re.findall(r"(?:^|; |\n)\s*(kto [^|>\n]*)", script)
    ]
    assert {c.split()[1] for c in commands} == {"validate", "plan"}
    parser = build_parser()
    for command in commands:
        args = parser.parse_args(shlex.split(command)[1:])
        if args.command == "plan":
            assert (args.output, args.snapshot) == ("markdown", "snapshots/prod-eu.jsonl")
