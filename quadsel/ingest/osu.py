"""OSU Micro-Benchmarks output (osu_bcast, osu_reduce, ...): a title, a `# Size  Avg Latency(us)` header, rows."""

import re

from . import columns
from .names import normalise_collective

TITLE = re.compile(r"^#\s*OSU MPI(?:-\S+)?\s+(.+?)\s+Latency Test", re.IGNORECASE)
HEADER = re.compile(r"^#\s*(?:Size|Avg Latency)\b", re.IGNORECASE)
# OSU spells some collectives out in its titles.
_TITLE_NAMES = {"broadcast": "bcast", "all-to-all": "alltoall", "all-to-allv": "alltoallv",
                "all-to-allw": "alltoallw"}


def title_collective(title):
    """"Broadcast" -> "bcast", "Non-blocking Reduce" -> "ireduce", "All-to-All Personalized Exchange" -> "alltoall"."""
    words = title.lower().replace("personalized exchange", "").split()
    prefix = ""
    if words and words[0] == "non-blocking":
        prefix, words = "i", words[1:]
    if len(words) != 1:
        return None
    return normalise_collective(prefix + _TITLE_NAMES.get(words[0], words[0]))


def read(ctx):
    rows, collective, found, width, started = [], None, None, 0, False
    for line, text in ctx.numbered():
        title = TITLE.match(text)
        if not (started or title or HEADER.match(text)):
            continue  # launcher noise (mpirun warnings) before the benchmark's own output
        started = True
        if title:
            collective = title_collective(title.group(1))
            if collective is None:
                raise ctx.error(line, f"OSU benchmark {title.group(1)!r} is not a collective")
            continue
        if HEADER.match(text):
            # Column names contain single spaces ("Avg Latency(us)"); OSU pads columns with two or more.
            names = re.split(r"\s{2,}", text.lstrip("#").strip())
            found, width = columns.resolve(ctx, line, names), len(names)
            if "time" not in found:
                raise ctx.error(line, "OSU header without an Avg Latency column")
            continue
        if text.startswith("#"):
            continue  # "# Datatype: MPI_CHAR." and similar notes
        if found is None:
            raise ctx.error(line, "data row before the OSU '# Size  Avg Latency(us)' header")
        cells = text.split()
        if len(cells) != width:
            raise ctx.error(line, f"{len(cells)} cells, but the header has {width} columns")
        rows.append(_row(ctx, line, cells, found, collective))
    return rows


def _row(ctx, line, cells, found, collective):
    collective = collective or ctx.fallback_collective("no '# OSU MPI ... Latency Test' title line")
    if "msg_size" in found:
        msg_size = cells[found["msg_size"][0]]
    elif collective in ("barrier", "ibarrier"):
        msg_size = 0
    else:
        raise ctx.error(line, "OSU header without a Size column")
    return ctx.measurement(
        line, collective=collective,
        algorithm=ctx.fallback_algorithm() or "default",
        segsize=ctx.fallback_segsize(),
        comm_size=ctx.fallback_comm_size(line, "OSU output does not record the communicator size"),
        msg_size=msg_size,
        time=cells[found["time"][0]], scale=found["time"][1],
        reps=cells[found["reps"][0]] if "reps" in found else None, total=ctx.total_sizes("osu", collective))
