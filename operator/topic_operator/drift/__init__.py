"""Fleet drift: the declared topics of many clusters against snapshots of those clusters, planned on Spark.

The package is the only code in the project that imports pyspark, and it does so only in the modules that run
the job (``inputs``, ``job``, ``session``, ``progress``). The rest is importable without Spark: what the job does
for one cluster (``cluster_drift``: read its snapshot lines, plan, classify) and its Arrow wrapper for Spark's
Python tasks (``arrow_stage``), the planner's per-cluster entry (``planning``), the drift kinds (``kinds``), the
rules every finding follows (``rules``) and the HTML report (``report``). ``command`` adds ``kto drift`` and
imports Spark only when the command runs.

May import: the engine (``plan``, ``plan_output``, ``model``, ``snapshot_rows``), ``manifests/``, ``zookeeper/``
(live collection) and ``kafka/``. Never ``k8s/``, ``cli/`` or a Kubernetes client.
"""
