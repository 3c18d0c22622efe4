"""Documents in and out: manifests (kto.dev and Strimzi KafkaTopics, KafkaClusters, topicctl files) -> specs, and
specs -> KafkaTopic documents.

``loader`` is the entry (``load_manifests``, ``load_objects``); it reads files within ``limits`` (``files``),
parses YAML bounded while it is parsed (``bounded_yaml``), checks each document against the CRD schema
(``schema``) and CEL rules (``crd/``), then against Kafka's rules (``kafka/``). ``topicctl`` converts topicctl
files and ``topic_documents`` writes specs back as documents.

May import: ``kafka/``, ``crd/``, ``model``, ``message_text``, ``connect_string``, and YAML and schema libraries.
Never ZooKeeper, Kubernetes, Spark or a face (``k8s/``, ``drift/``, ``cli/``): validating a manifest reads files
and nothing else, so ``kto validate`` runs in CI with no access to any cluster.
"""
