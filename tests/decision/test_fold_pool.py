"""The held-out folds grown in forked workers (decision/fold_pool.py) give what one process gives."""

import json

import pytest

from quadsel import cores
from quadsel.decision import fold_pool, size
from quadsel.decision.builder import build_size_tree
from quadsel.decision.decision_map import build_decision_map
from quadsel.decision.options import DEFAULT_BUILD
from quadsel.ingest import read_measurements

from helpers import REPO


@pytest.fixture(scope="module")
def dmap():
    return build_decision_map(read_measurements([str(REPO / "examples" / "ompi5-bcast.csv")]))


def _tree(dmap, monkeypatch, processes, parallel_from):
    monkeypatch.setenv("QUADSEL_FOLD_PROCESSES", str(processes))
    monkeypatch.setattr(cores, "PARALLEL_FROM", parallel_from)
    tree = build_size_tree(dmap, **DEFAULT_BUILD).to_json()
    tree.get("provenance", {}).pop("created", None)         # when it was built
    tree.pop("created", None)
    return json.dumps(tree, sort_keys=True, default=str)


def test_the_default_build_is_the_same_with_the_folds_in_workers(dmap, monkeypatch):
    assert fold_pool.workers_for(dmap, 4) == 1            # a small map: the folds stay in this process
    serial = _tree(dmap, monkeypatch, 1, 0)
    monkeypatch.setattr(cores.os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    monkeypatch.setenv("QUADSEL_FOLD_PROCESSES", "2")
    monkeypatch.setattr(cores, "PARALLEL_FROM", 0)
    assert fold_pool.workers_for(dmap, 4) == 2
    assert _tree(dmap, monkeypatch, 2, 0) == serial


def test_one_process_when_asked_or_with_one_fold(dmap, monkeypatch):
    monkeypatch.setattr(cores, "PARALLEL_FROM", 0)
    monkeypatch.setattr(cores.os, "sched_getaffinity", lambda pid: {0, 1, 2, 3}, raising=False)
    monkeypatch.setenv("QUADSEL_FOLD_PROCESSES", "1")
    assert fold_pool.workers_for(dmap, 4) == 1
    monkeypatch.setenv("QUADSEL_FOLD_PROCESSES", "3")
    assert fold_pool.workers_for(dmap, 4) == 3
    assert fold_pool.workers_for(dmap, 1) == 1


def test_a_workers_failure_is_raised_here(dmap, monkeypatch):
    def trees(train, budgets):
        for budget in budgets:
            if budget == 2:
                raise ValueError("no tree of 2 leaves")
            yield budget

    tests = size.folds(dmap)
    runner = fold_pool.ForkedFolds(dmap, trees, tests, lambda fn, test: fn, 2)
    try:
        assert runner.records(1) == [1] * len(tests)
        with pytest.raises(ValueError, match="no tree of 2 leaves"):
            runner.records(2)
    finally:
        runner.close()
    assert not any(proc.is_alive() for _, proc in runner.started)
