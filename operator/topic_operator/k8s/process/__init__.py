"""The operator as a process: its settings, the leader Lease, the probes, the metrics, the login, kopf's persistence
settings, the process's tuning, and the one seam to the API server (``kube_api``). Parts that ``operate`` assembles:
none imports a job of the operator (``kafkatopics/``, ``kafkaclusters/``), its handlers or its context."""
