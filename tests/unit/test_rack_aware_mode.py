"""``getBrokerMetadatas``: Enforced, Safe and Disabled applied to the registered brokers (semantics §2)."""

import re

import pytest

from topic_operator.kafka.assignment import BrokerMetadata, RackAwareMode, get_broker_metadatas
from topic_operator.kafka.errors import AdminOperationError

# Kafka's testGetBrokerMetadatas: brokers 0..5, broker 4 without a rack.
REGISTERED = [BrokerMetadata(i, None if i == 4 else f"rack{i % 3}") for i in (5, 3, 1, 0, 2, 4)]
NO_RACKS = [BrokerMetadata(i) for i in range(6)]


@pytest.mark.parametrize("mode", [RackAwareMode.DISABLED, RackAwareMode.SAFE])
def test_mixed_racks_fall_back_to_no_racks(mode: RackAwareMode) -> None:
    assert get_broker_metadatas(REGISTERED, mode) == NO_RACKS


def test_enforced_refuses_mixed_racks() -> None:
    with pytest.raises(AdminOperationError) as caught:
        get_broker_metadatas(REGISTERED, RackAwareMode.ENFORCED)
    assert str(caught.value) == (
        "Not all brokers have rack information. Add --disable-rack-aware in command line to make replica "
        "assignment without rack information."
    )


def test_enforced_with_a_broker_list_keeps_those_racks_sorted_by_id() -> None:
    result = get_broker_metadatas(REGISTERED, RackAwareMode.ENFORCED, broker_list=[5, 3, 2, 1, 0, 42])
    assert result == [BrokerMetadata(i, f"rack{i % 3}") for i in (0, 1, 2, 3, 5)]


def test_disabled_drops_racks_even_when_all_present() -> None:
    everyone = [BrokerMetadata(i, "r") for i in (2, 1)]
    assert get_broker_metadatas(everyone, RackAwareMode.DISABLED) == [BrokerMetadata(1), BrokerMetadata(2)]
    assert get_broker_metadatas(everyone, RackAwareMode.SAFE) == [
        BrokerMetadata(1, "r"),
        BrokerMetadata(2, "r"),
    ]


def test_duplicate_registrations_are_refused() -> None:
    with pytest.raises(AdminOperationError, match=re.escape("Duplicate broker ids in the broker list: 3.")):
        get_broker_metadatas([BrokerMetadata(3), BrokerMetadata(3)])
