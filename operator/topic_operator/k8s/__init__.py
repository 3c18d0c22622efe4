"""The Kubernetes face of the engine: kopf handlers for KafkaTopic and KafkaCluster, and what they need.

The only package that imports kopf or a Kubernetes client. Every decision about Kafka (what to create, grow,
change, refuse) is the engine's (``plan``/``reconcile``); what lives here is translation (CR bodies -> specs,
results -> status, conditions and Events), scheduling (batching, the drift timer) and safety (ownership,
finalizers, pause, the grants of other namespaces). The pure parts (settings, conditions, status, ownership,
deletion) are small modules with no kopf import, tested without any server.

By job: ``kafkatopics/`` (a KafkaTopic's reconcile and the work queue of them, ownership, deletion, the admission
webhook), ``kafkaclusters/`` (a KafkaCluster's handle, link, batches, status and session keeper), ``process/``
(``kto run``, its settings, the leader Lease, probes, metrics, login and the seam to the API server). At the top:
``handlers`` (what kopf calls), ``context`` (what every handler shares), the conditions and statuses.

May import: the engine (``reconcile``, ``plan``, ``plan_output``, ``model``, ``tenants``),
``manifests/``, ``zookeeper/``, ``admin/``, ``kafka/``, kopf, lightkube and prometheus-client. Never ``drift/``, ``cli/`` or Spark.
"""
