"""Readers of benchmark output files. Every reader returns the tidy table (list of Measurement)."""

from .table import DEFAULT_ALGORITHM, GENERIC_COLUMNS, Measurement  # noqa: F401

FORMATS = ("auto", "csv", "skampi", "osu", "imb", "detail", "occ")


def read_measurements(paths, fmt="auto", collective=None, comm_size=None, column_map=None):
    """Read one or more files into one aggregated list of Measurement (placeholder: being written)."""
    raise NotImplementedError
