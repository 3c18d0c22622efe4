"""Kafka's own tests at each release line's tag, as data: the cases ``test_cases_from_kafkas_own_tests`` runs."""
