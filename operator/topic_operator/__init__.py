"""kafka-topic-operator: topics as code for Apache Kafka, KRaft and ZooKeeper-mode clusters alike.

One engine (read the cluster from ZooKeeper, plan with Kafka's own rules, write only the difference) behind three
faces: a kopf operator, the ``kto`` CLI and a PySpark drift planner. See ``kafka`` for the pure port of Kafka's rules.
"""

__version__ = "0.1.0"
