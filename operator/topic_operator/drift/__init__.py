"""Fleet drift: the declared topics of many clusters against snapshots of those clusters, planned on Spark.

The package is the only code in the project that imports pyspark, and it does so only in the modules that run
the job (``inputs``, ``job``, ``session``, ``progress``). The rest is pure and importable without Spark: the drift
kinds (``kinds``), the Python stage that runs the engine's planner for one cluster (``planning``), the reference
classification every finding is checked against (``rules``) and the HTML report (``report``). ``command`` adds
``kto drift`` and imports Spark only when the command runs.
"""
