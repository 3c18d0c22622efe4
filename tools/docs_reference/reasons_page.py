"""The condition reasons reference: every reason the operator sets, from ``k8s/condition_reasons.REASON_GUIDES``."""

from __future__ import annotations

from tools.docs_reference.markdown import code, generated_header, page, prose, table


def render() -> str:
    from topic_operator.k8s.condition_reasons import REASON_GUIDES, ReasonGuide

    def ready_text(guide: ReasonGuide) -> str:
        return "an Event only" if guide.ready == "Event" else code(f"Ready={guide.ready}")

    lines = [
        generated_header("topic_operator.k8s.condition_reasons.REASON_GUIDES"),
        "",
        "# Condition reasons",
        "",
        "Every reason the operator puts on a KafkaTopic's or a KafkaCluster's `Ready` condition, what it means "
        "and what to do. `kubectl describe ktopic NAME` (or `kafkacluster`) shows the reason with its message; "
        "every applied change and every refusal is also a Kubernetes Event with the same reason.",
        "",
    ]
    lines += table(
        ["Reason", "Ready", "On"],
        [
            [
                f"[{code(guide.reason.value)}](#{guide.reason.value.lower()})",
                ready_text(guide),
                ", ".join(guide.kinds),
            ]
            for guide in REASON_GUIDES
        ],
    )
    for guide in REASON_GUIDES:
        lines += [
            "",
            f"## {guide.reason.value}",
            "",
            f"{ready_text(guide)} on {' and '.join(guide.kinds)}.",
            "",
            prose(guide.meaning),
            "",
            f"**What to do:** {prose(guide.what_to_do)}",
        ]
    return page(lines)
