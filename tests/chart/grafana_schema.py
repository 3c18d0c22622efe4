"""A Grafana dashboard held to Grafana's dashboard schema as grafana-foundation-sdk models it.

The SDK is generated from Grafana's schemas (cog): a typed class per object, with ``from_json`` and ``to_json``.
``from_json`` keeps only the keys the schema knows and does not check the values' types, so the check is two-fold:
the JSON must come back unchanged from ``from_json`` then ``to_json`` (an unknown or misspelt key, or a panel type
or query the SDK does not know, is lost or reshaped on the way), and every value must fit the type its class
declares (an enum's member, a literal's value, a string, a list of the declared items...).
"""

from __future__ import annotations

import enum
import json
import types
import typing
from typing import Any

from grafana_foundation_sdk.cog.encoder import JSONEncoder
from grafana_foundation_sdk.cog.plugins import register_default_plugins
from grafana_foundation_sdk.cog.runtime import UnknownDataquery, panelcfg_config
from grafana_foundation_sdk.models.dashboard import Dashboard, Panel

register_default_plugins()

_PRIMITIVES: dict[type, tuple[type, ...]] = {str: (str,), bool: (bool,), int: (int,), float: (int, float)}


def schema_problems(dashboard_json: dict[str, Any]) -> list[str]:
    """Why ``dashboard_json`` is not a dashboard of Grafana's schema (empty: it is)."""
    model = Dashboard.from_json(dashboard_json)
    found = []
    if json.loads(json.dumps(model, cls=JSONEncoder)) != dashboard_json:
        found.append("the dashboard does not come back unchanged through the SDK's model (an unknown key?)")
    for i, panel in enumerate(model.panels or ()):
        if isinstance(panel, Panel) and panelcfg_config(panel.type_val) is None:
            found.append(f"dashboard.panels[{i}]: the SDK models no panel of type {panel.type_val!r}")
    return found + _object_problems(model, "dashboard")


def _object_problems(obj: object, path: str) -> list[str]:
    if isinstance(obj, UnknownDataquery):
        return [f"{path}: a query of a data source the SDK does not model"]
    hints = typing.get_type_hints(type(obj))
    return [
        p
        for name, hint in hints.items()
        for p in _value_problems(getattr(obj, name, None), hint, f"{path}.{name}")
    ]


def _value_problems(value: object, hint: Any, path: str) -> list[str]:
    if value is None:
        return []
    if hint is Any or hint is object:  # options and custom field config: the panel plugin's class, if any
        return _object_problems(value, path) if callable(getattr(value, "to_json", None)) else []
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        choices = [arg for arg in args if arg is not type(None)]
        classes = [arg for arg in choices if isinstance(arg, type) and isinstance(value, arg)]
        attempts = [_value_problems(value, arg, path) for arg in classes[:1] or choices]
        return [] if any(not a for a in attempts) else min(attempts, key=len)
    if origin is typing.Literal:
        return [] if value in args else [f"{path}: {value!r} is none of {args}"]
    if origin is list:
        if not isinstance(value, list):
            return [f"{path}: {value!r} is not a list"]
        return [p for i, item in enumerate(value) for p in _value_problems(item, args[0], f"{path}[{i}]")]
    if origin is dict:
        if not isinstance(value, dict):
            return [f"{path}: {value!r} is not a mapping"]
        return [p for key, item in value.items() for p in _value_problems(item, args[1], f"{path}.{key}")]
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        try:
            hint(value)
        except ValueError:
            return [f"{path}: {value!r} is not one of {[m.value for m in hint]}"]
        return []
    if hint in _PRIMITIVES:
        ok = isinstance(value, _PRIMITIVES[hint]) and (hint is bool or not isinstance(value, bool))
        return [] if ok else [f"{path}: {value!r} is not a {hint.__name__}"]
    if isinstance(hint, type):
        if not isinstance(value, hint):
            return [f"{path}: {type(value).__name__} where the schema has {hint.__name__}"]
        return _object_problems(value, path)
    return []
