"""Fleet drift: the declared topics of many clusters against snapshots or live reads of those clusters, planned
on a pool of processes or on Spark.

The package is the only code in the project that imports pyspark, and it does so only in the modules that run
the Spark job (``inputs``, ``job``, ``session``). The rest is importable without Spark: what the job does for one
cluster (``cluster_drift``: read its snapshot lines, plan, classify) and its Arrow wrapper for Spark's Python tasks
and the processes engine's workers (``arrow_stage``), the processes engine (``processes``, its workers forked from
``fork_server``), the live reads (``live``, and ``live_readers``, which fork them from ``kto drift`` itself before
the engine is imported), the planner's per-cluster entry (``planning``), the drift kinds (``kinds``), the rules
every finding follows (``rules``) and the HTML report (``report``). ``command`` adds ``kto drift`` and imports
Spark only when the command runs.

May import: the engine (``plan``, ``plan_output``, ``model``, ``snapshot_rows``), ``manifests/``, ``access/`` (a
live read opens its cluster there, as every face does) and ``kafka/``. Never ``k8s/``, ``cli/`` or a Kubernetes
client.
"""
