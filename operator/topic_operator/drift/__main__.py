"""``python -m topic_operator.drift`` and ``spark-submit .../topic_operator/drift/__main__.py``: ``kto drift``
without the rest of ``kto``, for a Spark cluster's submit step (the master then comes from spark-submit)."""

from topic_operator.drift.command import main

if __name__ == "__main__":
    raise SystemExit(main())
