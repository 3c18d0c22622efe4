"""``kto validate`` at scale: 100,000 small KafkaTopic documents in one file, every rule checked.

Target (this 2-core machine): 100,000 documents in <= 30 s, end to end as CI runs it (a new process:
start-up, reading, YAML, the CRD schema, the CEL rules, Kafka's rules). Before this target, one 50 MB file of
328,000 such documents did not finish in 400 s. Also printed: where the time goes in one process (YAML alone,
then the checks), peak RSS, and the load average, since the machine is shared and figures move with it.

The documents vary as a repository does: names, partition counts, namespaces, a few config sets, and one topic in
ten with a replicaAssignment, so the fast paths (the schema's generated code, the CEL rules' Python functions,
remembered configs) are exercised with every rule still evaluated on every document.

Run: ``make bench`` or ``.venv/bin/python bench/validate.py [--documents N]``.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from topic_operator.manifests.bounded_yaml import LoadBudget, yaml_documents
from topic_operator.manifests.limits import DEFAULT_LIMITS
from topic_operator.manifests.loader import load_manifests

TARGET_SECONDS = 30.0
TARGET_DOCUMENTS = 100_000
CONFIGS = (
    "    retention.ms: 604800000\n    cleanup.policy: delete\n",
    "    retention.ms: 86400000\n    min.insync.replicas: 2\n    compression.type: zstd\n",
    "    cleanup.policy: compact\n    min.compaction.lag.ms: 60000\n",
    "    retention.bytes: 1073741824\n    segment.bytes: 268435456\n    max.message.bytes: 2097152\n",
)


def write_manifests(path: Path, documents: int) -> None:
    """A KafkaCluster, then ``documents`` KafkaTopics (about 230 bytes each)."""
    with path.open("w") as out:
        out.write(
            "apiVersion: kto.dev/v1alpha1\nkind: KafkaCluster\nmetadata: {name: bench, namespace: kafka}\n"
            "spec: {zookeeper: {connect: 'zk-0:2181,zk-1:2181/kafka'}}\n"
        )
        for i in range(documents):
            partitions = 1 + i % 24
            assignment = ""
            if i % 10 == 0:
                rows = ", ".join(f"[{p % 6}, {(p + 1) % 6}, {(p + 2) % 6}]" for p in range(partitions))
                assignment = f"  replicaAssignment: [{rows}]\n"
            out.write(
                f"---\napiVersion: kto.dev/v1alpha1\nkind: KafkaTopic\nmetadata:\n  name: team-{i % 97}.topic-{i}\n"
                f"  namespace: kafka\nspec:\n  cluster: bench\n  partitions: {partitions}\n  replicas: 3\n"
                f"{assignment}  config:\n{CONFIGS[i % len(CONFIGS)]}"
            )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=TARGET_DOCUMENTS)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="kto-bench-validate-") as directory:
        manifest = Path(directory) / "topics.yaml"
        write_manifests(manifest, args.documents)
        size_mb = manifest.stat().st_size / 1e6
        load_before = os.getloadavg()

        kto = Path(sys.executable).with_name("kto")
        started = time.perf_counter()
        completed = subprocess.run(
            [str(kto), "validate", str(manifest)], capture_output=True, text=True, check=False, timeout=900
        )
        end_to_end = time.perf_counter() - started
        child_rss_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        summary = completed.stdout.strip().splitlines()[-1] if completed.stdout.strip() else completed.stderr
        if completed.returncode != 0:
            print(f"kto validate failed (exit {completed.returncode}): {summary}")
            print(completed.stdout[-2000:] + completed.stderr[-2000:])
            return 1

        text = manifest.read_text()
        started = time.perf_counter()
        parsed = sum(1 for _ in yaml_documents(text, LoadBudget(DEFAULT_LIMITS)))
        yaml_seconds = time.perf_counter() - started
        started = time.perf_counter()
        manifests = load_manifests([manifest], check_cel=True)
        in_process = time.perf_counter() - started
        load_after = os.getloadavg()

    per_second = args.documents / end_to_end
    print(f"kto validate: {args.documents:,} topic documents, one {size_mb:.1f} MB file")
    print(f"  summary:            {summary}")
    print(
        f"  end to end:         {end_to_end:.1f} s ({per_second:,.0f} documents/s), peak RSS {child_rss_mb:.0f} MB"
    )
    print(
        f"  in one process:     {in_process:.1f} s = YAML {yaml_seconds:.1f} s ({parsed:,} documents) + checks "
        f"{in_process - yaml_seconds:.1f} s; {len(manifests.topics):,} topics valid"
    )
    print(
        f"  load average:       {load_before[0]:.2f} before, {load_after[0]:.2f} after "
        f"({os.cpu_count()} CPUs, shared)"
    )
    if args.documents == TARGET_DOCUMENTS:
        met = "met" if end_to_end <= TARGET_SECONDS else "NOT met"
        print(f"  target:             {TARGET_DOCUMENTS:,} documents <= {TARGET_SECONDS:.0f} s: {met}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
