"""values.schema.json covers every value of values.yaml, and Helm refuses a value of the wrong type for each of
them when it renders the chart for an install (what `helm install` and `helm template` do), naming the value."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import helm_python as helm
import pytest
import yaml
from validation import CHART

from tools.docs_reference.helm_page import leaves

pytestmark = pytest.mark.timeout(120)

VALUES: dict[str, Any] = yaml.safe_load((CHART / "values.yaml").read_text())
SCHEMA: dict[str, Any] = json.loads((CHART / "values.schema.json").read_text())


def schema_node(path: tuple[str, ...]) -> Mapping[str, Any] | None:
    node: Mapping[str, Any] = SCHEMA
    for key in path:
        if key in (node.get("properties") or {}):
            node = node["properties"][key]
        elif isinstance(node.get("additionalProperties"), Mapping):
            node = node["additionalProperties"]
        else:
            return None
    return node


def nested(path: tuple[str, ...], value: Any) -> dict[str, Any]:
    """``{"a": {"b": value}}`` for the path ``("a", "b")``."""
    built: Any = value
    for key in reversed(path):
        built = {key: built}
    return dict(built)


def wrong_type(value: Any) -> Any:
    """A value of another JSON type than ``value``'s, wrong for whatever its schema allows beside it."""
    if isinstance(value, bool):
        return "yes"
    if isinstance(value, int | float):
        return "a number in words"
    return ["a", "list"]


def render(values: dict[str, Any]) -> dict[str, str]:
    with helm.Chart.load(CHART) as chart:
        return chart.render(values, name="kto", namespace="kafka-topic-operator", is_install=True)


def test_every_value_has_a_schema_entry() -> None:
    found = list(leaves(VALUES))
    assert len(found) > 40
    missing = [".".join(path) for path, _ in found if schema_node(path) is None]
    assert not missing, f"values.schema.json has no entry for {missing}"


def test_the_schema_refuses_keys_it_does_not_know_at_every_level() -> None:
    """A typo (``replicaCont``, ``resources.request``) is refused, not ignored: each mapping of values.yaml that
    is not a free-form map (labels, annotations) is closed."""
    open_maps = []
    for path, _ in leaves(VALUES):
        for depth in range(len(path)):
            node = schema_node(path[:depth])
            closed = node is None or "properties" not in node or node.get("additionalProperties") is False
            if not closed:
                open_maps.append(".".join(path[:depth]) or "(top level)")
    assert not open_maps, sorted(set(open_maps))


SCALARS = [(path, value) for path, value in leaves(VALUES) if not isinstance(value, list | dict)]


@pytest.mark.parametrize(("path", "value"), SCALARS, ids=[".".join(path) for path, _ in SCALARS])
def test_helm_refuses_a_wrong_type_for_each_value(path: tuple[str, ...], value: Any) -> None:
    with pytest.raises(helm.HelmError) as refused:
        render(nested(path, wrong_type(value)))
    assert f"/{'/'.join(path)}" in str(refused.value)


def test_helm_template_refuses_a_string_where_an_integer_goes() -> None:
    assert "kafka-topic-operator/templates/deployment.yaml" in render({"replicaCount": 2})
    with pytest.raises(helm.HelmValuesError, match=r"at '/replicaCount': got string, want integer"):
        render({"replicaCount": "2"})


def test_helm_refuses_a_misspelt_resources_key() -> None:
    with pytest.raises(helm.HelmValuesError, match=r"/resources"):
        render({"resources": {"request": {"cpu": "100m"}}})
    with pytest.raises(helm.HelmValuesError, match=r"/resources/limits/memory"):
        render({"resources": {"limits": {"memory": "half a gig"}}})
