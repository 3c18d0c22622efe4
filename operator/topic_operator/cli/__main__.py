"""``python -m topic_operator.cli``: ``kto`` without the console script (how the tests run it as a process)."""

from topic_operator.cli.main import main

if __name__ == "__main__":
    raise SystemExit(main())
