"""``kto``, the command line: one module per command (``validate``, ``plan``, ``apply``, ``describe``, ``snapshot``,
``export``, ``demo``, ``convert``), each adding its own parser (``register``) and running it (``run``), and
``main``, which gathers them. What several share: ``options`` (exit codes, common flags), ``declared`` (the cluster
from manifests or a snapshot), ``stores`` (the way in, through ``access``) and ``output_files``. ``kto run`` and
``kto drift`` are registered by ``k8s/`` and ``drift/`` themselves, so each face keeps its options beside its code.

The top of the import graph: it may import every other package; nothing imports it. Most imports happen inside each
command's function, so ``kto validate`` starts without loading kazoo, kopf or Spark.
"""
