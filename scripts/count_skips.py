"""Count the tests a run would skip, from the collection alone (no test runs): a pytest plugin.

usage: PYTHONPATH=$PWD:scripts python -m pytest --collect-only -q -p count_skips [tests]
       (run it with and without QUADSEL_MPICH_PYTHON / QUADSEL_IMPI_PYTHON: README.md states both counts)

Counted: every test whose skip / skipif marks (module-level `pytestmark` included) skip it here, and every test
that needs the `orfeo` fixture (../shared/datasets, absent from a fresh clone) -- its count is given apart,
since it depends on the folder beside the clone, not on the environment. Not counted: tests that call
pytest.skip() while they run (e.g. a compiler that is absent), which only a run can tell.
"""

from collections import Counter


def pytest_collection_modifyitems(session, config, items):
    from _pytest.skipping import evaluate_skip_marks
    reasons, datasets = Counter(), 0
    for item in items:
        skipped = evaluate_skip_marks(item)
        if skipped is not None:
            reasons[skipped.reason] += 1
        elif "orfeo" in getattr(item, "fixturenames", ()):
            datasets += 1
    total = sum(reasons.values())
    lines = [f"count_skips: {len(items)} tests collected, {total} skipped by their marks here"]
    lines += [f"  {n:4d}  {reason}" for reason, n in reasons.most_common()]
    lines.append(f"  and {datasets} more need ../shared/datasets (skipped where it is absent)")
    config._count_skips = "\n".join(lines)


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    text = getattr(config, "_count_skips", None)
    if text:
        terminalreporter.write_line(text)
