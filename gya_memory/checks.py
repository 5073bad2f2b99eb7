"""Small input checks shared by the stores: a bad value gets a ValueError saying what is wrong."""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit


def check_text(name: str, value: object, limit: int) -> str:
    """``value`` stripped, if it is a non-empty string of at most ``limit`` characters."""
    if not isinstance(value, str):
        raise ValueError(f"{name} must be a string, got {type(value).__name__}: {value!r}")
    if not value.strip():
        raise ValueError(f"{name} is empty; give it some text")
    if len(value) > limit:
        raise ValueError(f"{name} is {len(value):,} characters; the limit is {limit:,}")
    return value.strip()


def is_loopback(url: str) -> bool:
    """True for http://127.0.0.1..., http://localhost..., http://[::1]...: proxies are skipped there."""
    host = urlsplit(url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
