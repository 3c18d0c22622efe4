"""``kto``, the command line: one parser (``main``) and a module per command that has grown past a few lines
(``convert``, ``export``, ``describe``, ``demo``). ``kto run`` and ``kto drift`` are registered by ``k8s/`` and
``drift/`` themselves (their ``command`` modules), so each face keeps its options beside its code.

The top of the import graph: it may import every other package; nothing imports it. Most imports here happen
inside each command's function, so ``kto validate`` starts without loading kazoo, kopf or Spark.
"""
