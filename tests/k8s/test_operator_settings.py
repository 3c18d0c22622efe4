"""Settings from the environment and from ``kto run`` flags: each has a variable, flags win, bad values name
their variable."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from topic_operator.k8s.command import register, settings_from_args
from topic_operator.k8s.process.settings import (
    OperatorSettings,
    SettingsError,
    environment_variables,
    settings_from_env,
)


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="kto")
    register(parser.add_subparsers(dest="command", required=True))
    return parser.parse_args(["run", *argv])


def test_every_field_has_its_variable() -> None:
    names = environment_variables()
    assert set(names) == set(OperatorSettings.__dataclass_fields__)
    assert all(name.startswith("KTO_") for name in names.values())
    assert names["drift_interval"] == "KTO_DRIFT_INTERVAL"


def test_environment_then_flags() -> None:
    env = {"KTO_WATCH_NAMESPACES": "team-a, team-b", "KTO_DRIFT_INTERVAL": "60", "KTO_REVERT_DRIFT": "false",
           "KTO_LOG_LEVEL": "DEBUG", "KTO_MATERIAL_DIR": "/run/kto", "KTO_PRIORITY": ""}  # fmt: skip
    from_env = settings_from_env(env)
    assert from_env.namespaces == ("team-a", "team-b")
    assert not from_env.clusterwide
    assert (from_env.drift_interval, from_env.revert_drift, from_env.log_level) == (60.0, False, "debug")
    assert (from_env.material_dir, from_env.priority) == (Path("/run/kto"), None)
    args = parse(
        [
            "-n",
            "ops",
            "--drift-interval",
            "15",
            "--revert-drift",
            "--queue-size",
            "7",
            "--log-format",
            "plain",
        ]
    )
    flagged = settings_from_args(args, env)
    assert flagged.namespaces == ("ops",)
    assert (flagged.drift_interval, flagged.revert_drift, flagged.queue_size, flagged.log_format) == (
        15.0,
        True,
        7,
        "plain",
    )
    assert settings_from_args(parse([]), {}).clusterwide


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"KTO_DRIFT_INTERVAL": "soon"}, "KTO_DRIFT_INTERVAL='soon' is not a valid float"),
        ({"KTO_DRIFT_INTERVAL": "0"}, "KTO_DRIFT_INTERVAL must be positive"),
        ({"KTO_QUEUE_SIZE": "0"}, "KTO_QUEUE_SIZE must be at least 1"),
        ({"KTO_WORKER_LIMIT": "-1"}, "KTO_WORKER_LIMIT must not be negative"),
        ({"KTO_REVERT_DRIFT": "maybe"}, "KTO_REVERT_DRIFT='maybe' is not a valid bool"),
        ({"KTO_LOG_FORMAT": "xml"}, "KTO_LOG_FORMAT must be one of json, plain"),
        ({"KTO_METRICS_PORT": "70000"}, "KTO_METRICS_PORT must be a port"),
    ],
)
def test_bad_values_name_their_variable(env: dict[str, str], message: str) -> None:
    with pytest.raises(SettingsError, match=message):
        settings_from_env(env)
