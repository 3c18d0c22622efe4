"""One drift run over the hand-built small fleet, shared by the tests that read its outputs."""

from __future__ import annotations

import pytest
from drift_fleets import FleetRun, run_fleet, small_fleet
from pyspark.sql import SparkSession


@pytest.fixture(scope="session")
def small_fleet_run(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> FleetRun:
    return run_fleet(spark, small_fleet(), tmp_path_factory.mktemp("small-fleet"))
