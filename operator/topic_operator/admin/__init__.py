"""A cluster reached through Kafka's Admin protocol: KRaft clusters, and ZooKeeper-era clusters whose KRaft
controller is active. The only code that imports the Kafka client (kafka-python).

It reads a cluster into the same ``ClusterState`` the ZooKeeper store reads (``reader``), and writes the same
plan's actions as Admin requests, one request of each kind per batch (``writer``): explicit replica assignments
computed by the port of Kafka's placement, incremental config changes, partition reassignments, deletions.
"""
