"""The Kubernetes face of the engine: kopf handlers for KafkaTopic and KafkaCluster, and what they need.

The only package that imports kopf or a Kubernetes client. Every decision about Kafka (what to create, grow,
change, refuse) is the engine's (``plan``/``reconcile``); what lives here is translation (CR bodies -> specs,
results -> status, conditions and Events), scheduling (batching, the drift timer) and safety (ownership,
finalizers, pause, the grants of other namespaces). The pure parts (settings, conditions, status, ownership,
deletion) are small modules with no kopf import, tested without any server.

From the top: ``command`` (``kto run``'s flags) and ``operate`` (its steps: the Lease, the probes, kopf), then
``handlers`` (what kopf calls), then the jobs: ``kafkatopics/`` (a KafkaTopic's reconcile and the work queue of
them, ownership, deletion, the admission webhook) above ``kafkaclusters/`` (a KafkaCluster's handle, link, batches,
status and session keeper), which imports nothing of it. ``context`` is what every handler shares. Below them all:
``process/`` (settings, the leader Lease, probes, metrics, login, the seam to the API server), and the records
each part hands the others (``records``, ``census``, ``status``, ``conditions``, ``bodies``), which import no part
above them. The import contracts hold that order.

May import: the engine (``reconcile``, ``plan``, ``plan_output``, ``model``, ``tenants``),
``access/`` (the one way into a cluster), ``manifests/``, ``zookeeper/``, ``admin/``, ``kafka/``, kopf, lightkube and prometheus-client. Never ``drift/``, ``cli/`` or Spark.
"""
