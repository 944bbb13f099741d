"""Byte sizes with binary suffixes: "4K" = 4096, "1M" = 1048576 (as MPI benchmarks print them)."""

import re

from .errors import QuadselError

_SUFFIX = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
_SIZE = re.compile(r"^\s*(\d+)\s*([KMG]?)(?:I?B)?\s*$", re.IGNORECASE)


def parse_size(text, what="size"):
    """Parse "4096", "4K", "4KiB", "1M" into bytes; a QuadselError names `what` otherwise."""
    match = _SIZE.match(str(text))
    if not match:
        raise QuadselError(f"invalid {what} {text!r}: expected an integer, optionally with K, M or G")
    return int(match.group(1)) * _SUFFIX[match.group(2).upper()]


def format_size(n):
    """Human label of a byte count: 1024 -> "1K", 1048576 -> "1M", 1500 -> "1500"."""
    n = int(n)
    for suffix, unit in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if n >= unit and n % unit == 0:
            return f"{n // unit}{suffix}"
    return str(n)
