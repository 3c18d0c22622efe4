"""The alerts, as Prometheus users test theirs: ``promtool check rules`` on the PrometheusRule the chart
renders, ``promtool test rules`` with series that make each alert fire and series that must not, every metric an
expression names one the operator exports, and a runbook on the site's alerts page for each alert. The plain copy
under manifests/monitoring/ holds the same rules."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from monitoring import exported_series, metric_names
from validation import CHART, ROOT, problems, rendered_documents

PROMTOOL = shutil.which("promtool")
needs_promtool = pytest.mark.skipif(
    PROMTOOL is None,
    reason="promtool not installed (Debian's prometheus package; make system-deps installs it)",
)
UNIT_TESTS = Path(__file__).with_name("alerts.promtool-test.yaml")
RUNBOOKS_PAGE = Path("docs/operations/alerts.md")
"""The site's page with one heading per alert, which every rule's ``runbook_url`` points into."""
REPOSITORY = "https://github.com/kafka-topic-operator/kafka-topic-operator/blob/main/"
RUNBOOKS = f"{REPOSITORY}{RUNBOOKS_PAGE.as_posix()}#"


def rendered_rule() -> dict[str, Any]:
    (rule,) = [
        d
        for d in rendered_documents({"metrics": {"prometheusRule": {"enabled": True}}})
        if d["kind"] == "PrometheusRule"
    ]
    return rule


def alerts(groups: dict[str, Any]) -> list[dict[str, Any]]:
    return [rule for group in groups["groups"] for rule in group["rules"] if "alert" in rule]


def promtool(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    assert PROMTOOL is not None
    return subprocess.run([PROMTOOL, *args], cwd=cwd, capture_output=True, text=True, timeout=60, check=False)


def test_the_prometheusrule_is_opt_in() -> None:
    assert [d for d in rendered_documents() if d["kind"] == "PrometheusRule"] == []


def test_the_rendered_rule_validates_and_equals_the_plain_copy() -> None:
    rule = rendered_rule()
    assert problems(rule) == []
    plain = yaml.safe_load((ROOT / "manifests" / "monitoring" / "prometheusrule.yaml").read_text())
    assert problems(plain) == []
    source = yaml.safe_load((CHART / "files" / "alerts.yaml").read_text())
    assert rule["spec"] == plain["spec"] == source


@needs_promtool
def test_promtool_checks_the_rendered_rules(tmp_path: Path) -> None:
    (tmp_path / "rules.yaml").write_text(yaml.safe_dump(rendered_rule()["spec"]))
    checked = promtool("check", "rules", "rules.yaml", cwd=tmp_path)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert f"SUCCESS: {len(alerts(rendered_rule()['spec']))} rules found" in checked.stdout


@needs_promtool
def test_promtool_unit_tests_fire_each_alert_and_hold_back_the_rest(tmp_path: Path) -> None:
    (tmp_path / "rules.yaml").write_text(yaml.safe_dump(rendered_rule()["spec"]))
    shutil.copy(UNIT_TESTS, tmp_path / UNIT_TESTS.name)
    tested = promtool("test", "rules", UNIT_TESTS.name, cwd=tmp_path)
    assert tested.returncode == 0, tested.stdout + tested.stderr
    assert "SUCCESS" in tested.stdout


def test_every_alert_has_a_case_firing_and_a_case_not_firing() -> None:
    cases: dict[str, set[bool]] = {}
    for test in yaml.safe_load(UNIT_TESTS.read_text())["tests"]:
        for case in test.get("alert_rule_test", ()):
            cases.setdefault(case["alertname"], set()).add(bool(case.get("exp_alerts")))
    names = {rule["alert"] for rule in alerts(rendered_rule()["spec"])}
    assert {name: {True, False} for name in names} == cases


def test_every_metric_an_alert_names_is_exported() -> None:
    exported = exported_series()
    for rule in alerts(rendered_rule()["spec"]):
        named = metric_names(rule["expr"])
        assert named, rule["alert"]
        assert named <= exported, (rule["alert"], sorted(named - exported))


def test_every_alert_has_a_severity_a_summary_and_a_runbook_on_the_alerts_page() -> None:
    page = (ROOT / RUNBOOKS_PAGE).read_text()
    anchors = {_anchor(h) for h in re.findall(r"^#+ (.+)$", page, flags=re.MULTILINE)}
    for rule in alerts(rendered_rule()["spec"]):
        assert rule["labels"]["severity"] in {"critical", "warning"}, rule["alert"]
        assert rule["annotations"]["summary"], rule["alert"]
        assert rule["annotations"]["description"], rule["alert"]
        runbook = rule["annotations"]["runbook_url"]
        assert runbook == RUNBOOKS + rule["alert"].lower()
        assert runbook.removeprefix(RUNBOOKS) in anchors, f"{RUNBOOKS_PAGE} has no heading {rule['alert']}"


def _anchor(heading: str) -> str:
    """The anchor MkDocs (and GitHub) gives a heading: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
