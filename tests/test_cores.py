"""Work shared out among forked workers (quadsel/cores.py): what one process gives, in order; a worker's failure
raised here; no worker left behind; one process when asked. The report's C counts are the same either way."""

import os

import pytest

from quadsel import cores


def _two_cores(monkeypatch, processes="2"):
    monkeypatch.setattr(cores.os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    monkeypatch.setenv("QUADSEL_FOLD_PROCESSES", processes)


def test_forked_map_gives_what_one_process_gives_in_order(monkeypatch):
    _two_cores(monkeypatch)
    assert cores.cores() == 2
    got = cores.forked_map(lambda x: (x * x, os.getpid()), range(7))
    assert [square for square, _ in got] == [x * x for x in range(7)]
    pids = {pid for _, pid in got}
    assert os.getpid() not in pids and len(pids) == 2          # two workers, round robin


def test_one_process_when_asked_or_with_one_item(monkeypatch):
    _two_cores(monkeypatch, "1")
    assert {pid for pid in cores.forked_map(lambda x: os.getpid(), range(3))} == {os.getpid()}
    _two_cores(monkeypatch)
    assert cores.forked_map(lambda x: os.getpid(), [0]) == [os.getpid()]
    assert cores.forked_map(lambda x: os.getpid(), range(3), workers=1) == [os.getpid()] * 3


def test_a_workers_failure_is_raised_here_and_no_worker_is_left(monkeypatch):
    _two_cores(monkeypatch)
    seen = []
    real = cores.fork

    def fork(targets):
        seen.extend(real(targets))
        return seen

    def fails_on_three(x):
        if x == 3:
            raise ValueError("no square of 3")
        return x

    monkeypatch.setattr(cores, "fork", fork)
    with pytest.raises(ValueError, match="no square of 3"):
        cores.forked_map(fails_on_three, range(6))
    assert seen and not any(proc.is_alive() for _, proc in seen)


def test_the_reports_c_counts_are_the_same_side_by_side(monkeypatch):
    """evaluate/report.py runs the rows' C searches in workers on a large map: the rows are those of one process."""
    from quadsel.decision.decision_map import build_decision_map
    from quadsel.evaluate import report
    from quadsel.ingest import read_measurements
    from helpers import REPO
    dmap = build_decision_map(read_measurements([str(REPO / "examples" / "ompi5-reduce.csv")]))
    selectors = report.build_selectors(dmap)
    monkeypatch.setattr(cores, "PARALLEL_FROM", 0)
    _two_cores(monkeypatch, "1")
    serial = report._assignments(dmap, selectors)
    _two_cores(monkeypatch)
    calls = []
    real = cores.forked_map
    monkeypatch.setattr(cores, "forked_map", lambda *a, **k: calls.append(a) or real(*a, **k))
    assert report._assignments(dmap, selectors) == serial and calls
    assert serial == [s.deployed_assignments for s in selectors]
