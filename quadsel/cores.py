"""Independent work shared out among forked worker processes, one per usable core: the held-out folds
(decision/fold_pool.py) and the report's C searches (evaluate/report.py).

`cores(limit)` is how many processes may run: the cores this process may use, at most QUADSEL_FOLD_PROCESSES
when set (1: everything in this process), 1 where fork is not available. `fork(targets)` starts one worker
per target: SIGINT is blocked while they fork and ignored in them (a Ctrl-C is the parent's to handle: it ends
the workers, `stop`), so a worker never prints a traceback of its own. `forked_map(func, items)` is
[func(item) for item in items], the items shared out round robin; the results come back in order, and an
exception in a worker is raised in the parent.
"""

import multiprocessing
import os
import signal
import traceback

PARALLEL_FROM = 50_000      # measured points x methods from which work goes to workers (below, forking costs more
                            # than it saves)


def cores(limit=None):
    """Processes that may run side by side: usable cores, capped by QUADSEL_FOLD_PROCESSES and `limit`; 1 without
    fork."""
    if "fork" not in multiprocessing.get_all_start_methods():
        return 1
    try:
        capped = int(os.environ.get("QUADSEL_FOLD_PROCESSES", "0") or 0)
    except ValueError:
        capped = 0
    try:
        n = len(os.sched_getaffinity(0))
    except AttributeError:          # not on Linux
        n = os.cpu_count() or 1
    for cap in (capped, limit):
        if cap:
            n = min(n, cap)
    return max(n, 1)


def _ignoring_ctrl_c(target, *args):
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    target(*args)


def fork(targets):
    """[(parent end of a pipe, process)] of one forked worker per (target, args) of `targets`, each called as
    target(child end, *args) with SIGINT ignored; SIGINT blocked here while they start."""
    context = multiprocessing.get_context("fork")
    started = []
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})    # no Ctrl-C in a worker's first steps
    try:
        for target, args in targets:
            parent, child = context.Pipe()
            proc = context.Process(target=_ignoring_ctrl_c, args=(target, child, *args), daemon=True)
            proc.start()
            child.close()
            started.append((parent, proc))
    except BaseException:
        stop(started, kill=True)
        raise
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
    return started


def stop(started, kill=False):
    """End the workers of `fork`: wait for them (killed at once with `kill`: the parent gave up on them)."""
    for conn, proc in started:
        if kill and proc.is_alive():
            proc.kill()
        proc.join(timeout=5)
        if proc.is_alive():
            proc.kill()
            proc.join()
        conn.close()


def send_error(conn, error):
    """A worker's failure, handed to the parent (which raises it): ("error", the exception, or its traceback's
    text when it does not pickle)."""
    try:
        conn.send(("error", error))
    except Exception:               # noqa: BLE001 (an exception that does not pickle)
        conn.send(("error", RuntimeError(traceback.format_exc())))


def _serve_map(conn, func, items, mine):
    try:
        conn.send(("ok", [func(items[i]) for i in mine]))
    except BaseException as error:      # noqa: BLE001 (handed to the parent, which raises it)
        send_error(conn, error)
    finally:
        conn.close()


def forked_map(func, items, workers=None):
    """[func(item) for item in items], side by side in up to `workers` (default: cores()) forked processes; in
    this process when there is one item or one core. The results must pickle."""
    items = list(items)
    n = min(cores() if workers is None else workers, len(items))
    if n < 2:
        return [func(item) for item in items]
    groups = [list(range(i, len(items), n)) for i in range(n)]
    started = fork([(_serve_map, (func, items, group)) for group in groups])
    done = False
    try:
        out, failure = gather(groups, [conn for conn, _ in started], len(items))
        done = True
    finally:
        stop(started, kill=not done)
    if failure is not None:
        raise failure
    return out


def gather(groups, conns, n):
    """One answer from each worker, ("ok", its results in its group's order) or ("error", exception): (the n
    results in order, the first worker's failure or None), once every answer is in."""
    out, failure = [None] * n, None
    for group, conn in zip(groups, conns):
        try:
            kind, payload = conn.recv()
        except EOFError:
            kind, payload = "error", RuntimeError("a worker ended without an answer")
        if kind == "error":
            failure = failure or payload
            continue
        for i, result in zip(group, payload):
            out[i] = result
    return out, failure
