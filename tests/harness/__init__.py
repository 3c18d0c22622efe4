"""Helpers behind the fixtures in ``tests/conftest.py``: real ZooKeeper servers and a real local SparkSession.

A regular package (not a namespace one) so ``import harness`` cannot merge with an unrelated ``harness`` directory.
"""
