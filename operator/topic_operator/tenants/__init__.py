"""Tenants: the grants a KafkaCluster gives each namespace (``grants``: which names, how many topics, partitions and
bytes), and the rules that hold a plan to them (``rules``). Pure, over the model's plain data."""
