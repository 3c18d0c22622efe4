"""The commands the runbooks and operations pages give for the operator's own pods find them on both documented
installs, the plain manifests and the Helm chart, whose Deployment names differ (``kafka-topic-operator`` and
``<release>-kafka-topic-operator``): they select by label. A Deployment named in a command appears only where the
page is about the plain manifests."""

from __future__ import annotations

import re
import shlex
from typing import Any

import pytest
import yaml
from validation import ROOT, rendered_documents

DOCS = ROOT / "docs"
PLAIN = ROOT / "manifests" / "install"
COMMAND = re.compile(r"kubectl [^`\n]*(?:-l|--selector)[ =][^`\n]*")
NAMED_DEPLOYMENT = re.compile(r"deployment/[a-z0-9-]+")

pytestmark = pytest.mark.timeout(60)


def _plain_documents() -> list[dict[str, Any]]:
    return [
        document
        for path in sorted(PLAIN.glob("*.yaml"))
        for document in yaml.safe_load_all(path.read_text())
        if document
    ]


INSTALLS = {"plain manifests": _plain_documents(), "Helm chart": rendered_documents()}


def selector_commands() -> list[tuple[str, str]]:
    found = []
    for page in sorted(DOCS.rglob("*.md")):
        text = page.read_text()
        for match in COMMAND.finditer(re.sub(r"\s*\n\s*", " ", text)):
            if "app.kubernetes.io/" in match.group(0):
                found.append((str(page.relative_to(DOCS)), match.group(0).strip()))
    return found


def _option(words: list[str], *names: str) -> str:
    for index, word in enumerate(words):
        for name in names:
            if word == name:
                return words[index + 1]
            if word.startswith(f"{name}="):
                return word.split("=", 1)[1]
    raise AssertionError(f"no {names[0]} in {' '.join(words)}")


def _matches(labels: dict[str, str], selector: str) -> bool:
    wanted = dict(term.split("=", 1) for term in selector.split(","))
    return all(labels.get(key) == value for key, value in wanted.items())


def selected(documents: list[dict[str, Any]], command: str) -> list[str]:
    """The Deployments ``command`` reaches in ``documents``: ``logs`` by their pods' labels, ``scale deployment``
    by their own, in the namespace the command names."""
    words = shlex.split(command)
    namespace, selector = _option(words, "-n", "--namespace"), _option(words, "-l", "--selector")
    reached = []
    for document in documents:
        if document.get("kind") != "Deployment" or document["metadata"].get("namespace") != namespace:
            continue
        if "logs" in words:
            labels = document["spec"]["template"]["metadata"]["labels"]
        elif words[words.index("scale") + 1] == "deployment":
            labels = document["metadata"]["labels"]
        else:
            raise AssertionError(f"a command this test does not know: {command}")
        if _matches(labels, selector):
            reached.append(document["metadata"]["name"])
    return reached


COMMANDS = selector_commands()


def test_the_pages_give_commands_by_label() -> None:
    pages = {page for page, _ in COMMANDS}
    assert {"operations/alerts.md", "how-to/high-availability.md"} <= pages, COMMANDS


@pytest.mark.parametrize("install", INSTALLS)
@pytest.mark.parametrize(("page", "command"), COMMANDS)
def test_a_command_by_label_reaches_the_operator_on_each_install(
    page: str, command: str, install: str
) -> None:
    assert selected(INSTALLS[install], command), f"{page}: `{command}` finds no operator pod in the {install}"


def test_a_deployment_is_named_only_where_the_plain_manifests_are_installed() -> None:
    install = (DOCS / "how-to" / "install.md").read_text()
    plain_section = install[install.index("## 2a.") : install.index("## 2b.")]
    named = [
        f"{page.relative_to(DOCS)}: {name}"
        for page in sorted(DOCS.rglob("*.md"))
        for name in NAMED_DEPLOYMENT.findall(page.read_text().replace(plain_section, ""))
    ]
    assert named == []


def test_a_selector_that_matches_neither_install_reaches_nothing() -> None:
    """The check can fail: a selector for another name finds no Deployment."""
    command = "kubectl -n kafka-topic-operator logs -l app.kubernetes.io/name=kto-operator"
    assert all(selected(documents, command) == [] for documents in INSTALLS.values())
