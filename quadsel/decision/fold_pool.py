"""The held-out folds' trees grown side by side, each group of folds in a process of its own (decision/size.py's
fold_scores).

The folds are independent growths on their own training maps (four of them by default, each a few seconds at
1,008,000 rows): on a machine with more than one core, the folds are shared out among up to that many forked
workers, folds 0, 2 and 1, 3 on two cores. Each worker grows its folds' trees and scores them at their held-out
points itself; the parent hands out the leaf budgets one at a time (the early stopping of fold_scores still
decides, on every fold's score, which budget comes next) and gets back each fold's record, in fold order. The
numbers are the same as in one process: each fold runs the very same code on the same inputs.

Serial (one process, as before) when fork is not available, with one usable core, on small maps (below
PARALLEL_FROM point-methods, where forking costs more than it saves) or when QUADSEL_FOLD_PROCESSES=1
(QUADSEL_FOLD_PROCESSES=N: at most N workers; quadsel/cores.py, which starts and stops the workers).
"""

from .. import cores as _cores
from ..cores import cores, fork, gather, send_error, stop
_STOP = ("stop", None)


def workers_for(dmap, n_folds):
    """How many worker processes grow the folds of `dmap` (1: none, the folds run here)."""
    cpus = cores(n_folds) if n_folds >= 2 else 1
    if cpus < 2 or int(dmap.measured.sum()) * len(dmap.methods) < _cores.PARALLEL_FROM:   # (read now: one name)
        return 1
    return cpus


class SerialFolds:
    """Every fold's stream of trees in this process: `records(budget)` -> each fold's score of that budget."""

    def __init__(self, dmap, trees, tests, score, budgets):
        from .decision_map import training_map
        self.tests = tests
        self.score = score
        self.streams = [iter(trees(training_map(dmap, test), budgets)) for test in tests]

    def records(self, budget):
        return [self.score(next(stream), test) for stream, test in zip(self.streams, self.tests)]

    def close(self):
        for stream in self.streams:
            stream.close()


class _Fed:
    """The budgets a worker's streams iterate: those the parent sent so far, the next read from the pipe when a
    stream asks for it (re-iterable, as size.Ladder: budget_stream iterates the budgets twice)."""

    def __init__(self, conn):
        self.conn, self.got, self.done = conn, [], False

    def __iter__(self):
        i = 0
        while True:
            if i == len(self.got):
                if self.done:
                    return
                kind, budget = self.conn.recv()
                if kind == "stop":
                    self.done = True
                    return
                self.got.append(budget)
            yield self.got[i]
            i += 1


def _serve(conn, dmap, trees, tests, score):
    """A worker: its folds' trees, budget by budget as the parent sends them, each scored; ("ok", records) per
    budget, ("error", exception) once on failure. Ctrl-C is the parent's to handle (it ends the workers): ignored
    here (cores.fork)."""
    try:
        folds = SerialFolds(dmap, trees, tests, score, _Fed(conn))
        while True:
            try:
                out = [folds.score(next(stream), test) for stream, test in zip(folds.streams, folds.tests)]
            except StopIteration:       # the parent said stop
                return
            conn.send(("ok", out))
    except BaseException as error:      # noqa: BLE001 (handed to the parent, which raises it)
        send_error(conn, error)
    finally:
        conn.close()


class ForkedFolds:
    """The folds shared out among `workers` forked processes (round robin), as SerialFolds."""

    def __init__(self, dmap, trees, tests, score, workers):
        self.groups = [list(range(i, len(tests), workers)) for i in range(workers)]
        self.busy = False
        self.started = fork([(_serve, (dmap, trees, [tests[i] for i in group], score)) for group in self.groups])
        self.conns = [conn for conn, _ in self.started]
        self.n = len(tests)

    def records(self, budget):
        self.busy = True
        for conn in self.conns:
            try:
                conn.send(("budget", budget))
            except OSError:                 # a worker that failed: its error is read below
                pass
        out, failure = gather(self.groups, self.conns, self.n)
        self.busy = False                   # every worker answered (a failed one included): none is still growing
        if failure is not None:
            raise failure
        return out

    def close(self):
        """Stop the workers: those waiting for a budget end at once; those still growing (an exception, Ctrl-C,
        while the parent waited for them) are killed."""
        for conn in self.conns:
            try:
                conn.send(_STOP)
            except (OSError, ValueError):
                pass
        stop(self.started, kill=self.busy)


def fold_runner(dmap, trees, tests, score, budgets):
    """SerialFolds or ForkedFolds by workers_for; `budgets` is read by the serial streams only (the workers get
    each budget from `records`)."""
    workers = workers_for(dmap, len(tests))
    if workers < 2:
        return SerialFolds(dmap, trees, tests, score, budgets)
    return ForkedFolds(dmap, trees, tests, score, workers)
