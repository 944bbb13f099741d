"""ompi-collectives-tuning `detail.out`: `#Nnodes Message_size <alg> ...` with `mean(stddev)` cells in µs."""

import re

from ..inputs import shorten

HEADER = re.compile(r"^#N(?:nodes|ranks)\b", re.IGNORECASE)
# The tool writes "No data" (two words) for an algorithm it did not run at that size.
_CELL = re.compile(r"No data|\S+", re.IGNORECASE)
_VALUE = re.compile(r"^([^()]+)(?:\(([^()]*)\))?$")
# Its reference column is the library's own decision: named "tuned" in old output, id 0 ("ignore") in new.
_REFERENCE = ("tuned", "0")


def read(ctx):
    rows, algorithms, collective = [], None, None
    for line, text in ctx.numbered():
        if algorithms is None:
            algorithms = _header(ctx, line, text)
            collective = ctx.fallback_collective("detail.out does not name the collective")
            continue
        if text.startswith("#"):
            continue
        cells = _CELL.findall(text)
        # Newer coltune_analyze.py repeats the reference column at the end of each row, without a header.
        if len(cells) not in (len(algorithms) + 2, len(algorithms) + 3):
            raise ctx.error(line, f"{len(cells)} cells, but the header has {len(algorithms) + 2} columns")
        comm_size, msg_size = cells[0], cells[1]
        for algorithm, cell in zip(algorithms, cells[2:]):
            if cell.lower() == "no data":
                continue
            value = _VALUE.match(cell)
            if not value:
                raise ctx.error(line, f"cell {cell!r} is not mean(stddev)")
            rows.append(ctx.measurement(
                line, collective=collective,
                algorithm="default" if algorithm.lower() in _REFERENCE else algorithm,
                segsize=ctx.fallback_segsize(), comm_size=comm_size, msg_size=msg_size,
                time=value.group(1), stddev=value.group(2), total=ctx.total_sizes("detail", collective)))
    return rows


def _header(ctx, line, text):
    if not HEADER.match(text):
        raise ctx.error(line, "expected the '#Nnodes Message_size <algorithm> ...' header")
    names = text.split()
    if "best_algorithm" in (name.lower() for name in names):
        raise ctx.error(line, "this is best.out (the winners only); read detail.out instead")
    if len(names) < 3:
        raise ctx.error(line, "the header names no algorithm columns")
    seen = set()
    for name in names[2:]:
        if name.lower() in seen:   # two columns of one name would be pooled into one method without a word
            raise ctx.error(line, f"two columns named {shorten(name)!r}")
        seen.add(name.lower())
    return names[2:]
