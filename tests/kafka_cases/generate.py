"""Turn Kafka's own tests, at each release line's tag, into the case files of this directory.

Not part of the test run: it reads a clone of ``apache/kafka`` (``--kafka-git``, any clone holding the tags of
``topic_operator.kafka.releases.RELEASE_LINES``) and writes ``<line>.json`` beside itself, one per line. The test
run reads those files (``tests/unit/test_cases_from_kafkas_own_tests.py``); the cases are Kafka's expectations,
never kto's output, and each names the test it comes from and the ``TAG:path:line`` of its assertion.

What is read, at each line's tag (kafka-versions.md cites the same files):

* ``ApiVersionTest.testApply`` (2.0-3.2) / ``MetadataVersionTest.testFromVersionString`` (3.3+): every version
  string the line's parser accepts, as a ``message.format.version``;
* ``LogConfigTest``: ``testFromPropsInvalid`` (every defined key with the values Kafka refuses for it; the keys
  are read from the tag's own ``LogConfig`` definitions), ``testFromPropsEmpty``,
  ``shouldValidateThrottledReplicasConfig``, ``testInvalidCompactionLagConfig``, the local retention tests (3.0+)
  and the tiered-storage tests of the broker's path (3.6+);
* ``TopicTest``: valid and invalid names, illegal characters, collision characters and collisions;
* ``AdminZkClientTest.testManualReplicaAssignment``: manual assignments AdminZkClient refuses or takes;
* ``ReassignPartitionsZNodeTest``: the reassignment request znode's JSON.

Left out, on purpose: ``LogConfigTest`` tests that call ``LogConfig.validate`` without broker config
(``testValidRemoteLogCopyDisabled``/``DeleteOnDisable``): in ZooKeeper mode from 3.0 only the broker writes topics,
and its path refuses those values (``testInValidRemoteConfigsInZK``); ``testDisableRemoteLogStorage``: KRaft's path
(``fromZK=false``); tests of docs, of broker-only config, and of objects kto does not model.

Usage: python tests/kafka_cases/generate.py --kafka-git /path/to/kafka/.git
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "operator"))

from topic_operator.kafka.releases import RELEASE_LINES, ReleaseLine

HERE = Path(__file__).resolve().parent
Case = dict[str, Any]

LOG_CONFIG_TEST = "core/src/test/scala/unit/kafka/log/LogConfigTest.scala"
API_VERSION_TEST = "core/src/test/scala/unit/kafka/api/ApiVersionTest.scala"
METADATA_VERSION_TEST = "server-common/src/test/java/org/apache/kafka/server/common/MetadataVersionTest.java"
TOPIC_TEST = "clients/src/test/java/org/apache/kafka/common/internals/TopicTest.java"
ADMIN_ZK_CLIENT_TEST = "core/src/test/scala/unit/kafka/zk/AdminZkClientTest.scala"
REASSIGN_ZNODE_TEST = "core/src/test/scala/unit/kafka/zk/ReassignPartitionsZNodeTest.scala"
TOPIC_CONFIG = "clients/src/main/java/org/apache/kafka/common/config/TopicConfig.java"
LOG_CONFIG_SCALA = "core/src/main/scala/kafka/log/LogConfig.scala"
LOG_CONFIG_JAVA = "storage/src/main/java/org/apache/kafka/storage/internals/log/LogConfig.java"
QUOTA_CONFIGS = "server-common/src/main/java/org/apache/kafka/server/config/QuotaConfigs.java"

BROKER_KEYS = {
    "REMOTE_LOG_STORAGE_SYSTEM_ENABLE_PROP": "remote.log.storage.system.enable",
    "LOG_RETENTION_TIME_MILLIS_CONFIG": "log.retention.ms",
    "LogRetentionTimeMillisProp": "log.retention.ms",
    "LOG_RETENTION_BYTES_CONFIG": "log.retention.bytes",
    "LogRetentionBytesProp": "log.retention.bytes",
    "LOG_LOCAL_RETENTION_MS_PROP": "log.local.retention.ms",
    "LOG_LOCAL_RETENTION_BYTES_PROP": "log.local.retention.bytes",
}
"""Broker setting constants the tiered-storage tests put into the broker's config (3.6.2-3.9.0-rc3: the
RemoteLogManagerConfig, ServerLogConfigs and KafkaConfig constants of those names)."""


class Source:
    """One file at one tag, with line numbers."""

    def __init__(self, git: Path, tag: str, path: str) -> None:
        self.tag, self.path = tag, path
        result = subprocess.run(
            ["git", f"--git-dir={git}", "show", f"{tag}:{path}"], capture_output=True, text=True, check=False
        )
        self.text = result.stdout if result.returncode == 0 else ""
        self.lines = self.text.splitlines()

    def __bool__(self) -> bool:
        return bool(self.text)

    def cite(self, line: int) -> str:
        return f"{self.tag}:{self.path}:{line}"

    def body(self, signature: str) -> tuple[int, list[str]]:
        """The lines of the method whose declaration contains ``signature`` (up to its closing brace at the same
        indentation), and the 1-based number of the declaration line; (0, []) when absent."""
        for index, line in enumerate(self.lines):
            if re.search(signature, line):
                indent = len(line) - len(line.lstrip())
                end = index + 1
                while end < len(self.lines):
                    text = self.lines[end]
                    if text.strip() == "}" and len(text) - len(text.lstrip()) == indent:
                        break
                    end += 1
                return index + 1, self.lines[index : end + 1]
        return 0, []


def _case(test: str, source: Source, line: int, kind: str, **fields: Any) -> Case:
    return {"test": test, "source": source.cite(line), "kind": kind, **fields}


# ---------------------------------------------------------------------------------------------------------------
# Constants: config names as the tag's sources spell them.


def _constants(git: Path, tag: str) -> dict[str, str]:
    """Every ``NAME = "literal"`` and ``NAME = OTHER.NAME`` of the config classes at ``tag``, resolved to strings,
    keyed by the bare name."""
    literal: dict[str, str] = {}
    alias: dict[str, str] = {}
    for path in (TOPIC_CONFIG, LOG_CONFIG_SCALA, LOG_CONFIG_JAVA, QUOTA_CONFIGS):
        for line in Source(git, tag, path).lines:
            match = re.search(r'\b(\w+)\s*(?::\s*String)?\s*=\s*"([^"]*)"\s*;?\s*$', line)
            if match:
                literal[match[1]] = match[2]
                continue
            match = re.search(r"\b(\w+)\s*(?::\s*String)?\s*=\s*(?:\w+\.)?([A-Z]\w+)\s*;?\s*$", line)
            if match:
                alias[match[1]] = match[2]
    for name, target in alias.items():
        if target in literal and name not in literal:
            literal[name] = literal[target]
    return literal


def _resolve(expression: str, constants: dict[str, str]) -> str:
    bare = expression.strip().rsplit(".", 1)[-1]
    if expression.strip().startswith('"'):
        return expression.strip().strip('"')
    return constants[bare]


def _defined_topic_configs(git: Path, tag: str, constants: dict[str, str]) -> list[str]:
    """The keys the tag's topic ``LogConfig`` defines (``define``/``defineInternal``), as ``LogConfig.configNames``
    lists them."""
    scala = Source(git, tag, LOG_CONFIG_SCALA)
    if scala and "new LogConfigDef()" in scala.text:
        start = scala.text.index("new LogConfigDef()")
        chain = scala.text[start : scala.text.index("\n  }", start)]
    else:
        java = Source(git, tag, LOG_CONFIG_JAVA)
        start = java.text.index("CONFIG = new LogConfigDef();")
        chain = java.text[start : java.text.index("\n    }", start)]
    names = re.findall(r"\.define(?:Internal)?\(\s*([\w.]+)\s*,", chain)
    return [_resolve(name, constants) for name in names]


# ---------------------------------------------------------------------------------------------------------------
# The extractions.


def version_cases(git: Path, line: ReleaseLine) -> Iterator[Case]:
    """Every string the line's version parser maps to a version: accepted as ``message.format.version``."""
    if line.version < (3, 3):
        source = Source(git, line.tag, API_VERSION_TEST)
        test, start_pattern = "ApiVersionTest.testApply", r"def testApply\b"
        pattern = re.compile(r'assertEquals\(KAFKA_\w+, ApiVersion\("([^"]*)"\)\)')
    else:
        source = Source(git, line.tag, METADATA_VERSION_TEST)
        test, start_pattern = "MetadataVersionTest.testFromVersionString", r"void testFromVersionString\b"
        pattern = re.compile(r'assertEquals\(IBP_\w+, MetadataVersion\.fromVersionString\("([^"]*)"\)\)')
    start, body = source.body(start_pattern)
    for offset, text in enumerate(body):
        for value in pattern.findall(text):
            yield _case(test, source, start + offset, "config", config={"message.format.version": value},
                        expect="accepted")  # fmt: skip


def _string_args(text: str) -> list[str]:
    return re.findall(r'"((?:[^"\\]|\\.)*)"', text)


def log_config_cases(git: Path, line: ReleaseLine) -> Iterator[Case]:
    source = Source(git, line.tag, LOG_CONFIG_TEST)
    constants = _constants(git, line.tag)
    yield from _from_props_invalid(source, constants, _defined_topic_configs(git, line.tag, constants))
    start, body = source.body(r"def testFromPropsEmpty\b")
    if body:
        yield _case("LogConfigTest.testFromPropsEmpty", source, start, "config", config={}, expect="accepted")
    yield from _throttled(source)
    yield from _compaction_lag(source, constants)
    yield from _local_retention(source)
    yield from _tiered_storage(source, constants)


def _from_props_invalid(source: Source, constants: dict[str, str], names: list[str]) -> Iterator[Case]:
    """``testFromPropsInvalid``: for every defined key, each value its ``case`` (or the catch-all) refuses."""
    start, body = source.body(r"def testFromPropsInvalid\b")
    special: dict[str, tuple[int, list[str]]] = {}
    fallback: tuple[int, list[str]] = (0, [])
    for offset, text in enumerate(body):
        match = re.search(r"case\s+([A-Za-z][\w.]*)\s*=>\s*assertPropertyInvalid\(name,(.*)\)", text)
        if match:
            special[_resolve(match[1], constants)] = (start + offset, _string_args(match[2]))
        match = re.search(r"case\s+_\s*=>\s*assertPropertyInvalid\(name,(.*)\)", text)
        if match:
            fallback = (start + offset, _string_args(match[1]))
    for name in names:
        at, values = special.get(name, fallback)
        for value in values:
            yield _case("LogConfigTest.testFromPropsInvalid", source, at, "config", config={name: value},
                        expect="refused", error="Exception", field=f"config.{name}")  # fmt: skip


def _throttled(source: Source) -> Iterator[Case]:
    start, body = source.body(r"def shouldValidateThrottledReplicasConfig\b")
    for offset, text in enumerate(body):
        match = re.search(r'assert(True|False)\(isValid\("(.*)"\)\)', text)
        if match:
            expect = "accepted" if match[1] == "True" else "refused"
            extra = {"error": "ConfigException", "field": "config.leader.replication.throttled.replicas"}
            yield _case("LogConfigTest.shouldValidateThrottledReplicasConfig", source, start + offset, "config",
                        config={"leader.replication.throttled.replicas": match[2]}, expect=expect,
                        **(extra if expect == "refused" else {}))  # fmt: skip


def _props_of(lines: list[str], constants: dict[str, str], variable: str = "props") -> dict[str, str]:
    found: dict[str, str] = {}
    for text in lines:
        match = re.search(rf"\b{variable}\.(?:put|setProperty)\(([\w.]+),\s*\"([^\"]*)\"", text)
        if match:
            found[_resolve(match[1], constants)] = match[2]
    return found


def _error_class(text: str) -> str | None:
    match = re.search(r"(?:assertThrows\(classOf\[|intercept\[)(\w+)\]", text)
    return match[1] if match else None


def _compaction_lag(source: Source, constants: dict[str, str]) -> Iterator[Case]:
    start, body = source.body(r"def testInvalidCompactionLagConfig\b")
    if not body:
        return
    error = next((e for t in body if (e := _error_class(t))), "Exception")
    at = start + next(i for i, t in enumerate(body) if _error_class(t))
    yield _case("LogConfigTest.testInvalidCompactionLagConfig", source, at, "config",
                config=_props_of(body, constants), expect="refused", error=error)  # fmt: skip


def _local_retention(source: Source) -> Iterator[Case]:
    """``testLocalLogRetentionProps``/``DerivedProps`` take a config; ``testInvalidLocalLogRetentionProps`` calls a
    helper whose parameters, and whether it enables tiered storage, are read from the helper itself."""
    for test, fields in (
        ("testLocalLogRetentionProps", None),
        ("testLocalLogRetentionDerivedProps", None),
    ):
        start, body = source.body(rf"def {test}\b")
        if not body:
            continue
        config: dict[str, str] = {}
        values = {m[1]: m[2] for t in body if (m := re.search(r"val (\w+) = (\d+)L?\b", t))}
        for text in body:
            match = re.search(r"props\.put\((?:TopicConfig|LogConfig)\.(\w+), (\w+|\d+)\.toString\)", text)
            if match:
                key = {
                    "RETENTION_BYTES_CONFIG": "retention.bytes", "RetentionBytesProp": "retention.bytes",
                    "RETENTION_MS_CONFIG": "retention.ms", "RetentionMsProp": "retention.ms",
                    "LOCAL_LOG_RETENTION_MS_CONFIG": "local.retention.ms", "LocalLogRetentionMsProp": "local.retention.ms",
                    "LOCAL_LOG_RETENTION_BYTES_CONFIG": "local.retention.bytes",
                    "LocalLogRetentionBytesProp": "local.retention.bytes",
                }[match[1]]  # fmt: skip
                config[key] = values.get(match[2], match[2])
        del fields
        yield _case(f"LogConfigTest.{test}", source, start, "config", config=config, expect="accepted")
    start, body = source.body(r"def testInvalidLocalLogRetentionProps\b")
    helper_start, helper = source.body(r"def doTestInvalidLocalLogRetentionProps\(")
    if not body or not helper:
        return
    parameters = re.findall(r"(\w+): (?:Long|Int)", " ".join(helper[:6]))
    tiered = any("REMOTE_LOG_STORAGE_SYSTEM_ENABLE_PROP" in t for t in helper)
    error = next((e for t in helper if (e := _error_class(t))), "Exception")
    names = {
        "localRetentionMs": "local.retention.ms", "localRetentionBytes": "local.retention.bytes",
        "retentionBytes": "retention.bytes", "retentionMs": "retention.ms",
    }  # fmt: skip
    for offset, text in enumerate(body):
        match = re.search(r"doTestInvalidLocalLogRetentionProps\(([^)]*)\)", text)
        if not match:
            continue
        arguments = [a.strip().rstrip("L") for a in match[1].split(",")]
        config = {names[p]: a for p, a in zip(parameters, arguments, strict=True)}
        broker: dict[str, str] = {}
        if tiered:
            config["remote.storage.enable"] = "true"
            broker["remote.log.storage.system.enable"] = "true"
        yield _case("LogConfigTest.testInvalidLocalLogRetentionProps", source, start + offset, "config",
                    config=config, broker=broker, expect="refused", error=error,
                    helper=source.cite(helper_start))  # fmt: skip


def _tiered_storage(source: Source, constants: dict[str, str]) -> Iterator[Case]:
    """3.6+: the broker's path (``LogConfig.validate`` with the broker's config). Each test builds a broker
    config and a topic config, then calls validate; a parameterised test runs once per value of its
    ``@ValueSource``, taking the ``if`` branch for true and the ``else`` branch for false."""
    yield from _compacted_topic(source, constants)
    for test in (
        "testEnableRemoteLogStorage",
        "testTopicCreationWithInvalidRetentionTime",
        "testTopicCreationWithInvalidRetentionSize",
    ):
        start, body = source.body(rf"def {test}\(")
        if not body:
            continue
        for enabled in (True, False):
            flag = "true" if enabled else "false"
            broker = {
                BROKER_KEYS[m[1]]: (flag if m[2] else m[3])
                for t in body
                if (m := re.search(r"kafkaProps\.put\(\w+\.(\w+), (?:(\w+)\.toString|\"([^\"]*)\")", t))
                or (m := re.search(r"\bprops\.put\(\w+\.(\w+), (?:(\w+)\.toString|\"([^\"]*)\")", t))
            }
            config = {}
            for text in body:
                match = re.search(r"logProps\.put\(([\w.]+), (?:(\w+)\.toString|\"([^\"]*)\")", text)
                if match:
                    config[_resolve(match[1], constants)] = flag if match[2] else match[3]
            branch = "if" if enabled else "else"
            refused = _branch_throws(body, branch)
            fields: dict[str, Any] = (
                {"expect": "refused", "error": "ConfigException"} if refused else {"expect": "accepted"}
            )
            message = next((m[1] for t in body if (m := re.search(r"contains\(\"([^\"]+)\"\)", t))), None)
            if refused and message:
                fields["message"] = message
            elif refused:
                key = next(
                    (m[1] for t in body if (m := re.search(r"contains\(TopicConfig\.(\w+)\)", t))), None
                )
                if key:
                    fields["message"] = constants[key]
            yield _case(f"LogConfigTest.{test}[{flag}]", source, start, "config", config=config, broker=broker,
                        branch=branch, **fields)  # fmt: skip
    start, body = source.body(r"def testInValidRemoteConfigsInZK\(")
    if body:
        keys = re.findall(r"TopicConfig\.(\w+)", " ".join(body[:2]))
        message = next((m[1] for t in body if (m := re.search(r'contains\("([^"]+)"', t))), None)
        for key in keys:
            name = constants[key]
            yield _case(f"LogConfigTest.testInValidRemoteConfigsInZK[{name}]", source, start, "config",
                        config={name: "true"}, broker={"remote.log.storage.system.enable": "true"},
                        expect="refused", error="InvalidConfigurationException", message=message)  # fmt: skip


def _branch_throws(body: list[str], branch: str) -> bool:
    """Whether the ``if (<flag>)`` branch (or its ``else``) of a parameterised test asserts a throw."""
    opening = next(i for i, t in enumerate(body) if re.search(r"\bif \(\w+\)", t))
    middle = next(i for i, t in enumerate(body) if "} else {" in t and i > opening)
    lines = body[opening:middle] if branch == "if" else body[middle:]
    return any("assertThrows" in t for t in lines)


def _compacted_topic(source: Source, constants: dict[str, str]) -> Iterator[Case]:
    """``testEnableRemoteLogStorageOnCompactedTopic``: the props are changed between calls; each call is a case
    of the props as they are then."""
    start, body = source.body(r"def testEnableRemoteLogStorageOnCompactedTopic\b")
    if not body:
        return
    broker = {
        BROKER_KEYS[m[1]]: m[2]
        for t in body
        if (m := re.search(r"kafkaProps\.put\(\w+\.(\w+), \"([^\"]*)\"", t))
    }
    props: dict[str, str] = {}
    pending_error: str | None = None
    for offset, text in enumerate(body):
        match = re.search(r"logProps\.put\(([\w.]+), ([\w.]+|\"[^\"]*\")\)", text)
        if match:
            value = match[2].strip('"') if match[2].startswith('"') else _resolve(match[2], constants)
            props[_resolve(match[1], constants)] = value
            continue
        error = _error_class(text)
        if error:
            pending_error = error
        if "LogConfig.validate(" in text:
            fields = (
                {"expect": "refused", "error": pending_error} if pending_error else {"expect": "accepted"}
            )
            yield _case("LogConfigTest.testEnableRemoteLogStorageOnCompactedTopic", source, start + offset,
                        "config", config=dict(props), broker=broker, **fields)  # fmt: skip
            pending_error = None


def _java_char(literal: str) -> str:
    escapes = {"\\\\": "\\", "\\'": "'", "\\t": "\t", "\\r": "\r", "\\n": "\n", '\\"': '"'}
    if literal in escapes:
        return escapes[literal]
    if literal.startswith("\\u"):
        return chr(int(literal[2:], 16))
    return literal


def topic_cases(git: Path, line: ReleaseLine) -> Iterator[Case]:
    source = Source(git, line.tag, TOPIC_TEST)
    start, body = source.body(r"void shouldAcceptValidTopicNames\b")
    text = " ".join(body)
    length = int(re.search(r"randomString\((\d+)\)", text)[1])
    names = [
        n if n else ""
        for n in re.findall(r'"([^"]*)"', re.search(r"\{(.*?)\}", text[text.index("validTopicNames") :])[1])
    ]
    names.append("r" * length)  # TestUtils.randomString(249): letters and digits, any of them will do
    for name in names:
        yield _case(
            "TopicTest.shouldAcceptValidTopicNames", source, start, "topic_name", name=name, expect="accepted"
        )
    start, body = source.body(r"void shouldThrowOnInvalidTopicNames\b")
    text = " ".join(body)
    length = int(re.search(r"new char\[(\d+)\]", text)[1])
    listed = re.search(r"invalidTopicNames = \{(.*?)\};", text)[1]
    for name in [*re.findall(r'"([^"]*)"', listed), "a" * length]:
        yield _case("TopicTest.shouldThrowOnInvalidTopicNames", source, start, "topic_name", name=name,
                    expect="refused", error="InvalidTopicException")  # fmt: skip
    start, body = source.body(r"void shouldRecognizeInvalidCharactersInTopicNames\b")
    chars = re.findall(r"'((?:\\u[0-9a-fA-F]{4})|\\.|[^'\\])'", " ".join(body))
    for char in chars:
        yield _case("TopicTest.shouldRecognizeInvalidCharactersInTopicNames", source, start, "topic_name",
                    name=f"Is {_java_char(char)}illegal", expect="refused", error="InvalidTopicException")  # fmt: skip
    start, body = source.body(r"void testTopicHasCollisionChars\b")
    text = " ".join(body)
    false_names = re.findall(r'"([^"]*)"', re.search(r"falseTopics = Arrays\.asList\((.*?)\)", text)[1])
    true_names = re.findall(r'"([^"]*)"', re.search(r"trueTopics = Arrays\.asList\((.*?)\)", text)[1])
    for name, expected in [*((n, False) for n in false_names), *((n, True) for n in true_names)]:
        yield _case("TopicTest.testTopicHasCollisionChars", source, start, "collision_chars", name=name,
                    expect=expected)  # fmt: skip
    start, body = source.body(r"void testUnifyCollisionChars\b")
    for offset, text in enumerate(body):
        match = re.search(r'assertEquals\("([^"]*)", Topic\.unifyCollisionChars\("([^"]*)"\)\)', text)
        if match:
            yield _case("TopicTest.testUnifyCollisionChars", source, start + offset, "unify", name=match[2],
                        expect=match[1])  # fmt: skip
    start, body = source.body(r"void testTopicHasCollision\b")
    text = " ".join(body)
    periods = re.findall(
        r'"([^"]*)"', re.search(r"periodFirstMiddleLastNone = Arrays\.asList\((.*?)\)", text)[1]
    )
    underscores = re.findall(
        r'"([^"]*)"', re.search(r"underscoreFirstMiddleLastNone = Arrays\.asList\((.*?)\)", text)[1]
    )
    pairs = [(t, t, True) for t in periods] + [(t, t, True) for t in underscores]
    pairs += [(a, b, True) for a, b in zip(periods, underscores, strict=True)]
    pairs += [(a, b, False) for a, b in zip(periods, list(reversed(underscores)), strict=True)]
    for a, b, expected in pairs:
        yield _case("TopicTest.testTopicHasCollision", source, start, "collision", a=a, b=b, expect=expected)


def _scala_assignment(text: str) -> dict[str, list[int]]:
    assignment: dict[str, list[int]] = {}
    for partition, replicas in re.findall(r"(-?\d+)\s*->\s*(?:Seq|List)\(([^)]*)\)", text):
        assignment[partition] = [int(r) for r in replicas.split(",") if r.strip()]
    return assignment


def admin_cases(git: Path, line: ReleaseLine) -> Iterator[Case]:
    source = Source(git, line.tag, ADMIN_ZK_CLIENT_TEST)
    start, body = source.body(r"def testManualReplicaAssignment\b")
    error: str | None = None
    for offset, text in enumerate(body):
        error = _error_class(text) or error
        if (
            re.search(r"createTopicWithAssignment\(|createOrUpdateTopicPartitionAssignmentPathInZK\(", text)
            and error
        ):
            yield _case("AdminZkClientTest.testManualReplicaAssignment", source, start + offset,
                        "replica_assignment", assignment=_scala_assignment(text), expect="refused", error=error)  # fmt: skip
            error = None
    text = "\n".join(body)
    good = re.search(r"val assignment = (Map\(.*?\)\))", text, re.S)
    if good:
        at = start + next(i for i, t in enumerate(body) if "val assignment = Map" in t)
        yield _case("AdminZkClientTest.testManualReplicaAssignment", source, at, "replica_assignment",
                    assignment=_scala_assignment(good[1]), expect="accepted")  # fmt: skip


def reassign_cases(git: Path, line: ReleaseLine) -> Iterator[Case]:
    source = Source(git, line.tag, REASSIGN_ZNODE_TEST)
    json_line = next((i + 1 for i, t in enumerate(source.lines) if "reassignmentJson = " in t), 0)
    if not json_line:
        return
    payload = re.search(r'"""(.*)"""', source.lines[json_line - 1])[1]
    values = {m[1]: m[2] for t in source.lines if (m := re.search(r"private val (\w+) = (\"?\w+\"?)", t))}
    topic, partition = values["topic"].strip('"'), int(values["partition1"])
    replicas = [int(values["replica1"]), int(values["replica2"])]
    start, _ = source.body(r"def testEncode\b")
    yield _case("ReassignPartitionsZNodeTest.testEncode", source, start, "reassign_request", topic=topic,
                partition=partition, replicas=replicas, json=payload, expect="encoded")  # fmt: skip
    start, _ = source.body(r"def testDecodeValidJson\b")
    yield _case("ReassignPartitionsZNodeTest.testDecodeValidJson", source, start, "reassign_request", topic=topic,
                partition=partition, replicas=replicas, json=payload, expect="decoded")  # fmt: skip
    start, body = source.body(r"def testDecodeInvalidJson\b")
    bad = next((m[1] for t in body if (m := re.search(r'decode\("([^"]*)"\.getBytes', t))), None)
    if bad is not None:
        yield _case("ReassignPartitionsZNodeTest.testDecodeInvalidJson", source, start, "reassign_request",
                    json=bad, expect="refused")  # fmt: skip


def cases_of(git: Path, line: ReleaseLine) -> list[Case]:
    found: list[Case] = []
    for extract in (version_cases, log_config_cases, topic_cases, admin_cases, reassign_cases):
        found.extend(extract(git, line))
    for number, case in enumerate(found, 1):
        case["id"] = f"{line.name}#{number:03d} {case['test']}"
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument(
        "--kafka-git", type=Path, required=True, help="the .git directory of a clone of apache/kafka"
    )
    args = parser.parse_args(argv)
    for line in RELEASE_LINES:
        cases = cases_of(args.kafka_git, line)
        rows = ",\n".join(json.dumps(case, ensure_ascii=False) for case in cases)
        head = json.dumps({"line": line.name, "tag": line.tag})[:-1]
        (HERE / f"{line.name}.json").write_text(f'{head}, "cases": [\n{rows}\n]}}\n')
        print(f"Kafka {line.name} ({line.tag}): {len(cases)} cases")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
