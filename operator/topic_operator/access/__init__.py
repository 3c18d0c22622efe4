"""How a face reaches a cluster: an address (its ZooKeeper, its brokers with their client settings, or both) turned
into the engine's ``ClusterStore``, opened and closed in one place."""
