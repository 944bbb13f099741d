"""Small builders of measurement tables for tests (no files needed)."""

import numpy as np

from quadsel.ingest.table import Measurement


def table_from_cube(cost, comm_sizes, msg_sizes, methods, collective="bcast", default=None):
    """Measurements from a (C, M, K) cost cube (NaN = not measured); methods are (algorithm, segsize)."""
    rows = []
    for ci, comm in enumerate(comm_sizes):
        for mi, msg in enumerate(msg_sizes):
            for k, (alg, seg) in enumerate(methods):
                if not np.isnan(cost[ci, mi, k]):
                    rows.append(Measurement(collective, alg, seg, int(comm), int(msg), float(cost[ci, mi, k])))
            if default is not None:
                rows.append(Measurement(collective, "default", 0, int(comm), int(msg), float(default[ci, mi])))
    return rows


def random_table(rng, n_comm, n_msg, n_methods, names=None, collective="bcast"):
    comm_sizes = np.sort(rng.choice(np.arange(2, 300), size=n_comm, replace=False))
    msg_sizes = np.sort(rng.choice(np.arange(0, 1 << 21), size=n_msg, replace=False))
    names = names or [str(k + 1) for k in range(n_methods)]
    methods = [(names[k % len(names)], 0 if k < len(names) else 1024 * k) for k in range(n_methods)]
    cost = rng.uniform(1.0, 100.0, size=(n_comm, n_msg, n_methods))
    return table_from_cube(cost, comm_sizes, msg_sizes, methods, collective), comm_sizes, msg_sizes
