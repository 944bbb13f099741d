"""§3: pad an n×m decision map to 2^k×2^k by replicating rows and columns.

Each padding is an index map `padded index -> original index`, non-decreasing, covering every original
index at least once. A query for an original index uses its *first* copy (`first_copy`), so a measured
point always lands on a cell of its own, whatever the padding.
"""

import numpy as np

PAD_MODES = ("spread", "edge")


def padded_size(n_rows, n_cols):
    """Smallest power of two >= both dimensions (at least 1)."""
    n = max(n_rows, n_cols, 1)
    return 1 << (n - 1).bit_length()


def pad_index(n, size, mode="spread"):
    """Index map of length `size` onto range(n).

    spread: the copies are spread evenly over the axis (original i covers padded cells
            ceil(i*size/n) .. ceil((i+1)*size/n)-1);
    edge:   the originals keep their positions and the last one is repeated to the end.
    """
    if n < 1 or size < n:
        raise ValueError("cannot pad %d entries into %d cells" % (n, size))
    if mode == "spread":
        return (np.arange(size, dtype=np.int64) * n) // size
    if mode == "edge":
        return np.minimum(np.arange(size, dtype=np.int64), n - 1)
    raise ValueError(f"unknown padding mode {mode!r} (choose from {', '.join(PAD_MODES)})")


def first_copy(index_map, n):
    """For each original index, the first padded index holding it."""
    return np.searchsorted(index_map, np.arange(n), side="left").astype(np.int64)


def pad(grid, row_map, col_map):
    """The padded copy of a 2-D array."""
    return grid[np.ix_(row_map, col_map)]
