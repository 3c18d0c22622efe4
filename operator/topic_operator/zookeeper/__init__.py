"""The only code in the project that talks to ZooKeeper (kazoo), plus a local server launcher for tests and demos.

Codecs and paths (``znodes``), the connection (``connection``), reads (``snapshot``, ``watched``) and writes
(``writer``), all bounded in time (``bounded``).

May import: ``kafka/``, ``model``, ``plan`` (the actions the writer carries out), ``connect_string``,
``message_text`` and kazoo. Never ``manifests/``, a face (``k8s/``, ``drift/``, ``cli/``), kopf or Spark.
"""
