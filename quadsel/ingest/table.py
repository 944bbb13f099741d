"""The tidy table every reader returns: one Measurement per (method, comm size, msg size) sample."""

from dataclasses import dataclass
from typing import Optional

from ..layout import Layout

from ..libraries.base import DEFAULT_ALGORITHM  # noqa: F401 (rows of the library's own choice: the baseline)

# Our own generic CSV layout (written by `quadsel measure`, read by every command).
GENERIC_COLUMNS = ("collective", "algorithm", "segsize", "comm_size", "msg_size", "time_us", "stddev_us", "reps")
# `quadsel measure -o -` (a stream) carries its metadata in the CSV as comment lines starting with this.
META_COMMENT = "# quadsel-meta:"


class Table(list):
    """What read_measurements returns: the Measurements, with the notes reading them produced (one line each,
    for stderr) and their MPI library (its name, e.g. openmpi, mpich, intelmpi; None when it cannot be told)."""

    def __init__(self, rows=(), notes=(), library=None, aggregated=False):
        super().__init__(rows)
        self.aggregated = aggregated      # one row per (collective, method, point): ingest.aggregate applied
        self.notes = list(notes)
        self.library = library
        self.replaced = []                # points dropped: the library runs another algorithm (ingest.replaced)


@dataclass(frozen=True)
class Measurement:
    collective: str            # lower case, e.g. "bcast"
    algorithm: str             # as in the file: Open MPI id ("6"), a name ("binomial") or "default"
    segsize: int               # bytes, 0 = no segmentation
    comm_size: int             # processes in the communicator, >= 1
    msg_size: int              # bytes, >= 0
    time: float                # microseconds, > 0
    stddev: Optional[float] = None
    reps: Optional[int] = None
    source: str = ""           # "file:line" it came from, for error messages
    nodes: Optional[int] = None    # the layout: nodes x ranks per node = comm_size; None = unknown layout
    ppn: Optional[int] = None      # ranks (processes) per node

    @property
    def layout(self):
        """Its Layout (nodes, ppn), or None when the row has no layout."""
        return None if self.ppn is None else Layout(self.nodes, self.ppn)

    @property
    def is_default(self):
        return self.algorithm.strip().lower() == DEFAULT_ALGORITHM
