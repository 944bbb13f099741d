"""Long fuzz run of every reader (tests/fuzzing.py): N mutated inputs, zero uncaught exceptions expected.

usage: python benchmarks/fuzz_readers.py [--count 100000] [--seed 1] [--keep DIR] [READER ...]

The inputs are split evenly over the readers (all of fuzzing.READERS by default). Every input is read or
refused with a one-line QuadselError; anything else is counted as a bug, its input saved under --keep
(default: a temporary folder, printed) and the run exits with status 1. Result of the last run: docs/benchmarks.md.
"""

import argparse
import os
import random
import sys
import tempfile
import time
import traceback

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))

import fuzzing  # noqa: E402 (after the path above)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("readers", nargs="*", default=sorted(fuzzing.READERS))
    parser.add_argument("--count", type=int, default=100_000, help="inputs in all (default 100000)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--keep", default=None, help="folder for the inputs that found a bug")
    args = parser.parse_args(argv)
    keep = args.keep or tempfile.mkdtemp(prefix="quadsel-fuzz-bugs-")
    per_reader = -(-args.count // len(args.readers))
    total = {"read": 0, "refused": 0, "bug": 0}
    bugs = {}
    start = time.time()
    print(f"{'reader':<16}{'inputs':>8}{'read':>8}{'refused':>9}{'bugs':>6}{'seconds':>9}")
    with tempfile.TemporaryDirectory(prefix="quadsel-fuzz-") as folder:
        for index, reader in enumerate(args.readers):
            rnd = random.Random(f"{args.seed}:{reader}")
            counts = {"read": 0, "refused": 0, "bug": 0}
            began = time.time()
            for number in range(per_reader):
                data = fuzzing.random_case(reader, rnd)
                try:
                    counts[fuzzing.run_one(reader, data, folder)] += 1
                except Exception as exc:   # the point of the run: count and keep, never stop
                    counts["bug"] += 1
                    where = traceback.extract_tb(exc.__traceback__)[-1]
                    key = (reader, type(exc).__name__, where.filename, where.lineno)
                    if key not in bugs:
                        path = os.path.join(keep, f"{reader}-{len(bugs)}.input")
                        with open(path, "wb") as handle:
                            handle.write(data)
                        bugs[key] = (str(exc)[:200], path)
            for key in counts:
                total[key] += counts[key]
            print(f"{reader:<16}{per_reader:>8}{counts['read']:>8}{counts['refused']:>9}{counts['bug']:>6}"
                  f"{time.time() - began:>9.1f}", flush=True)
    inputs = sum(total.values())
    print(f"{'all':<16}{inputs:>8}{total['read']:>8}{total['refused']:>9}{total['bug']:>6}{time.time() - start:>9.1f}")
    for (reader, name, filename, line), (message, path) in bugs.items():
        print(f"BUG {reader}: {name} at {filename}:{line}: {message} (input: {path})")
    print(f"{inputs} inputs, {total['bug']} uncaught exceptions" + (f"; inputs kept in {keep}" if bugs else ""))
    if not bugs and not args.keep:
        os.rmdir(keep)
    return 1 if bugs else 0


if __name__ == "__main__":
    sys.exit(main())
