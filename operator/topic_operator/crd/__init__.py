"""The CRDs as package data (``*.kto.dev.yaml``, byte-identical to the repository's ``crds/``) and their CEL rules.

``cel_rules`` evaluates the CRDs' ``x-kubernetes-validations`` with cel-python, as the API server does;
``cel_equivalents`` holds a Python function per rule, held to cel-python's verdict by the tests, for speed.
The YAML files are here so that the schema the loader applies is the one installed in the cluster, in a checkout,
an installed wheel and the image alike.

May import: the standard library and cel-python (only when a rule has no Python equivalent). Nothing of the
project's: every other layer may read the CRDs, so they sit below all of it.
"""
