"""Failures of reaching a cluster through its brokers, each with one message naming the servers and the cause.

Kafka's own refusals of a request (a per-topic error code and message) are ``topic_operator.kafka.errors``
classes, built by ``kafka.errors.error_for_code``; these are about the connection. Messages never carry a password.
"""

from __future__ import annotations

from topic_operator.access.interface import ClusterAccessError, ClusterUnavailableError

__all__ = [
    "AdminClientError",
    "AdminRequestError",
    "AdminSettingsError",
    "BrokersRefusedCredentialsError",
    "BrokersTlsError",
    "BrokersUnavailableError",
]


class AdminClientError(ClusterAccessError):
    """Base of every failure to reach a cluster through its brokers."""


class AdminSettingsError(AdminClientError, ValueError):
    """A client property, bootstrap address or credential that cannot be used: names the property, the value
    (never a secret's) and the rule."""


class AdminRequestError(AdminClientError):
    """A request failed in a way that is neither a refusal of the topic (those are per-topic results) nor the
    brokers being away: an error answer for the whole request, or a failure inside the client."""


class BrokersUnavailableError(AdminClientError, ClusterUnavailableError):
    """No broker answered (or kept answering) within the deadline."""


class BrokersRefusedCredentialsError(AdminClientError):
    """The brokers refused the SASL credentials, or the principal may not describe the cluster."""


class BrokersTlsError(AdminClientError):
    """The TLS handshake failed: a certificate not trusted, a host name that does not match, a protocol mismatch."""


class WriteFencedError(AdminClientError, ClusterUnavailableError):
    """This process may no longer write: it is not sure any more that it holds the operator's leader lease."""
