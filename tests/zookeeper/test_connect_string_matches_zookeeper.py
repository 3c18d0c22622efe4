"""Whatever connect string kto accepts means exactly what it means to ZooKeeper's own client (which Kafka's brokers
use), and whatever ZooKeeper would choke on or silently misread is refused with one short line.

``zookeeper_client_parse`` below restates, in Python, what ZooKeeper 3.8's ``ConnectStringParser`` does with a
``zookeeper.connect`` value after Kafka's config layer has trimmed it (``ConfigDef`` trims string values): the
chroot from the first '/' checked by ``PathUtils.validatePath``, hosts split on ',' and trimmed by
``StringUtils.split``, each cut by ``ConfigUtils.getHostAndPort`` and its port read by ``Integer.parseInt``, then
``InetSocketAddress.createUnresolved``. Hypothesis then looks for a string where the two disagree.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from topic_operator.connect_string import (
    ConnectStringError,
    connect_string_problem,
    parse_connect_string,
)

JAVA_WHITESPACE = "".join(chr(code) for code in range(0x21))


class ZooKeeperRefusesError(Exception):
    """ZooKeeper's client would throw (IllegalArgumentException, NumberFormatException) for this string."""


def _java_split(text: str, separator: str) -> list[str]:
    """Java's ``String.split``: trailing empty strings are removed."""
    parts = text.split(separator)
    while parts and parts[-1] == "":
        parts.pop()
    return parts


def _validate_path(path: str) -> None:
    """``PathUtils.validatePath`` over Java chars (UTF-16 code units)."""
    units = path.encode("utf-16-le")
    chars = [chr(int.from_bytes(units[i : i + 2], "little")) for i in range(0, len(units), 2)]
    if chars[-1] == "/" and len(chars) > 1:
        raise ZooKeeperRefusesError("Path must not end with / character")
    last = "/"
    for i in range(1, len(chars)):
        c = chars[i]
        code = ord(c)
        if code == 0:
            raise ZooKeeperRefusesError("null character")
        if c == "/" and last == "/":
            raise ZooKeeperRefusesError("empty node name")
        if c == "." and last == ".":
            if chars[i - 2] == "/" and (i + 1 == len(chars) or chars[i + 1] == "/"):
                raise ZooKeeperRefusesError("relative path")
        elif c == ".":
            if chars[i - 1] == "/" and (i + 1 == len(chars) or chars[i + 1] == "/"):
                raise ZooKeeperRefusesError("relative path")
        elif 0 < code <= 0x1F or 0x7F <= code <= 0x9F or 0xD800 <= code <= 0xF8FF or 0xFFF0 <= code <= 0xFFFF:
            raise ZooKeeperRefusesError("invalid character")
        last = c


def _get_host_and_port(entry: str) -> list[str] | None:
    """``ConfigUtils.getHostAndPort``; None where it throws ConfigException (which the parser only prints)."""
    if entry.startswith("["):
        i = entry.find("]")
        if i < 0 or i + 2 == len(entry):
            return None
        if i + 2 < len(entry):
            return [entry[1:i], *_java_split(entry[i + 2 :], ":")]
        return [entry.replace("[", "").replace("]", "")]
    return _java_split(entry, ":")


def _parse_int(text: str) -> int:
    """``Integer.parseInt``: optional sign, decimal digits, 32-bit."""
    if not re.fullmatch(r"[+-]?\d+", text):
        raise ZooKeeperRefusesError(f"NumberFormatException: {text!r}")
    value = int(text)
    if not -(2**31) <= value < 2**31:
        raise ZooKeeperRefusesError(f"NumberFormatException (overflow): {text!r}")
    return value


def zookeeper_client_parse(connect: str) -> tuple[list[tuple[str, int]], str | None]:
    text = connect.strip(JAVA_WHITESPACE)
    chroot = None
    slash = text.find("/")
    if slash >= 0:
        path = text[slash:]
        if len(path) > 1:
            _validate_path(path)
            chroot = path
        text = text[:slash]
    hosts = []
    for raw in _java_split(text, ","):
        entry = raw.strip(JAVA_WHITESPACE)
        if not entry:
            continue
        host, port = entry, 2181
        parts = _get_host_and_port(entry)
        if parts is not None:
            host = parts[0]
            if len(parts) == 2:
                port = _parse_int(parts[1])
        if not 0 <= port <= 65535:
            raise ZooKeeperRefusesError(f"port out of range: {port}")
        hosts.append((host, port))
    if not hosts:
        raise ZooKeeperRefusesError("A HostProvider may not be empty!")
    return hosts, chroot


# -- strings to try ----------------------------------------------------------------------------------------------

_ALPHABET = "az09-_.:[],/ +\t\n\x00\x1c\xa0é٣\U0001f600"
_host = st.one_of(
    st.sampled_from(["zk-0", "zk-1.ns.svc", "10.0.0.7", "::1", "[::1]", "[fd00::5", "a" * 64, "a..b", ""]),
    st.text(alphabet="az09-_.", min_size=0, max_size=12),
)
_port = st.one_of(
    st.none(),
    st.sampled_from(["", "2181", "0", "65535", "65536", "99999", "+2181", "-1", "2181kafka", "1:2", "٣"]),
    st.integers(min_value=-5, max_value=70_000).map(str),
)
_entry = st.builds(
    lambda h, p, pad: f"{pad}{h}{'' if p is None else ':' + p}{pad}",
    _host,
    _port,
    st.sampled_from(["", " ", "\t"]),
)
_chroot = st.one_of(
    st.none(),
    st.sampled_from(
        ["/", "/kafka", "/kafka/", "//kafka", "/kafka/../x", "/kafka prod", "/a,zk-2:2181", "/k\x00"]
    ),
    st.text(alphabet="ak/. ,:\U0001f600\x7f", max_size=8).map(lambda t: "/" + t),
)
_structured = st.builds(
    lambda entries, chroot: ",".join(entries) + (chroot or ""),
    st.lists(_entry, min_size=0, max_size=4),
    _chroot,
)
_anything = st.text(alphabet=_ALPHABET, max_size=30)


@settings(max_examples=3000, deadline=None)
@given(st.one_of(_structured, _anything))
@example("zk-0:2181/kafka,zk-1:2181")  # ZooKeeper: one host, chroot "/kafka,zk-1:2181"
@example("zk-0:1:2")  # ZooKeeper: port silently 2181
@example("[::1]:")  # ZooKeeper: prints a stack trace and keeps "[::1]:" as the host name
@example("zk-0:2181\xa0")  # Java's trim keeps U+00A0: NumberFormatException
@example("zk-0:٣")  # Integer.parseInt reads Arabic-Indic digits; kto does not
def test_what_kto_accepts_means_the_same_to_zookeeper(connect: str) -> None:
    try:
        hosts, chroot = parse_connect_string(connect)
    except ConnectStringError as error:
        message = str(error)
        assert "\n" not in message, "one line, whatever the input"
        assert "\r" not in message
        assert len(message) < 600
        return
    zk_hosts, zk_chroot = zookeeper_client_parse(connect)  # must not raise: ZooKeeper accepts it too
    assert [(h.name, h.port) for h in hosts] == zk_hosts
    assert chroot == zk_chroot
    for host in hosts:
        host.name.encode("idna")  # what the resolver does first: a name it cannot encode makes kazoo raise
        assert 1 <= host.port <= 65535


@pytest.mark.parametrize(
    ("connect", "problem"),
    [
        ("localhost:abc", "port 'abc' is not a number from 1 to 65535"),
        (":2181", "host ':2181': the host name is empty"),
        ("host:2181kafka", "port '2181kafka'"),
        ("zk-0:2181/kafka/", "must not end with '/'"),
        ("//kafka", "no host before the chroot"),
        ("zk-0:99999", "port '99999'"),
        ("zk-0:2181/kafka,zk-1:2181", "every host goes before the chroot"),
        ("zk 0:2181", "is not a host name"),
        ("zk-0:2181, zk-1:2181/kafka prod", "whitespace"),
        ("a" * 64 + ":2181", "dot-separated parts of 1 to 63 characters"),
    ],
)
def test_the_issue_examples_are_refused_in_one_line(connect: str, problem: str) -> None:
    found = connect_string_problem(connect)
    assert found is not None
    assert problem in found
    assert not found.startswith("ZooKeeper connect string"), (
        "the problem alone, for messages quoting the string"
    )
    with pytest.raises(ConnectStringError) as refused:
        parse_connect_string(connect)
    assert str(refused.value).startswith(f"ZooKeeper connect string {connect!r}: ")


def test_a_huge_connect_string_is_quoted_shortly() -> None:
    with pytest.raises(ConnectStringError) as refused:
        parse_connect_string("zk-0:2181/" + "k" * 1_000_000 + "/")
    assert len(str(refused.value)) < 400
    assert "(1000011 characters)" in str(refused.value)
