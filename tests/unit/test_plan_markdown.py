"""``kto plan -o markdown``: what a pull-request comment shows, read back through a real Markdown
parser (markdown-it-py, CommonMark with GitHub's tables and strikethrough) as GitHub would render it."""

from __future__ import annotations

import re

import pytest
from markdown_it import MarkdownIt

from harness.states import cluster_spec, cluster_state, existing, spec
from topic_operator.model import ReassignmentPolicy
from topic_operator.plan import Plan, plan
from topic_operator.plan_output import GITHUB_COMMENT_LIMIT, render_plan_markdown

GITHUB = MarkdownIt("commonmark").enable(["table", "strikethrough"])


def a_plan() -> Plan:
    state = cluster_state(
        existing("orders", {0: (0, 1, 2), 1: (1, 2, 3)}, {"retention.ms": "1000"}),
        existing("replayed", {0: (0,), 1: (1,), 2: (2,)}),
        existing("shrunk", {p: (p % 6,) for p in range(8)}),
        existing("steady", {0: (0, 1, 2)}),
    )
    declared = [
        spec("orders", 4, 3, {"retention.ms": "2000", "cleanup.policy": "compact"}),
        spec("fresh", 3, 2),
        spec("shrunk", 3, 1),
        spec("replayed", 3, 3),
        spec("steady", 1, 3),
    ]
    return plan(declared, state, cluster_spec(reassignment=ReassignmentPolicy(True, 1048576)))


def html_of(markdown: str) -> str:
    return GITHUB.render(markdown)


def test_the_comment_reads_as_a_pull_request_reviewer_needs_it() -> None:
    text = render_plan_markdown(a_plan())
    assert text.splitlines()[0] == "<!-- kto plan: cluster main -->"
    assert (
        "**main**: 1 to create, 2 to change, 0 to delete, 1 rejected, 1 unchanged; 0 unmanaged topics" in text
    )
    rejected, changes, details = (text.index(h) for h in ("#### Rejected", "#### Changes", "#### Details"))
    assert rejected < changes < details
    assert (
        "- `shrunk` (shrunk.yaml#0): **InvalidPartitionsException**: The number of partitions for a topic can only "
        "be increased. Topic shrunk currently has 8 partitions, 3 would not be an increase." in text
    )
    rendered = html_of(text)
    tables = re.findall(r"<table>.*?</table>", rendered, flags=re.DOTALL)
    change_rows = re.findall(r"<tr>\s*<td><code>(.)</code></td>\s*<td><code>([\w.]+)</code></td>", tables[0])
    assert change_rows == [
        ("+", "fresh"),
        ("~", "orders"),
        ("~", "replayed"),
    ]  # steady: unchanged, not listed
    assert rendered.count("<details>") == rendered.count("</details>") == 4


def test_each_topics_details_show_config_before_and_after_placement_and_the_reassignments_throttle() -> None:
    blocks = dict(re.findall(r"<summary><code>. ([\w.]+)</code>.*?</summary>\n(.*?)</details>", render_plan_markdown(a_plan()), flags=re.DOTALL))  # fmt: skip
    assert "| config.retention.ms | 1000 | 2000 |" in blocks["orders"]
    assert "| config.cleanup.policy | (none) | compact |" in blocks["orders"]
    assert "| partitions | 2 | 4 |" in blocks["orders"]
    assert re.search(
        r"\| 2 \| \d, \d, \d \|\n\| 3 \| \d, \d, \d \|", blocks["orders"]
    )  # the two new partitions
    assert "| partition | replicas |" in blocks["fresh"]
    assert (
        "Reassignment of 3 partitions, throttled at 1048576 B/s on brokers 0, 1, 2, 3, 4, 5:"
        in blocks["replayed"]
    )
    assert re.search(r"\| 0 \| 0 \| 0, \d, \d \| \d, \d \| \(none\) \|", blocks["replayed"])
    assert "**InvalidPartitionsException**" in blocks["shrunk"]


def test_the_same_plan_is_the_same_comment() -> None:
    assert render_plan_markdown(a_plan()) == render_plan_markdown(a_plan())


def test_text_from_manifests_and_kafka_cannot_format_the_comment() -> None:
    hostile = (
        "x.yaml#1: spec.config: `a` | <script>alert(1)</script> **bold** ~~gone~~ [link](http://x)\n# heading"
    )
    rendered = html_of(render_plan_markdown(a_plan(), manifest_errors=[hostile], warnings=["</details><b>"]))
    assert "<script>" not in rendered
    assert "<b>" not in rendered
    assert "<strong>bold</strong>" not in rendered
    assert "<del>" not in rendered
    assert "<a href" not in rendered
    assert "<h1>" not in rendered
    assert "&lt;script&gt;alert(1)&lt;/script&gt; **bold** ~~gone~~ [link](http://x)\\n# heading" in rendered
    assert rendered.count("<details>") == rendered.count("</details>")


@pytest.mark.parametrize(
    ("topics", "limit"),
    [(3000, GITHUB_COMMENT_LIMIT), (3000, 3000), (150, GITHUB_COMMENT_LIMIT)],
    ids=["cut-in-the-table", "a-small-limit", "cut-in-the-details"],
)
def test_a_plan_too_long_for_one_comment_is_cut_saying_what_was_left_out(topics: int, limit: int) -> None:
    names = [f"team.topic-{i:05d}" for i in range(topics)]
    long_plan = plan([spec(name, 12, 3) for name in names], cluster_state(), cluster_spec())
    text = render_plan_markdown(long_plan, limit=limit)
    assert len(text) <= limit
    last = text.rstrip("\n").splitlines()[-1]
    cut = re.fullmatch(
        rf"\*\*Cut at the comment limit \({limit:,} characters\):\*\* left out (?:(\d+) rows of the table of "
        r"changes, )?(\d+) topics' details\. `kto plan -o json` has the whole plan\.",
        last,
    )
    assert cut is not None, last
    rows_left = int(cut.group(1) or 0)
    rendered = html_of(text)
    table = re.search(r"<table>.*?</table>", rendered, flags=re.DOTALL)
    assert table is not None
    assert table.group(0).count("<tr>") - 1 == topics - rows_left  # the rows there, less the header's
    assert text.count("<details>") == topics - int(cut.group(2))
    assert rendered.count("<details>") == rendered.count("</details>")
