"""The operator as a process: ``kto run`` (``command``) and its settings, the leader Lease, the probes, the
metrics, the login, kopf's persistence settings, and the one seam to the API server (``kube_api``)."""
