"""The pages where people adopt topics warn, before the commands, of what adopting changes: overrides the
KafkaTopics leave out are removed, and drift is reverted from then on. The defaults the warning states are the
product's own (the operator's settings and the chart's values), and the flags it names are ``kto run``'s. That
adoption removes an undeclared override is held by ``tests/k8s/test_adoption_of_existing_topics.py``."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest
import yaml

from topic_operator.k8s.command import register
from topic_operator.k8s.process.settings import OperatorSettings

REPO = Path(__file__).resolve().parents[2]
HOW_TO = REPO / "docs" / "how-to"
VALUES = REPO / "helm" / "kafka-topic-operator" / "values.yaml"

pytestmark = pytest.mark.timeout(10)


def warnings_of(page: str) -> list[str]:
    """Each ``!!! warning`` admonition of the page: its title line and indented body, as one line of text."""
    found, lines = [], page.splitlines()
    for index, line in enumerate(lines):
        if line.startswith("!!! warning"):
            body = [line]
            for following in lines[index + 1 :]:
                if following and not following.startswith("    "):
                    break
                body.append(following.strip())
            found.append(re.sub(r"\s+", " ", " ".join(body)).strip())
    return found


def test_the_page_that_brings_a_cluster_under_management_warns_before_its_commands() -> None:
    page = (HOW_TO / "bring-a-cluster-under-management.md").read_text()
    (warning,) = warnings_of(page)
    assert "Overrides the KafkaTopics leave out are removed" in warning
    assert "`unmanagedConfig`" in warning
    assert "`managedTopicConfig`" in warning
    assert "mode: Plan" in warning
    interval = OperatorSettings().drift_interval
    assert f"every {interval:g} s by default" in warning
    assert "Drift is reverted by default" in warning
    assert OperatorSettings().revert_drift is True
    values = yaml.safe_load(VALUES.read_text())
    assert values["revertDrift"] is True
    assert values["resyncInterval"] == interval
    assert "`revertDrift: false` (`KTO_REVERT_DRIFT=false`, `kto run --no-revert-drift`)" in warning
    assert page.index("!!! warning") < page.index("```sh")


def test_the_flag_the_warning_names_turns_reverting_off() -> None:
    parser = argparse.ArgumentParser()
    register(parser.add_subparsers())
    assert parser.parse_args(["run", "--no-revert-drift"]).revert_drift is False


def test_the_page_that_declares_topics_warns_where_it_explains_adoption() -> None:
    page = (HOW_TO / "declare-topics.md").read_text()
    (warning,) = warnings_of(page)
    assert "removed at adoption" in warning
    assert "reverts out-of-band changes" in warning
    assert "bring-a-cluster-under-management.md" in warning
    assert page.index("**adopts** it") < page.index("!!! warning") < page.index("`Ready=False` explains")


def test_a_page_without_the_warning_has_none_found() -> None:
    """The check can fail: the admonition's marker is what it finds, not the words alone."""
    page = (HOW_TO / "declare-topics.md").read_text().replace("!!! warning", "Warning:")
    assert warnings_of(page) == []
