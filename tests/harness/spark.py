"""One real local SparkSession for the whole test run.

Starting Spark's JVM costs seconds, so the session is shared; two cores match the machine, and every listening
socket is pinned to 127.0.0.1 so the driver neither looks up the host name nor listens on other interfaces.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from pyspark.sql import SparkSession

MASTER = "local[2]"

# Spark's log configuration, at a level: errors only for the test session (Spark's INFO/WARN start-up chatter
# would bury the test output it is captured into).
LOG4J2 = """\
rootLogger.level = {level}
rootLogger.appenderRef.stderr.ref = stderr
appender.console.type = Console
appender.console.name = stderr
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{{HH:mm:ss}} %p %c{{1}}: %m%n
"""


def start_local_session(work_dir: Path) -> SparkSession:
    """Start the shared session; ``work_dir`` takes the warehouse and scratch files instead of the repo."""
    # Workers must run this interpreter (the venv's), or pyspark picks whatever `python3` is on PATH.
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    os.environ["SPARK_LOCAL_IP"] = "127.0.0.1"
    local_dir = work_dir / "local"
    local_dir.mkdir(parents=True, exist_ok=True)
    os.environ["SPARK_LOCAL_DIRS"] = str(local_dir)
    log_config = work_dir / "log4j2.properties"
    log_config.write_text(LOG4J2.format(level="error"), encoding="utf-8")
    builder = (
        SparkSession.builder.master(MASTER)
        .appName("kto-tests")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        # Test data is tiny: the default 200 shuffle partitions would be 200 near-empty tasks per shuffle.
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.default.parallelism", "2")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.warehouse.dir", str(work_dir / "warehouse"))
        .config("spark.driver.memory", "1g")
        .config(
            "spark.driver.extraJavaOptions",
            f"-Dderby.system.home={work_dir} -Dlog4j2.configurationFile=file:{log_config}",
        )
    )
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    return session
