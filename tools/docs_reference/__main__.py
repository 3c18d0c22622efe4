"""``python -m tools.docs_reference [--check]``: write the generated reference pages (and the chart's schema of
its ``clusters`` value, made from the CRD: ``chart_schema``), or check they are current.

Run from the repository root (``make docs-reference``). ``--check`` writes nothing and exits 1 naming each stale
page, its first differing line and the command that regenerates it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from tools.docs_reference import chart_schema
from tools.docs_reference.pages import render_all, stale_pages


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.docs_reference", description=__doc__)
    parser.add_argument("--check", action="store_true", help="compare the pages with the code; write nothing")
    parser.add_argument("--root", type=Path, default=Path.cwd(), help="the repository root (default: here)")
    args = parser.parse_args(argv)
    generated = render_all(args.root)
    schema = chart_schema.values_schema(args.root)
    if args.check:
        problems = stale_pages(args.root, generated)
        if (args.root / chart_schema.VALUES_SCHEMA).read_text() != schema:
            problems.append(
                f"{chart_schema.VALUES_SCHEMA}: its clusters entry is not what the KafkaCluster CRD makes of it; "
                f"regenerate it with `make docs-reference`"
            )
        for problem in problems:
            print(problem, file=sys.stderr)
        if not problems:
            print(f"{len(generated)} reference pages are current")
        return 1 if problems else 0
    for path, text in {**generated, chart_schema.VALUES_SCHEMA: schema}.items():
        target = args.root / path
        if not target.exists() or target.read_text() != text:
            target.write_text(text)
            print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
