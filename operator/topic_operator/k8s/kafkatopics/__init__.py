"""The KafkaTopic path: reconciling one (``topics``) and the operator's queue of that work
(``topic_work``), who owns a topic (``ownership``, ``claim_index``), the census, deletion, and the admission webhook."""
