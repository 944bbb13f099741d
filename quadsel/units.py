"""Byte sizes with binary suffixes: "4K" = 4096, "1M" = 1048576 (as MPI benchmarks print them)."""

import re

from .errors import QuadselError

_SUFFIX = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
_SIZE = re.compile(r"^\s*([0-9]+)\s*([KMG]?)(?:I?B)?\s*$", re.IGNORECASE)
SIZE_MAX = (1 << 63) - 1   # sizes are 64-bit integers everywhere (quadsel.inputs.INT64_MAX)


def parse_size(text, what="size"):
    """Parse "4096", "4K", "4KiB", "1M" into bytes (at most SIZE_MAX); a QuadselError names `what` otherwise."""
    match = _SIZE.match(str(text))
    if not match:
        raise QuadselError(f"invalid {what} {str(text)[:40]!r}: expected an integer, optionally with K, M or G")
    digits = match.group(1).lstrip("0") or "0"
    value = int(digits) * _SUFFIX[match.group(2).upper()] if len(digits) <= 19 else SIZE_MAX + 1
    if value > SIZE_MAX:
        raise QuadselError(f"{what} {str(text)[:40]} is beyond {SIZE_MAX} bytes")
    return value


def format_size(n):
    """Human label of a byte count: 1024 -> "1K", 1048576 -> "1M", 1500 -> "1500"."""
    n = int(n)
    for suffix, unit in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if n >= unit and n % unit == 0:
            return f"{n // unit}{suffix}"
    return str(n)
