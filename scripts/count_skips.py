"""Count the tests that need something a fresh clone on a fresh machine may lack, from the collection alone (no test
runs): a pytest plugin. README.md states these counts; tests/test_docs.py checks them.

usage: PYTHONPATH=$PWD:scripts python -m pytest --collect-only -q -p count_skips [tests]

Each such test carries a skip mark whose reason starts with what it needs (NEEDS below), whether or not it skips
here, so the counts are the same on every machine: with ../shared or without it, as root or not, with the venvs'
variables set or unset. A test that needs ../shared/datasets through the `orfeo` fixture counts as one too. The
line `skipped here` says how many of them skip on this machine. Not counted: tests that call pytest.skip() while
they run (e.g. a compiler that is absent), which only a run can tell.
"""

from collections import Counter

# what a test may need, as its skip reason starts (tests/conftest.py, tests/netns_helpers.py, ...)
NEEDS = ("the MPICH venv", "the Intel MPI venv", "../shared/datasets", "the namespace cluster", "a Slurm cluster")


def _needs(item):
    """The NEEDS of one test (its skipif marks' reasons and its fixtures), and whether a mark skips it here."""
    from _pytest.skipping import evaluate_skip_marks
    found = {need for mark in item.iter_markers("skipif") for need in NEEDS
             if str(mark.kwargs.get("reason", "")).startswith(need)}
    if "orfeo" in getattr(item, "fixturenames", ()):
        found.add("../shared/datasets")
    return found, evaluate_skip_marks(item) is not None


def pytest_collection_modifyitems(session, config, items):
    counts, skipped = Counter(), 0
    for item in items:
        found, skips = _needs(item)
        counts.update(found)
        skipped += skips
    lines = [f"count_skips: {len(items)} tests collected, {skipped} skipped by their marks here"]
    lines += [f"  {counts[need]:4d}  need {need}" for need in NEEDS]
    config._count_skips = "\n".join(lines)


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    text = getattr(config, "_count_skips", None)
    if text:
        terminalreporter.write_line(text)
