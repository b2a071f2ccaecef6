"""The pure parts of the HTTP transport: Host/Origin parsing and the gate policy, refusal logging,
transport plan resolution and startup warnings (SPEC R7.42-R7.54). The real server is exercised in
``tests/integration/test_mcp_http.py``."""

from __future__ import annotations

import ipaddress
import re
from typing import Any

import pytest

from grooveseek.config import GrooveConfig, HttpConfig, TransportConfig
from grooveseek.errors import ConfigError
from grooveseek.mcp.gate import GatePolicy, HostPort, RefusalLog, parse_host, parse_origin
from grooveseek.mcp.startup import resolve_plan
from grooveseek.mcp.transport import startup_warnings

LOOPBACK = ipaddress.IPv4Address("127.0.0.1")


@pytest.mark.parametrize(
    ("value", "parsed"),
    [
        ("localhost", HostPort("localhost", None)),
        ("LocalHost:3100", HostPort("localhost", 3100)),
        ("127.0.0.1:0", HostPort("127.0.0.1", 0)),
        ("[::1]:8080", HostPort("[::1]", 8080)),
        ("[::1]", HostPort("[::1]", None)),
        ("example.com:65535", HostPort("example.com", 65535)),
        ("user:pw@127.0.0.1:3100", None),
        ("@127.0.0.1:3100", None),
        ("127.0.0.1@localhost", None),
        ("127.0.0.1:65536", None),
        ("localhost:abc", None),
        ("localhost:", None),
        ("localhost:+80", None),
        ("localhost:123456", None),
        ("", None),
        (" localhost", None),
        ("local host", None),
        ("::1", None),
        ("[::1", None),
        ("[nothex]:80", None),
        ("a/b", None),
    ],
)
def test_parse_host(value: str, parsed: HostPort | None) -> None:
    assert parse_host(value) == parsed


def test_policy_matching() -> None:
    policy = GatePolicy.from_config(
        ["localhost", "127.0.0.1:3100", "[::1]"], None, port=3100, healthz_public=True
    )
    assert policy.host_allowed("localhost:9") and policy.host_allowed("LOCALHOST")
    assert policy.host_allowed("127.0.0.1:3100") and not policy.host_allowed("127.0.0.1:3101")
    assert not policy.host_allowed("127.0.0.1") and not policy.host_allowed(None)
    assert policy.origin_allowed(None) and policy.origin_allowed("http://localhost:3100")
    assert policy.origin_allowed("HTTP://[::1]:3100") and not policy.origin_allowed("http://localhost:3101")
    assert not policy.origin_allowed("https://localhost:3100") and not policy.origin_allowed("null")
    any_port = GatePolicy.from_config([], ["http://example.com"], port=1, healthz_public=True)
    assert any_port.hosts is None and any_port.host_allowed("anything.at.all") and any_port.host_allowed(None)
    assert any_port.origin_allowed("http://example.com:4000") and not any_port.origin_allowed(
        "http://evil.com"
    )
    assert GatePolicy.from_config(["localhost"], [], port=1, healthz_public=True).origin_allowed(
        "http://evil.com"
    )
    assert parse_origin("localhost:3100") is None and parse_origin("http://u@h") is None
    with pytest.raises(ConfigError, match="allowed_hosts entry"):
        GatePolicy.from_config(["http://localhost"], None, port=1, healthz_public=True)
    with pytest.raises(ConfigError, match="allowed_origins entry"):
        GatePolicy.from_config(["localhost"], ["localhost:3100"], port=1, healthz_public=True)


def test_refusal_logging_is_rate_limited(caplog: pytest.LogCaptureFixture) -> None:
    now = [1000.0]
    gate_log = RefusalLog("Host", clock=lambda: now[0])
    assert gate_log.refused("evil:1") is True
    assert [gate_log.refused(f"evil:{i}") for i in range(5)] == [False] * 5
    now[0] += 61
    assert gate_log.refused("evil:last") is True
    lines = [r.getMessage() for r in caplog.records if r.name == "grooveseek.mcp.http"]
    assert lines == [
        "refused 1 request(s) whose Host header is not allowed; latest: 'evil:1'",
        "refused 6 request(s) whose Host header is not allowed; latest: 'evil:last'",
    ]


def http_config(**changes: Any) -> GrooveConfig:
    return GrooveConfig(transport=TransportConfig(kind="http", http=HttpConfig(**changes)))


def test_transport_resolution() -> None:
    stdio = GrooveConfig()
    assert resolve_plan(stdio, transport=None, bind=None, port=None, i_know=False).kind == "stdio"
    with pytest.raises(ConfigError, match=re.escape("--bind / --port require --transport http")):
        resolve_plan(stdio, transport=None, bind=None, port=3200, i_know=False)
    plan = resolve_plan(stdio, transport="http", bind="127.0.0.1:4000", port=5000, i_know=False)
    assert plan.address == (LOOPBACK, 4000)  # --bind beats --port
    assert resolve_plan(stdio, transport="http", bind=None, port=5000, i_know=False).address == (
        LOOPBACK,
        5000,
    )
    configured = http_config(bind="[::1]:4100")
    assert resolve_plan(configured, transport=None, bind=None, port=None, i_know=False).address == (
        ipaddress.IPv6Address("::1"),
        4100,
    )
    assert resolve_plan(stdio, transport="http", bind=None, port=None, i_know=False).address == (
        LOOPBACK,
        3100,
    )
    assert resolve_plan(configured, transport="stdio", bind=None, port=None, i_know=False).kind == "stdio"
    with pytest.raises(ConfigError, match=re.escape("refusing to bind 0.0.0.0:3100 without --i-know")):
        resolve_plan(stdio, transport="http", bind="0.0.0.0:3100", port=None, i_know=False)
    # A trusted config's non-loopback bind is not gated, only warned about (R7.45).
    wide = resolve_plan(http_config(bind="0.0.0.0:3100"), transport=None, bind=None, port=None, i_know=False)
    assert wide.address == (ipaddress.IPv4Address("0.0.0.0"), 3100)


def test_startup_warnings() -> None:
    plan = resolve_plan(GrooveConfig(), transport="http", bind="0.0.0.0:3100", port=None, i_know=True)
    default = HttpConfig()
    policy = GatePolicy.from_config(default.allowed_hosts, None, port=3100, healthz_public=True)
    warnings = startup_warnings(plan, default, policy, "0.0.0.0:3100")
    assert warnings[0] == (
        "GrooveSeek has no authentication: anything that can reach 0.0.0.0:3100 can read the "
        "whole knowledge base"
    )
    assert (
        "refused with 403 until [transport.http].allowed_hosts lists it" in warnings[1] and len(warnings) == 2
    )
    loopback = resolve_plan(GrooveConfig(), transport="http", bind=None, port=3100, i_know=False)
    assert startup_warnings(loopback, default, policy, "127.0.0.1:3100") == []
    odd = HttpConfig(allowed_hosts=("example.com",), allowed_origins=())
    odd_policy = GatePolicy.from_config(
        odd.allowed_hosts, odd.allowed_origins, port=3100, healthz_public=True
    )
    assert startup_warnings(loopback, odd, odd_policy, "x") == [
        "[transport.http].allowed_hosts has no loopback entry: local clients will be refused",
        (
            "[transport.http].allowed_origins = [] turns Origin validation off: a web page in a local "
            "browser can send requests to this server (DNS rebinding)"
        ),
    ]
