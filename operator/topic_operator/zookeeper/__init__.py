"""The only code in the project that talks to ZooKeeper (kazoo), plus a local server launcher for tests and demos."""
