"""`quadsel measure --sample model --budget SHARE|TIME`: the sparse measurement a model-based build
(`quadsel build --model FORM`) predicts the rest of the grid from (docs/measure.md, *Sampling for a model*).

Every method is measured at a point (a model is fitted per method, and a point whose methods are all measured
keeps its measured decision), points in ascending order of their expected cost — the communicator size × (1 +
message size / 32 KiB), the prior the progress bar's ETA uses — until the budget is spent. The cheap points
are the small messages at every communicator size and every message at the small communicator sizes: they
give every method's latency term at every P and its byte term at small P, which is what the models' shared
parameters need; the expensive corner (large P × large messages), where most of a sweep's time goes, is left
to the models. Points are taken in passes of doubling expected cost (within a pass, communicator sizes in
ascending order), so a communicator size is visited once per pass, not once per point.

The plan holds no MPI and no clock, like adaptive.py: the MPI run and the replay drive the same plan.
"""

import math

from .adaptive import AdaptivePlan

SAMPLES = ("model",)


def expected_cost(comm_size, msg_size):
    """Relative cost of a point before anything is measured: grows with the ranks and the bytes."""
    return comm_size * (1.0 + msg_size / 32768.0)


class ModelSample(AdaptivePlan):
    """Every method at the cheapest points first (see the module's docstring)."""

    def __init__(self, comm_sizes, msg_sizes, methods):
        super().__init__(comm_sizes, msg_sizes, methods)
        points = sorted(((c, m) for c in self.comm_sizes for m in self.msg_sizes),
                        key=lambda p: (expected_cost(*p), p))
        lowest = expected_cost(*points[0]) if points else 1.0
        passes = {}
        for c, m in points:
            k = max(0, math.ceil(math.log2(expected_cost(c, m) / lowest) - 1e-9))
            passes.setdefault(k, {}).setdefault(c, []).append(m)
        self._visits = [(c, set(msgs)) for k in sorted(passes) for c, msgs in sorted(passes[k].items())]
        self._current = set()
        self._gaps = []

    def next_row(self):
        if not self._visits:
            return None
        c, self._current = self._visits.pop(0)
        return c

    def row_finished(self, c):
        i = self.comm_sizes.index(c)
        if i not in self.rows_done:
            self.rows_done.append(i)

    def point(self, c, m):
        self._chosen[(c, m)] = list(self.methods) if m in self._current else []
        return self._chosen[(c, m)]

    def summary(self):
        out = super().summary()
        out.pop("strategy", None)
        out.pop("comm_sizes_skipped", None)
        out["sample"] = "model: every method, points in ascending expected cost (comm size x (1 + msg/32 KiB))"
        return out


def make_plan(spec, comm_sizes, msg_sizes, methods):
    """The plan of a planned run: --sample, else --adaptive."""
    if getattr(spec, "sample", None) == "model":
        return ModelSample(comm_sizes, msg_sizes, methods)
    return AdaptivePlan(comm_sizes, msg_sizes, methods, spec.strategy)
