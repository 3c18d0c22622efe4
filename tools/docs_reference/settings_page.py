"""The settings reference: every setting and environment variable the code reads, with its default and meaning.

The settings are frozen dataclasses whose fields carry their environment variable (``metadata["env"]``) and an
attribute docstring; both are read here from the code. ``kto run``'s flags are found by walking its parser (a
flag's ``dest`` is the field's name). The few variables read outside those dataclasses (Java's, glibc's, Spark's)
are listed in ``OTHER_VARIABLES`` below, and a test holds that list to what the code reads.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import itertools
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from tools.docs_reference.cli_page import build_kto_parser, commands
from tools.docs_reference.markdown import code, generated_header, page, prose, table

OTHER_VARIABLES: dict[str, tuple[str, str]] = {
    "JAVA_HOME": (
        "topic_operator.testing.local_server",
        "The JDK whose `bin/java` runs the throwaway ZooKeeper of `kto demo`; unset: the `java` on `PATH`.",
    ),
    "MALLOC_ARENA_MAX": (
        "topic_operator.k8s.process.malloc_arenas",
        "glibc's malloc arena limit. When it is set, `kto run` leaves it alone; unset, `kto run` caps the "
        "arenas at 2 itself, so that its threads do not each grow an arena of their own.",
    ),
    "PYSPARK_GATEWAY_PORT": (
        "topic_operator.drift.command",
        "Set by `spark-submit`: `kto drift` launched by it runs on Spark (`--engine auto`) and uses the "
        "submitted session's master.",
    ),
    "PYSPARK_PYTHON": (
        "topic_operator.drift.session",
        "The Python of Spark's workers; `kto drift` sets it to its own interpreter unless already set (a "
        "cluster whose workers have the package elsewhere sets it).",
    ),
    "SPARK_LOCAL_IP": (
        "topic_operator.drift.session",
        "The address a local Spark binds; `kto drift` with a `local` master sets it to `127.0.0.1` unless "
        "already set.",
    ),
}
"""Environment variables read outside the settings dataclasses: the module that reads each, and what it does."""

_MIB = 1024 * 1024


@dataclass(frozen=True, slots=True)
class Setting:
    """One field of a settings dataclass."""

    path: str
    """The field's name, with its group for nested settings (``tls.ca_file``)."""
    variable: str
    default: Any
    meaning: str


def attribute_docstrings(cls: type) -> dict[str, str]:
    """Each field's docstring: the string literal right after its annotated assignment in the class body."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
    body = tree.body[0].body if isinstance(tree.body[0], ast.ClassDef) else []
    found: dict[str, str] = {}
    for statement, following in itertools.pairwise(body):
        if (
            isinstance(statement, ast.AnnAssign)
            and isinstance(statement.target, ast.Name)
            and isinstance(following, ast.Expr)
            and isinstance(following.value, ast.Constant)
            and isinstance(following.value.value, str)
        ):
            found[statement.target.id] = inspect.cleandoc(following.value.value)
    return found


def settings_of(cls: type, prefix: str = "", groups: dict[str, type] | None = None) -> Iterator[Setting]:
    """Every field of the dataclass ``cls`` that has an environment variable, and those of its nested groups."""
    docs = attribute_docstrings(cls)
    for spec in dataclasses.fields(cls):
        group = (groups or {}).get(spec.name)
        if "env" in spec.metadata:
            yield Setting(
                prefix + spec.name, str(spec.metadata["env"]), _default(spec), docs.get(spec.name, "")
            )
        if group is not None:
            yield from settings_of(group, f"{prefix}{spec.name}.")


def _default(spec: dataclasses.Field[Any]) -> Any:
    if spec.default is not dataclasses.MISSING:
        return spec.default
    if spec.default_factory is not dataclasses.MISSING:
        return spec.default_factory()
    return dataclasses.MISSING


def default_text(name: str, value: Any) -> str:
    """A default as it is written in the environment, with MiB said for sizes."""
    if value is dataclasses.MISSING:
        return "required"
    if value is None:
        return "unset"
    if isinstance(value, bool):
        return code("true" if value else "false")
    if isinstance(value, tuple) and not value:
        return "empty"
    if isinstance(value, str) and not value:
        return "empty"
    if isinstance(value, float) and value.is_integer():
        return code(f"{value:g}")
    if (
        isinstance(value, int)
        and value >= _MIB
        and value % _MIB == 0
        and ("bytes" in name or "chars" in name)
    ):
        return f"{code(str(value))} ({value // _MIB} MiB)"
    return code(str(value))


def run_flags() -> dict[str, tuple[str, str]]:
    """``kto run``'s flags by the settings field they set: (the flags, their help without the ``env`` note)."""
    for command in commands(build_kto_parser()):
        if command.name == "kto run":
            flags: dict[str, tuple[str, str]] = {}
            for action in command.parser._actions:
                if not action.option_strings or action.dest == "help":
                    continue
                help_text = (action.help or "").split("(env ")[0].strip().removeprefix("env ")
                if help_text.startswith("KTO_"):
                    help_text = ""
                if action.choices:
                    help_text = (
                        (help_text + "; " if help_text else "")
                        + "one of "
                        + ", ".join(map(str, action.choices))
                    )
                flags[action.dest] = (", ".join(action.option_strings), help_text)
            return flags
    raise LookupError("kto has no run command")


def _operator_section() -> list[str]:
    from topic_operator.k8s.process.settings import OperatorSettings

    flags = run_flags()
    rows = []
    for setting in settings_of(OperatorSettings):
        flag, flag_help = flags.get(setting.path, ("", ""))
        rows.append(
            [
                code(setting.variable),
                ", ".join(code(f) for f in flag.split(", ")) if flag else "",
                default_text(setting.path, setting.default),
                prose(setting.meaning or flag_help),
            ]
        )
    return [
        "## kto run (the operator)",
        "",
        "`kto run` reads each setting from its environment variable (the Deployment sets them from the Helm "
        "values) and lets its flag override it. A value that cannot be right stops `kto run` at start-up, "
        "naming the variable.",
        "",
        *table(["Variable", "Flag", "Default", "Meaning"], rows),
    ]


def _limits_section() -> list[str]:
    from topic_operator.manifests.limits import ManifestLimits

    rows = [
        [code(s.variable), default_text(s.path, s.default), prose(s.meaning)]
        for s in settings_of(ManifestLimits)
    ]
    return [
        "## Manifest limits (kto validate, plan, apply and the operator)",
        "",
        "How much input the manifest loader accepts, enforced while it reads. Each is a positive integer "
        "(underscores allowed); anything else stops the command, naming the variable.",
        "",
        *table(["Variable", "Default", "Meaning"], rows),
    ]


def _command_section() -> list[str]:
    from topic_operator.access.interface import DEFAULT_DEADLINE
    from topic_operator.cli.options import DEADLINE_VARIABLE

    return [
        "## kto commands",
        "",
        *table(
            ["Variable", "Default", "Meaning"],
            [
                [
                    code(DEADLINE_VARIABLE),
                    default_text("deadline", DEFAULT_DEADLINE),
                    "The default of `--deadline` of "
                    + ", ".join(
                        f"[{code(c.name)}](cli.md#{c.name.replace(' ', '-')})"
                        for c in commands(build_kto_parser())
                        if any(a.dest == "deadline" for a in c.parser._actions)
                    )
                    + ": seconds ZooKeeper may keep the command waiting before it gives up, reporting what was "
                    "done.",
                ]
            ],
        ),
    ]


def read_variables() -> set[str]:
    """Every variable some part of the product reads from its environment, as this page lists them."""
    from topic_operator.cli.options import DEADLINE_VARIABLE
    from topic_operator.k8s.process.settings import OperatorSettings
    from topic_operator.manifests.limits import ManifestLimits

    found = {s.variable for s in settings_of(OperatorSettings)} | {
        s.variable for s in settings_of(ManifestLimits)
    }
    return found | {DEADLINE_VARIABLE} | set(OTHER_VARIABLES)


def _zookeeper_section() -> list[str]:
    """Where a ZooKeeper connection's options come from: no environment variable sets them."""
    return [
        "## ZooKeeper connection options",
        "",
        "The options of one ZooKeeper connection (the connect string, authentication, TLS) are not settings of "
        "the process: the operator takes them from each KafkaCluster's `spec.zookeeper` and its Secrets "
        "([the CRD reference](crds.md)), and the `kto` commands from their flags ([the command reference](cli.md)). "
        "Only the timeouts above (`KTO_ZK_*`) are the process's own.",
        "",
    ]


def _other_section() -> list[str]:
    rows = [
        [code(name), code(module), prose(meaning)]
        for name, (module, meaning) in sorted(OTHER_VARIABLES.items())
    ]
    return ["## Other environment variables", "", *table(["Variable", "Read by", "Meaning"], rows)]


def render() -> str:
    lines = [
        generated_header("the settings dataclasses (OperatorSettings, ManifestLimits) and kto's parser"),
        "",
        "# Settings and environment variables",
        "",
        "Every setting the product reads, with its environment variable, its default and what it does, read "
        "from the code. The Helm chart sets the operator's from its values (see [Helm values](helm-values.md)).",
        "",
    ]
    for section in (_operator_section, _limits_section, _command_section, _zookeeper_section, _other_section):
        lines += [*section(), ""]
    return page(lines)
