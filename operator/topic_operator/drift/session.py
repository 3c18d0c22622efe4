"""The SparkSession ``kto drift`` runs on: ``local[*]`` unless told otherwise, quiet, and local-only when local.

Under ``spark-submit`` (or in a program that already has a session) the existing session is used as it is, and
is left running: its master and resources are the submitter's choice. Otherwise a session is started here and
stopped by the caller when ``created`` says so.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from typing import Final

from pyspark.sql import SparkSession

__all__ = ["DEFAULT_MASTER", "DriftSession", "start_session"]

DEFAULT_MASTER: Final = "local[*]"

_DEFAULTS: Final = {
    "spark.ui.showConsoleProgress": "false",  # ``progress`` prints task counts line by line instead
    "spark.sql.execution.arrow.pyspark.enabled": "true",
    "spark.sql.session.timeZone": "UTC",
    # The plan stage returns one document per cluster; a large cluster's is tens of megabytes.
    "spark.driver.maxResultSize": "4g",
}

_LOCAL_ONLY: Final = {
    # A local run talks to nothing but itself: bind and advertise the loopback address, and no web UI port.
    "spark.driver.host": "127.0.0.1",
    "spark.driver.bindAddress": "127.0.0.1",
    "spark.ui.enabled": "false",
    # In local mode the driver JVM runs every task: give it room for the cached topic rows of a large fleet.
    "spark.driver.memory": "4g",
}


@dataclass(frozen=True, slots=True)
class DriftSession:
    spark: SparkSession
    created: bool
    """True when this module started the session, so the caller must stop it."""


def start_session(master: str | None = None, conf: dict[str, str] | None = None) -> DriftSession:
    """Use the active session (tests, a notebook), or start one: on ``master``; under ``spark-submit``, on the
    master and settings it was given; otherwise on ``local[*]``.

    Python workers must run this interpreter, where ``topic_operator`` is installed: ``PYSPARK_PYTHON`` is set
    to it unless already set (a cluster whose workers have the package elsewhere sets it explicitly).
    """
    active = SparkSession.getActiveSession()
    if active is not None and master is None:
        return DriftSession(active, created=False)
    submitted = master is None and "PYSPARK_GATEWAY_PORT" in os.environ  # spark-submit launched this process
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    settings = dict(_DEFAULTS)
    builder = SparkSession.builder.appName("kto drift")
    if not submitted:
        chosen = master or DEFAULT_MASTER
        builder = builder.master(chosen)
        if chosen.startswith("local"):
            os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
            settings.update(_LOCAL_ONLY)
    settings.update(conf or {})
    for key, value in settings.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return DriftSession(spark, created=active is None)
