"""Broker-side policies a test compiles and gives a KRaft cluster: a CreateTopicPolicy that refuses topics named
``debug-*`` and an AlterConfigPolicy that refuses ``retention.ms`` -1 on topics named ``kept-*``. Kafka runs
them on its controller (and loads them on its brokers too); their refusals are ``PolicyViolationException`` in
their own words, which the product must carry to a KafkaTopic's status. Names no other test uses, so a cluster
that runs them serves every other test unchanged."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from harness.kraft_cluster import KRaftCluster

__all__ = ["ALTER_REFUSAL", "CREATE_REFUSAL", "runs_policies", "with_policies"]

CREATE_REFUSAL = "The platform keeps no debug- topics: "
ALTER_REFUSAL = "The platform keeps nothing forever: retention.ms -1 on "

_SOURCES = {
    "NoDebugTopics": f"""
import java.util.Map;
import org.apache.kafka.common.errors.PolicyViolationException;
import org.apache.kafka.server.policy.CreateTopicPolicy;

public class NoDebugTopics implements CreateTopicPolicy {{
    public void configure(Map<String, ?> configs) {{}}
    public void close() {{}}
    public void validate(RequestMetadata request) throws PolicyViolationException {{
        if (request.topic().startsWith("debug-"))
            throw new PolicyViolationException("{CREATE_REFUSAL}" + request.topic());
    }}
}}
""",
    "NoEndlessRetention": f"""
import java.util.Map;
import org.apache.kafka.common.errors.PolicyViolationException;
import org.apache.kafka.server.policy.AlterConfigPolicy;

public class NoEndlessRetention implements AlterConfigPolicy {{
    public void configure(Map<String, ?> configs) {{}}
    public void close() {{}}
    public void validate(RequestMetadata request) throws PolicyViolationException {{
        String topic = request.resource().name();
        if (topic.startsWith("kept-") && "-1".equals(request.configs().get("retention.ms")))
            throw new PolicyViolationException("{ALTER_REFUSAL}" + topic);
    }}
}}
""",
}


def with_policies(cluster: KRaftCluster, directory: Path) -> bool:
    """Compile the policies (javac, against the distribution's kafka-clients) into ``directory`` and set them on
    every node of ``cluster``, before it starts; False, and nothing set, where no javac is installed."""
    javac = shutil.which("javac")
    if javac is None:
        return False
    classes = directory / "classes"
    classes.mkdir(parents=True, exist_ok=True)
    for name, source in _SOURCES.items():
        (directory / f"{name}.java").write_text(source)
    clients = next(cluster.distribution.home.glob("libs/kafka-clients-*.jar"))
    subprocess.run([javac, "-cp", str(clients), "-d", str(classes), *map(str, sorted(directory.glob("*.java")))],
                   check=True, capture_output=True, timeout=120)  # fmt: skip
    for nodes in (cluster, cluster.controller):
        nodes.classpath = str(classes)
        nodes.extra_settings = {
            "create.topic.policy.class.name": "NoDebugTopics",
            "alter.config.policy.class.name": "NoEndlessRetention",
        }
    return True


def runs_policies(cluster: KRaftCluster) -> bool:
    """Whether ``with_policies`` gave the cluster its policies."""
    return "create.topic.policy.class.name" in cluster.controller.extra_settings
