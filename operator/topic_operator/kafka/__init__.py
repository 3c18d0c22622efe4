"""A pure Python port of Kafka's topic-administration rules (ZooKeeper mode, Kafka 3.4 semantics).

Names (``topic_names``), replica placement (``assignment``), topic configs (``topic_configs``) and the exceptions
Kafka answers with (``errors``). Nothing here does I/O or imports a shell (ZooKeeper, Kubernetes, Spark): the planner,
the operator, the CLI and the Spark job all call these same functions, so they agree on every rule.

May import: the standard library and ``message_text``. Nothing else of the project's.
"""
