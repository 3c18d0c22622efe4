"""An outage, timed: ``kto apply`` of a change to N topics while ZooKeeper is killed (or frozen) mid-batch.

For each outage length: N declared topics (RF 3 over six brokers in three racks), the batch started by a real
``kto apply --yes`` process, ZooKeeper killed with SIGKILL once a tenth of the batch has landed and restarted on the
same data directory (or SIGSTOPped and SIGCONTinued) ``outage`` seconds later. Prints how long ``kto apply``
took to return after the fault, its exit code and the per-topic outcomes, then checks that every topic is whole and
each outcome true. Outages shorter than ``--deadline`` must be ridden out (all applied, exit 0); longer ones must
end within the deadline plus a few seconds (exit 1, applied / not written / unknown).

Run: ``.venv/bin/python bench/outage.py [--topics 2000] [--change config|create|grow] [--fault kill|stop]
[--deadline 60] [--outages 5 20 90]``. It reuses the tests' harness (``tests/harness/outage.py``).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from harness.outage import (  # the harness lives with the tests
    CHROOT,
    apply_through_outage,
    assert_whole_and_truthful,
    declarations,
    kafka_server,
    kto,
)


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--topics", type=int, default=2000)
    parser.add_argument("--change", choices=("config", "create", "grow"), default="config")
    parser.add_argument("--fault", choices=("kill", "stop"), default="kill")
    parser.add_argument("--deadline", type=float, default=60.0)
    parser.add_argument("--outages", type=float, nargs="+", default=[5.0, 20.0, 90.0])
    args = parser.parse_args()
    print(f"load: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f} (1, 5, 15 min)")
    ok = True
    for outage in args.outages:
        with tempfile.TemporaryDirectory() as scratch, kafka_server() as server:
            before, after = declarations(Path(scratch), args.change, args.topics)
            connect = server.connect_string + CHROOT
            if before is not None:
                setup = kto("apply", "-f", str(before), "--zookeeper", connect, "--yes")
                if setup.wait(timeout=600) != 0:
                    raise SystemExit(
                        f"setting up {args.topics} topics failed: {setup.stderr.read() if setup.stderr else ''}"
                    )
            run = apply_through_outage(
                server, after, change=args.change, count=args.topics, fault=args.fault, outage=outage,
                deadline=args.deadline, scratch=Path(scratch), timeout=outage + args.deadline + 120,
            )  # fmt: skip
            assert_whole_and_truthful(connect, args.change, args.topics, run.outcomes)
            reason = run.stderr.strip().splitlines()[-1] if run.stderr.strip() else "(nothing on stderr)"
            print(f"{args.change} x {args.topics}, {run.summary()}; every topic whole, every outcome true")
            print(f"    stderr: {reason}")
            ridden_out = outage < args.deadline
            met = (
                (run.exit_code == 0 and set(run.counts) == {"applied"})
                if ridden_out
                else (run.exit_code == 1 and run.seconds_after_fault <= args.deadline + 10)
            )
            ok &= met
            print(
                f"    target ({'ridden out' if ridden_out else 'ended within deadline + 10 s'}): {'met' if met else 'MISSED'}"
            )
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
