"""What IncrementalAlterConfigs is sent to take a topic's override set from what was read to what is wanted."""

from __future__ import annotations

from collections.abc import Mapping

from kafka.admin import AlterConfigOp

__all__ = ["ConfigOperations", "config_operations"]

ConfigOperations = dict[str, tuple[AlterConfigOp, str | None]]


def config_operations(previous: Mapping[str, str], wanted: Mapping[str, str]) -> ConfigOperations:
    """IncrementalAlterConfigs' operations from ``previous`` to ``wanted``: SET what differs, DELETE what goes;
    keys that keep their value are not sent."""
    operations: ConfigOperations = {
        key: (AlterConfigOp.SET, value) for key, value in sorted(wanted.items()) if previous.get(key) != value
    }
    operations |= {key: (AlterConfigOp.DELETE, None) for key in sorted(previous) if key not in wanted}
    return operations
