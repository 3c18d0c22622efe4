"""ZooKeeper connect strings (``zk-0:2181,zk-1:2181/kafka``), parsed once, the same way for every face.

The CLI (``--zookeeper``), ``kto validate`` (a KafkaCluster's ``spec.zookeeper.connect``), the operator and the
drift job all call :func:`parse_connect_string`, so a string one of them accepts is accepted by all, and a
refusal reads the same everywhere: one line naming the part that is wrong. Pure: no kazoo, no sockets.

What is legal follows ZooKeeper's own client, whose ``ConnectStringParser`` Kafka's brokers use for their
``zookeeper.connect``: everything from the first ``/`` is the chroot (a bare ``/`` means none), checked with
ZooKeeper's ``PathUtils.validatePath`` rules; the rest is a comma-separated host list, each ``host[:port]`` or
``[ipv6][:port]``, port 2181 when absent. Where ZooKeeper *guesses* instead of refusing, this parser refuses,
because the guess points the engine at another tree or another host than the one the user meant:

- ZooKeeper reads ``zk-0:2181/kafka,zk-1:2181`` as one host and the chroot ``/kafka,zk-1:2181``: a ``,`` (or any
  whitespace) in the chroot is refused, since hosts must all come before it;
- ``a:1:2`` (or an IPv6 address without brackets) silently loses its port; ``[::1]:`` and ``zk-0:`` become
  hosts that do not exist or the default port: each is refused;
- ``zk-0:2181kafka``, port 0 or above 65535, and ``+2181`` fail inside ZooKeeper's client or at connect time;
- an empty entry (``a:1,,b:2``) is dropped by ZooKeeper, and refused here as the typo it usually is;
- host names must be resolvable names: letters, digits, ``-``, ``_`` and dots between non-empty labels of at
  most 63 characters, 253 in all (longer ones make Python's resolver raise instead of failing to resolve).
"""

from __future__ import annotations

import ipaddress
import re
from typing import NamedTuple

__all__ = [
    "DEFAULT_PORT",
    "ConnectStringError",
    "Host",
    "connect_string_problem",
    "parse_connect_string",
]

DEFAULT_PORT = 2181
"""ZooKeeper's client port, assumed for a host given without one (as ZooKeeper's own client does)."""

_SHOWN = 120
"""At most this many characters of a refused connect string are quoted back: a message stays one short line."""

_JAVA_TRIMMED = "".join(chr(code) for code in range(0x21))
"""What Java's ``String.trim`` (ZooKeeper's, around each host entry) removes: every character up to U+0020."""

_LABEL = re.compile(r"^[A-Za-z0-9_]([A-Za-z0-9_-]*[A-Za-z0-9_])?$")
_BRACKETED = re.compile(r"^\[(?P<address>[^\]]*)\](?P<rest>.*)$", re.DOTALL)


class ConnectStringError(ValueError):
    """The connect string cannot be right. The message (one line) quotes it and says which part is wrong;
    ``problem`` is that part alone, for messages that already show the string (``kto validate``)."""

    def __init__(self, connect: str, problem: str) -> None:
        text = connect.strip(_JAVA_TRIMMED)
        shown = repr(text) if len(text) <= _SHOWN else f"{text[:_SHOWN]!r}... ({len(text)} characters)"
        super().__init__(f"ZooKeeper connect string {shown}: {problem}")
        self.problem = problem


class Host(NamedTuple):
    name: str
    """A host name or an IP address, IPv6 without brackets."""
    port: int

    def __str__(self) -> str:
        name = f"[{self.name}]" if ":" in self.name else self.name
        return f"{name}:{self.port}"


def connect_string_problem(connect: str) -> str | None:
    """None for a usable connect string, else what is wrong with it, in one line that does not repeat it."""
    try:
        parse_connect_string(connect)
    except ConnectStringError as error:
        return error.problem
    return None


def parse_connect_string(connect: str) -> tuple[tuple[Host, ...], str | None]:
    """Split ``zk-0:2181,zk-1:2181/kafka`` into hosts and chroot (None for no chroot, or a bare ``/``).

    Raises :class:`ConnectStringError` and nothing else, whatever the input.
    """
    text = connect.strip(_JAVA_TRIMMED)
    if not text:
        raise ConnectStringError(connect, "it is empty")
    slash = text.find("/")
    host_part, chroot_part = (text, None) if slash < 0 else (text[:slash], text[slash:])
    if not host_part.strip():
        raise ConnectStringError(connect, "no host before the chroot")
    hosts = tuple(_parse_host(entry, connect) for entry in host_part.split(","))
    return hosts, _parse_chroot(chroot_part, connect)


def _parse_host(raw: str, connect: str) -> Host:
    entry = raw.strip(_JAVA_TRIMMED)
    if not entry:
        raise ConnectStringError(connect, "an empty host entry (two commas, or a comma at an end)")
    shown = repr(entry[:_SHOWN])
    bracketed = _BRACKETED.match(entry)
    if bracketed:
        address, rest = bracketed.group("address"), bracketed.group("rest")
        try:
            ipaddress.IPv6Address(address)
        except ValueError:
            raise ConnectStringError(connect, f"host {shown} is not a bracketed IPv6 address") from None
        if rest and not rest.startswith(":"):
            raise ConnectStringError(connect, f"host {shown}: only ':port' may follow ']'")
        return Host(address, _parse_port(rest[1:] if rest else None, shown, connect))
    if entry.count(":") > 1:
        raise ConnectStringError(connect, f"host {shown}: write an IPv6 address in brackets, as [::1]:2181")
    name, colon, port_text = entry.partition(":")
    problem = _host_name_problem(name)
    if problem:
        raise ConnectStringError(connect, f"host {shown}: {problem}")
    return Host(name, _parse_port(port_text if colon else None, shown, connect))


def _host_name_problem(name: str) -> str | None:
    if not name:
        return "the host name is empty"
    if len(name) > 253:
        return f"the host name is {len(name)} characters long, more than 253"
    labels = name.split(".")
    if not all(_LABEL.match(label) and len(label) <= 63 for label in labels):
        return (
            f"{name[:_SHOWN]!r} is not a host name (letters, digits, '-' and '_', in dot-separated parts of 1 to "
            "63 characters)"
        )
    return None


def _parse_port(text: str | None, shown: str, connect: str) -> int:
    if text is None:
        return DEFAULT_PORT
    if text.isascii() and text.isdigit() and 0 < int(text) < 65536:
        return int(text)
    raise ConnectStringError(connect, f"host {shown}: port {text[:_SHOWN]!r} is not a number from 1 to 65535")


def _parse_chroot(chroot: str | None, connect: str) -> str | None:
    """ZooKeeper's ``PathUtils.validatePath``, plus no ',' and no whitespace; ``/`` alone means no chroot."""
    if chroot is None or chroot == "/":
        return None
    problem = None
    if chroot.endswith("/"):
        problem = "must not end with '/'"
    elif "//" in chroot:
        problem = "has an empty path element ('//')"
    elif any(part in (".", "..") for part in chroot.split("/")):
        problem = "has a relative path element ('.' or '..')"
    elif "," in chroot:
        problem = "contains ',': every host goes before the chroot"
    elif any(_illegal_in_path(c) for c in chroot):
        problem = "contains whitespace or a character ZooKeeper refuses in a path"
    if problem:
        raise ConnectStringError(connect, f"chroot {chroot[:_SHOWN]!r} {problem}")
    return chroot


def _illegal_in_path(c: str) -> bool:
    """ZooKeeper's refused path characters (NUL, controls, surrogates, private use, specials), and whitespace.

    Java sees a character beyond U+FFFF as two surrogates, which ZooKeeper refuses, so those are refused too."""
    code = ord(c)
    return c.isspace() or code <= 0x1F or 0x7F <= code <= 0x9F or 0xD800 <= code <= 0xF8FF or code >= 0xFFF0
