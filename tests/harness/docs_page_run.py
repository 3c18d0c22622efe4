"""Run a documentation page's marked blocks in order, as a reader would type them, and compare shown output.

A page is written for a reader's machine (ZooKeeper at ``127.0.0.1:2181/kafka``, the reader's kubeconfig); the
test runs it against the servers the fixtures started, so the page's own words are swapped for the test's in
commands and files (``substitutions``) and back again in what the commands print. Shown output is compared with
what the product printed after masking only what must vary from run to run (``MASKS``): the broker ids of
Kafka's placement (it starts at a random broker, as Kafka does), the topic id the controller draws, and ages.
Tabs are expanded as a terminal shows them.
"""

from __future__ import annotations

import difflib
import os
import re
import shlex
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

from harness.docs_blocks import Block, blocks_of, commands_of
from harness.kubectl_equivalent import run_kubectl
from harness.operator_process import start_operator
from harness.real_apiserver import RealApiServer

__all__ = ["MASKS", "PageRun", "masked", "run_page"]

MASKS: tuple[tuple[str, re.Pattern[str], str], ...] = (
    ("the topic id", re.compile(r"TopicId: \S+"), "TopicId: <topic id>"),
    ("the brokers Kafka's placement chose", re.compile(r"replicas \[[0-9, ]+\]"), "replicas [<brokers>]"),
    ("the brokers of describe", re.compile(r"(Leader|Replicas|Isr): [0-9,]+"), r"\1: <brokers>"),
    ("ages", re.compile(r"(?<=\s)\d+[smhd](\d+[smhd])?\s*$", re.MULTILINE), "<age>"),
)
"""What varies between two runs of the same page: what it is, its pattern, and what it is shown as."""

KTO = Path(sys.executable).parent / "kto"
COMMAND_TIMEOUT = 60.0


def masked(text: str) -> str:
    lines = [line.expandtabs().rstrip() for line in text.strip("\n").splitlines()]
    shown = "\n".join(lines)
    for _, pattern, replacement in MASKS:
        shown = pattern.sub(replacement, shown)
    return shown


@dataclass
class PageRun:
    """Where and against what one page runs."""

    directory: Path
    substitutions: dict[str, str] = field(default_factory=dict)
    """Page text -> the text that runs (a connect string, a port)."""
    after_command: Callable[[], object] | None = None
    """Called after each command: what the cluster does meanwhile (the simulated controller)."""
    apiserver: RealApiServer | None = None
    kubeconfig: Path | None = None

    def into_test(self, text: str) -> str:
        for shown, real in self.substitutions.items():
            text = text.replace(shown, real)
        return text

    def into_page(self, text: str) -> str:
        for shown, real in self.substitutions.items():
            text = text.replace(real, shown)
        return text


@dataclass(frozen=True)
class _Printed:
    command: str
    code: int
    output: str


def _environment(run: PageRun) -> dict[str, str]:
    home = run.directory / ".home"
    home.mkdir(exist_ok=True)
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("KTO_", "KUBECONFIG"))}
    environment["HOME"] = str(home)
    if run.kubeconfig is not None:
        environment["KUBECONFIG"] = str(run.kubeconfig)
    return environment


def _run_command(run: PageRun, command: str, stack: ExitStack, block: Block) -> _Printed:
    real = run.into_test(command)
    words = shlex.split(real.removesuffix("&").strip())
    if words[:2] == ["kto", "run"]:
        if run.kubeconfig is None:
            raise AssertionError(f"{block.where}: `kto run` on a page run without an API server")
        operator = start_operator(run.directory, run.kubeconfig, *words[2:])
        stack.callback(operator.stop)
        operator.wait_ready()
        return _Printed(command, 0, "")
    if words[:1] == ["kto"]:
        finished = subprocess.run(
            [str(KTO), *words[1:]],
            cwd=run.directory,
            env=_environment(run),
            capture_output=True,
            text=True,
            timeout=COMMAND_TIMEOUT,
            stdin=subprocess.DEVNULL,
            check=False,
        )
        return _Printed(command, finished.returncode, finished.stdout + finished.stderr)
    if words[:1] == ["kubectl"]:
        if run.apiserver is None:
            raise AssertionError(f"{block.where}: kubectl on a page run without an API server")
        result = run_kubectl(run.apiserver, real, run.directory, run.into_page)
        return _Printed(command, result.code, result.output)
    raise AssertionError(f"{block.where}: the tests cannot run this command: {command}")


def _steps(page: Path) -> Iterator[Block]:
    return (block for block in blocks_of(page) if block.mark is not None)


def run_page(page: Path, run: PageRun, kind: str) -> int:
    """Run every marked block of ``page`` whose test kind is ``kind``; returns how many commands ran. Fails with
    the page and the line of the block that went wrong."""
    ran = 0
    last: _Printed | None = None
    skipping = False
    with ExitStack() as stack:
        for block in _steps(page):
            if block.mark == "file":
                (run.directory / block.argument).write_text(run.into_test(block.text))
            elif block.mark == "test":
                skipping = block.test_kind != kind
                if skipping:
                    continue
                commands = commands_of(block)
                for position, command in enumerate(commands):
                    last = _run_command(run, command, stack, block)
                    ran += 1
                    if run.after_command is not None:
                        run.after_command()
                    expected = block.expected_exit if position == len(commands) - 1 else 0
                    if last.code != expected:
                        raise AssertionError(
                            f"{block.where}: `{command}` exited {last.code}, the page expects {expected}:\n"
                            f"{run.into_page(last.output)}"
                        )
            elif block.mark == "output" and not skipping:
                if last is None:
                    raise AssertionError(f"{block.where}: an output block with no command before it")
                shown, printed = masked(block.text), masked(run.into_page(last.output))
                if shown != printed:
                    difference = "\n".join(
                        difflib.unified_diff(
                            shown.splitlines(), printed.splitlines(), "the page", "the product", lineterm=""
                        )
                    )
                    raise AssertionError(
                        f"{block.where}: the output shown for `{last.command}` is not what it prints "
                        f"(masked: {', '.join(what for what, _, _ in MASKS)}):\n{difference}"
                    )
    return ran
