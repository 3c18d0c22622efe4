"""A test kit, not the product: a ZooKeeper server on 127.0.0.1 (``local_server``) and brokers that register and
act as Kafka's own do (``simulated_brokers``), for the test suite, the benches and ``kto demo``. The import
contracts keep every other module of the product from importing it."""
