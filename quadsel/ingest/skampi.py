"""SKaMPI result files: `begin result "NAME"` ... `end result "NAME"` blocks of `var= value ... size mean stderr n`."""

import math
import re

from .names import split_collective_prefix

BEGIN = re.compile(r'^#?\s*begin\s+result\s+"([^"]*)"')
END = re.compile(r'^#?\s*end\s+result\s+"([^"]*)"')

# Loop variables that carry the communicator size, first match wins.
COMM_VARS = ("procs", "np", "nodes")
ALG_VARS = ("algorithm", "algo", "alg")
SEG_VARS = ("segsize", "seg")
_ALG_PART = re.compile(r"^(?:algorithm|algo|alg)(?:[=:_](\w+)|(\d+))$", re.IGNORECASE)
_SEG_PART = re.compile(r"^(?:segsize|seg)[=:_]?([0-9]+)$", re.IGNORECASE)


def parse_name(name):
    """Result NAME -> (collective or None, algorithm or None, segsize digits or None).

    "MPI_Bcast-procs-length" is the library's own choice; "Bcast_using_Send_Recv-procs-length" (SKaMPI's
    naming of hand-written variants) gives algorithm "using_Send_Recv"; parts "alg6", "alg_binomial",
    "seg1024" set the algorithm and segment size explicitly.
    """
    parts = name.strip().split("-")
    collective, algorithm = split_collective_prefix(parts[0])
    segsize = None
    for part in parts[1:]:
        alg, seg = _ALG_PART.match(part), _SEG_PART.match(part)
        if alg:
            algorithm = alg.group(1) or alg.group(2)
        elif seg:
            segsize = seg.group(1)   # checked with the row (ctx.integer): the name may hold any number of digits
    return collective, algorithm or None, segsize


def _split_row(text):
    """"procs= 8 count= 1  8  6.6 0.1 54 ..." -> ({"procs": "8", "count": "1"}, ["8", "6.6", "0.1", "54", ...])."""
    tokens, variables, i = text.split(), {}, 0
    while i < len(tokens) and "=" in tokens[i]:
        name, _, value = tokens[i].partition("=")
        if not value and i + 1 < len(tokens):
            value, i = tokens[i + 1], i + 1
        variables[name.lower()] = value
        i += 1
    return variables, tokens[i:]


def read(ctx):
    rows, block = [], None  # block: (line, name, collective, algorithm, segsize)
    for line, text in ctx.numbered():
        begin, end = BEGIN.match(text), END.match(text)
        if begin:
            if block:
                raise ctx.error(block[0], f'begin result "{block[1]}" has no end result (truncated block?)')
            block = (line, begin.group(1), *parse_name(begin.group(1)))
        elif end:
            if block is None:
                raise ctx.error(line, f'end result "{end.group(1)}" without a begin result')
            if end.group(1) != block[1]:
                raise ctx.error(line, f'end result "{end.group(1)}" closes begin result "{block[1]}" '
                                      f"of line {block[0]}")
            block = None
        elif block and block[2] and not text.startswith("#"):
            rows.append(_row(ctx, line, text, block))
        # Anything else (version banner, durations, point-to-point blocks) is not a collective result.
    if block:
        raise ctx.error(block[0], f'begin result "{block[1]}" has no end result (truncated block?)')
    return rows


def _row(ctx, line, text, block):
    _, _, collective, algorithm, segsize = block
    variables, numbers = _split_row(text)
    if len(numbers) < 4:
        raise ctx.error(line, f"{len(numbers)} numbers; a SKaMPI row needs message size, mean time, "
                              "standard error and repetition count")
    msg_size, mean, std_error, count = numbers[:4]
    comm_var = next((v for v in COMM_VARS if v in variables), None)
    comm_size = (variables[comm_var] if comm_var
                 else ctx.fallback_comm_size(line, "no procs=/np=/nodes= loop variable"))
    alg_var = next((v for v in ALG_VARS if v in variables), None)
    seg_var = next((v for v in SEG_VARS if v in variables), None)
    reps = ctx.integer(line, "repetition count", count, 1)
    return ctx.measurement(
        line, collective=collective,
        algorithm=variables[alg_var] if alg_var else algorithm or "default",
        segsize=variables[seg_var] if seg_var else segsize if segsize is not None else ctx.fallback_segsize(),
        comm_size=comm_size, msg_size=msg_size, time=mean, reps=reps,
        stddev=_stddev(ctx, line, std_error, reps), total=ctx.total_sizes("skampi", collective))


def _stddev(ctx, line, std_error, reps):
    # SKaMPI prints the standard error of its mean over the middle k = n - 2*floor(n/4) of n repetitions
    # (measurement.c); the spread of single times is that error times sqrt(k).
    kept = reps - 2 * (reps // 4)
    error = ctx.real(line, "standard error", std_error, positive=False)
    return error * math.sqrt(kept) if kept >= 2 else None
