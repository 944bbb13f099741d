"""Intel MPI Benchmarks (IMB-MPI1, IMB-NBC) output: `# Benchmarking X` blocks, one per benchmark and process count."""

import re

from ..inputs import INT_MAX
from . import columns
from .names import normalise_collective

BENCHMARK = re.compile(r"^#\s*Benchmarking\s+(\S+)")
PROCESSES = re.compile(r"^#\s*#processes\s*=\s*(\S+)")
HEADER = re.compile(r"^#(?:bytes|repetitions)\b")


def read(ctx):
    rows = []
    block = None  # {"collective", "procs", "found", "width"} of the current benchmark block
    for line, text in ctx.numbered():
        benchmark = BENCHMARK.match(text)
        if benchmark:
            # PingPong, Exchange, Reduce_local ... are not collectives: their blocks are read past.
            block = {"collective": normalise_collective(benchmark.group(1)), "procs": None, "found": None}
            continue
        if block is None or block["collective"] is None:
            continue  # the preamble before the first block, or a skipped block
        processes = PROCESSES.match(text)
        if processes:
            block["procs"] = ctx.integer(line, "#processes", processes.group(1), 1, INT_MAX,
                                         "a C int (MPI communicator sizes)")
        elif HEADER.match(text):
            names = text.split()
            block["found"], block["width"] = columns.resolve(ctx, line, names), len(names)
            if "time" not in block["found"]:
                raise ctx.error(line, "IMB header without a t_avg[usec] column")
            if "msg_size" not in block["found"] and block["collective"] not in ("barrier", "ibarrier"):
                raise ctx.error(line, "IMB header without a #bytes column")
        elif not text.startswith("#"):
            rows.append(_row(ctx, line, text.split(), block))
    return rows


def _row(ctx, line, cells, block):
    found = block["found"]
    if found is None:
        raise ctx.error(line, "data row before the IMB '#bytes #repetitions ...' header")
    if len(cells) != block["width"]:
        raise ctx.error(line, f"{len(cells)} cells, but the header has {block['width']} columns")
    comm_size = block["procs"] or ctx.fallback_comm_size(line, "no '# #processes = N' line in this block")
    # Barrier blocks have no #bytes column (checked at the header): their message size is 0.
    msg_size = cells[found["msg_size"][0]] if "msg_size" in found else 0
    return ctx.measurement(
        line, collective=block["collective"],
        algorithm=ctx.fallback_algorithm() or "default",
        segsize=ctx.fallback_segsize(),
        comm_size=comm_size, msg_size=msg_size,
        time=cells[found["time"][0]], scale=found["time"][1],
        reps=cells[found["reps"][0]] if "reps" in found else None,
        total=ctx.total_sizes("imb", block["collective"]))
