"""The measurement grid: parse size lists such as `2-8`, `0,1K,8K,64K` and `1-1M:pow2`."""

from ..errors import QuadselError
from ..inputs import INT_MAX, parse_size  # noqa: F401 (part of this module's interface: sizes of the grid)

# Binary multiples, as MPI benchmarks use them: 1K = 1024 bytes.
_SUFFIX = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
# A long plain range is almost always a forgotten `:pow2`; refuse it rather than run for a week.
MAX_POINTS_PER_ITEM = 4096

# Choices of the command line, here because this module needs no numpy (start-up time of every command).
# name -> (mpi4py datatype attribute, bytes); `auto` is resolved in runner.choose_datatype
DATATYPES = {"byte": ("BYTE", 1), "uint8": ("UINT8_T", 1), "int32": ("INT32_T", 4),
             "float": ("FLOAT", 4), "double": ("DOUBLE", 8)}
TIMINGS = ("auto", "local", "span", "offset")


def parse_list(spec, what="size"):
    """A sorted list of distinct integers from `A,B,C`, `A-B` (every integer), `A-B:pow2`, `A-B:STEP`."""
    values = set()
    for item in str(spec).split(","):
        item = item.strip()
        if not item:
            raise QuadselError(f"bad {what} list {spec!r}: empty item")
        values.update(_parse_item(item, what))
    return _within(sorted(values), spec, what)


def _within(values, spec, what):
    """Communicator sizes are 1..2^31-1 and segment sizes 0..2^31-1 (C ints in MPI and in the generated C);
    message sizes were bounded by parse_size (0..2^63-1). Refused here, before any job is launched."""
    low = 1 if "comm" in what else 0
    high = INT_MAX if ("comm" in what or "segment" in what) else None
    for value in (values[0], values[-1]) if values else ():
        if value < low or (high is not None and value > high):
            raise QuadselError(f"bad {what} list {str(spec)[:40]!r}: {value} is outside {low}..{high}")
    return values


def _parse_item(item, what):
    body, _, step = item.partition(":")
    if "-" not in body:
        if step:
            raise QuadselError(f"bad {what} {item!r}: ':{step}' needs a range A-B")
        return [parse_size(body, what)]
    low_text, _, high_text = body.partition("-")
    if not low_text.strip() or not high_text.strip() or "-" in high_text:   # "-1", "4-", "1--2": not a range A-B
        raise QuadselError(f"bad {what} {item[:40]!r}: expected a size or a range A-B of sizes (no negative sizes)")
    low, high = parse_size(low_text, what), parse_size(high_text, what)
    if low > high:
        raise QuadselError(f"bad {what} range {item!r}: {low} > {high}")
    if step.strip().lower() == "pow2":
        out = [0] if low == 0 else []
        power = 1
        while power <= high:
            if power >= low:
                out.append(power)
            power *= 2
        if not out:
            raise QuadselError(f"bad {what} range {item!r}: no power of two in it")
        return out
    stride = parse_size(step, what) if step else 1
    if stride <= 0:
        raise QuadselError(f"bad {what} range {item!r}: step must be positive")
    count = (high - low) // stride + 1
    if count > MAX_POINTS_PER_ITEM:
        raise QuadselError(f"{what} range {item!r} has {count} values; did you mean {body}:pow2?")
    return list(range(low, high + 1, stride))


def format_size(n):
    """65536 -> '64K' (for progress lines and messages)."""
    for suffix in ("G", "M", "K"):
        unit = _SUFFIX[suffix]
        if n >= unit and n % unit == 0:
            return f"{n // unit}{suffix}"
    return str(n)
