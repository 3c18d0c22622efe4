"""KRaft's ``metadata.version`` feature levels and the names Kafka gives them (``3.9-IV0``), so that the level
DescribeFeatures reports can be said as a user reads it in ``kafka-features.sh describe``.

Levels 1 to 21 are ``MetadataVersion``'s at apache/kafka 3.9.0-rc3
(server-common/src/main/java/org/apache/kafka/server/common/MetadataVersion.java: IBP_3_0_IV1(1) ... IBP_3_9_IV0(21);
``kraft.md`` §3.5 cites 3.9-IV0 = 21 at line 209). Levels 22 to 27 (4.0-IV0 to 4.1-IV1) were read in a later
copy of the same enum, not at a 4.x release tag: unconfirmed until a 4.x broker reports them.

Pure: no I/O.
"""

from __future__ import annotations

from typing import Final

__all__ = ["METADATA_VERSIONS", "metadata_version_name"]

METADATA_VERSIONS: Final[dict[int, str]] = {
    1: "3.0-IV1",
    2: "3.1-IV0",
    3: "3.2-IV0",
    4: "3.3-IV0",
    5: "3.3-IV1",
    6: "3.3-IV2",
    7: "3.3-IV3",
    8: "3.4-IV0",
    9: "3.5-IV0",
    10: "3.5-IV1",
    11: "3.5-IV2",
    12: "3.6-IV0",
    13: "3.6-IV1",
    14: "3.6-IV2",
    15: "3.7-IV0",
    16: "3.7-IV1",
    17: "3.7-IV2",
    18: "3.7-IV3",
    19: "3.7-IV4",
    20: "3.8-IV0",
    21: "3.9-IV0",
    22: "4.0-IV0",
    23: "4.0-IV1",
    24: "4.0-IV2",
    25: "4.0-IV3",
    26: "4.1-IV0",
    27: "4.1-IV1",
}


def metadata_version_name(level: int) -> str:
    """``3.9-IV0`` for level 21; a level this table does not know is said as such (a newer release's)."""
    return METADATA_VERSIONS.get(level, f"feature level {level}")
