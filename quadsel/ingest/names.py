"""Collective names and the facts a file name may carry (collective, comm size, algorithm, segment size).

Benchmarks such as OSU do not record the communicator size or the forced algorithm, so users encode them in
file names (osu_bcast_np16_alg6.txt); docs/formats-input.md states the rules implemented here.
"""

import re
from pathlib import Path

from ..errors import InputError

_BLOCKING = ("allgather", "allgatherv", "allreduce", "alltoall", "alltoallv", "alltoallw", "barrier", "bcast",
             "exscan", "gather", "gatherv", "reduce", "reduce_scatter", "reduce_scatter_block", "scan",
             "scatter", "scatterv")
# Non-blocking variants (MPI_Ibcast, OSU/IMB-NBC) are distinct collectives with their own algorithms.
COLLECTIVES = frozenset(_BLOCKING + tuple("i" + name for name in _BLOCKING))


def normalise_collective(name):
    """"MPI_Bcast" / "Bcast" / " bcast " -> "bcast"; None when it is not an MPI collective."""
    text = str(name).strip().lower().replace("-", "_")
    if text.startswith("mpi_"):
        text = text[4:]
    return text if text in COLLECTIVES else None


def split_collective_prefix(text):
    """"Bcast_using_Send_Recv" -> ("bcast", "using_Send_Recv"); longest collective first (reduce_scatter_block)."""
    lower = text.lower()
    if lower.startswith("mpi_"):
        text, lower = text[4:], lower[4:]
    for name in sorted(COLLECTIVES, key=len, reverse=True):
        if lower == name:
            return name, ""
        if lower.startswith(name + "_"):
            return name, text[len(name) + 1:]
    return None, ""


_COMM_TOKEN = re.compile(r"^(?:np|n|p|procs|ranks|nprocs)([0-9]+)$|^([0-9]+)(?:np|p|procs|ranks)$")
_ALG_TOKEN = re.compile(r"^(?:algorithm|algo|alg)([0-9]+)$")
_SEG_TOKEN = re.compile(r"^(?:segsize|segment|seg)([0-9]+)$")
_RUN_TOKEN = re.compile(r"^(?:run|rep|try)[0-9]+$")
_WORD_TOKEN = re.compile(r"^[a-z][a-z0-9]*$")
# Words that name the tool or the output, never an algorithm.
_NOISE = frozenset(("osu", "imb", "mpi", "mpi1", "nbc", "skampi", "occ", "latency", "lat", "results", "result", "out"))


class FileName:
    """What a measurement file's name says. Each fact is None when the name does not tell it."""

    def __init__(self, path):
        self.path = path
        self.tokens = [t for t in re.split(r"[_\-.\s]+", Path(path).stem.lower()) if t]
        self.collective, self._after = self._find_collective()

    def _find_collective(self):
        # The longest run of tokens spelling a collective wins: reduce_scatter_block before reduce.
        for start in range(len(self.tokens)):
            for stop in range(len(self.tokens), start, -1):
                if "_".join(self.tokens[start:stop]) in COLLECTIVES:
                    return "_".join(self.tokens[start:stop]), stop
        return None, len(self.tokens)

    def comm_sizes(self):
        """Candidate communicator sizes: np16/n16/p16/16procs tokens, else every all-digit token."""
        explicit = {int(m.group(1) or m.group(2)) for m in map(_COMM_TOKEN.match, self.tokens) if m}
        if explicit:
            return sorted(explicit)
        return sorted({int(t) for t in self.tokens if t.isascii() and t.isdigit()})

    def segsize(self):
        values = {int(m.group(1)) for m in map(_SEG_TOKEN.match, self.tokens) if m}
        return values.pop() if len(values) == 1 else None

    def algorithm(self):
        """alg6/algo6/algorithm6 -> "6"; else the words after the collective name (osu_bcast_np16_binomial)."""
        ids = sorted({m.group(1) for m in map(_ALG_TOKEN.match, self.tokens) if m})
        if len(ids) > 1:
            raise InputError(self.path, None, f"the file name names several algorithms ({', '.join(ids)})")
        if ids:
            return ids[0]
        if self.collective is None:
            return None
        words = [t for t in self.tokens[self._after:]
                 if _WORD_TOKEN.match(t) and t not in _NOISE
                 and not (_COMM_TOKEN.match(t) or _SEG_TOKEN.match(t) or _RUN_TOKEN.match(t))]
        return "_".join(words) or None
