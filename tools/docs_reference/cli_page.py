"""The CLI reference: every ``kto`` command and option, walked from the argument parser ``kto`` itself builds."""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from dataclasses import dataclass

from tools.docs_reference.environment import clean_environment
from tools.docs_reference.markdown import code, generated_header, page, prose, table


@dataclass(frozen=True, slots=True)
class Command:
    """One command of the parser tree: its full name (``kto plan``), its parser and its one-line help."""

    name: str
    parser: argparse.ArgumentParser
    summary: str


def build_kto_parser() -> argparse.ArgumentParser:
    """``kto``'s parser, built as ``kto`` builds it, in a clean environment."""
    from topic_operator.cli.main import build_parser

    with clean_environment():
        return build_parser()


def _subcommands(
    parser: argparse.ArgumentParser,
) -> argparse._SubParsersAction[argparse.ArgumentParser] | None:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return action
    return None


def commands(parser: argparse.ArgumentParser, name: str = "kto", summary: str = "") -> Iterator[Command]:
    """The command and every command below it, in the order the parser lists them."""
    yield Command(name, parser, summary)
    below = _subcommands(parser)
    if below is None:
        return
    helps = {choice.dest: choice.help or "" for choice in below._choices_actions}
    for sub_name, sub_parser in below.choices.items():
        yield from commands(sub_parser, f"{name} {sub_name}", helps.get(sub_name, ""))


def _help_text(action: argparse.Action, prog: str) -> str:
    text = action.help or ""
    if "%(" in text:
        text = text % {**vars(action), "prog": prog}
    return text


def _default_text(action: argparse.Action) -> str:
    if action.default in (None, argparse.SUPPRESS) or action.required:
        return ""
    if isinstance(action, argparse._StoreTrueAction | argparse._StoreFalseAction | argparse._AppendAction):
        return ""
    return code(str(action.default))


def option_rows(parser: argparse.ArgumentParser) -> list[list[str]]:
    """One row per argument: flags (or the positional's name), value, default, choices, required, help."""
    rows = []
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction | argparse._SubParsersAction):
            continue
        if action.help == argparse.SUPPRESS:
            continue
        names = ", ".join(code(flag) for flag in action.option_strings) or code(
            str(action.metavar or action.dest)
        )
        takes_value = action.nargs != 0
        metavar = action.metavar if isinstance(action.metavar, str) else None
        value = code(metavar or action.dest.upper()) if takes_value and action.option_strings else ""
        if not action.option_strings and action.nargs in ("+", "*"):
            value = "one or more" if action.nargs == "+" else "any number"
        choices = ", ".join(code(str(choice)) for choice in action.choices) if action.choices else ""
        if isinstance(action, argparse._AppendAction):
            value += " (repeatable)"
        required = "yes" if action.required else ""
        rows.append(
            [names, value, _default_text(action), choices, required, prose(_help_text(action, parser.prog))]
        )
    return rows


def _exclusive_groups(parser: argparse.ArgumentParser) -> list[str]:
    said = []
    for group in parser._mutually_exclusive_groups:
        flags = [action.option_strings[0] for action in group._group_actions if action.option_strings]
        need = "exactly one" if group.required else "at most one"
        said.append(f"Give {need} of " + ", ".join(code(flag) for flag in flags) + ".")
    return said


def render() -> str:
    parser = build_kto_parser()
    lines = [
        generated_header("the `kto` argument parser (topic_operator.cli.main.build_parser)"),
        "",
        "# The kto command line",
        "",
        "Every `kto` command and option, read from the argument parser `kto` builds, with the defaults of an "
        "environment without `KTO_*` variables. `kto COMMAND --help` prints the same.",
    ]
    with clean_environment():
        for command in commands(parser):
            lines += ["", f"## {command.name}", ""]
            if command.summary:
                lines += [prose(command.summary[0].upper() + command.summary[1:]) + ".", ""]
            if command.parser.description:
                lines += [prose(command.parser.description), ""]
            lines += ["    " + line.rstrip() for line in command.parser.format_usage().strip().splitlines()]
            lines.append("")
            below = _subcommands(command.parser)
            if below is not None:
                lines += table(
                    ["Command", "What it does"],
                    [
                        [
                            f"[{code(f'{command.name} {choice.dest}')}](#{command.name.replace(' ', '-')}-{choice.dest})",
                            prose(choice.help or ""),
                        ]
                        for choice in below._choices_actions
                    ],
                )
                lines.append("")
            rows = option_rows(command.parser)
            if rows:
                lines += table(["Option", "Value", "Default", "Choices", "Required", "Help"], rows)
                lines.append("")
            lines += _exclusive_groups(command.parser)
    return page(lines)
