"""Paper Table 3 analogue: decision time of the generated C function for depth-limited and exact trees.

usage: python benchmarks/decision_time.py [--collective reduce] FILES...
Builds each tree, generates C, compiles it with gcc -O2 with a driver that times 10^7 decisions on
random (comm size, message size) pairs (same seed for every tree), and prints a table.
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile

from quadsel.targets.c import generate_c, generate_c_table
from quadsel.decision.decision_function import build_decision_function
from quadsel.decision.decision_map import build_decision_map
from quadsel.ingest import read_measurements
from quadsel.decision.padding import padded_size

DRIVER = r"""
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
int quadsel_decision(int comm_size, size_t msg_size, int *segsize);
int main(int argc, char **argv)
{
    long n = atol(argv[1]); int max_comm = atoi(argv[2]); unsigned long max_msg = strtoul(argv[3], NULL, 10);
    int *comm = malloc(sizeof(int) * 4096); size_t *msg = malloc(sizeof(size_t) * 4096);
    unsigned long s = 12345; long i; long sum = 0; int seg; struct timespec a, b;
    for (i = 0; i < 4096; i++) {   /* fixed pseudo-random queries, the same for every tree */
        s = s * 6364136223846793005UL + 1442695040888963407UL; comm[i] = 2 + (int)((s >> 33) % (unsigned long)(max_comm - 1));
        s = s * 6364136223846793005UL + 1442695040888963407UL; msg[i] = (size_t)((s >> 33) % (max_msg + 1));
    }
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (i = 0; i < n; i++) sum += quadsel_decision(comm[i & 4095], msg[i & 4095], &seg) + seg;
    clock_gettime(CLOCK_MONOTONIC, &b);
    printf("%.3f %ld\n", ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / n, sum);
    return 0;
}
"""


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+")
    parser.add_argument("--collective")
    parser.add_argument("-n", type=int, default=10_000_000)
    args = parser.parse_args()
    dmap = build_decision_map(read_measurements(args.files, collective=args.collective), args.collective)
    k = padded_size(*dmap.shape).bit_length() - 1
    print(f"{dmap.collective}: {dmap.shape[0]}x{dmap.shape[1]} map, {len(dmap.methods)} methods, {args.n} decisions per tree")
    print("| Constraint | Mean depth | Leaves | Nodes | if/else-if statements | if/else-if [ns] | node table [ns] | node table [bytes] |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        driver = os.path.join(tmp, "driver.c")
        with open(driver, "w") as handle:
            handle.write(DRIVER)
        for depth in list(range(1, k + 1)) + [None]:
            fn = build_decision_function(dmap, max_depth=depth)
            times = []
            for form, generate in (("if", generate_c), ("table", generate_c_table)):
                source = generate(fn, name="quadsel_decision")
                path = os.path.join(tmp, f"d{depth}{form}.c")
                with open(path, "w") as handle:
                    handle.write(source)
                exe = path[:-2]
                subprocess.run(["gcc", "-std=c99", "-O2", "-o", exe, path, driver], check=True)
                out = subprocess.run([exe, str(args.n), str(int(dmap.comm_sizes[-1]) * 2), str(int(dmap.msg_sizes[-1]) * 2)],
                                     check=True, capture_output=True, text=True).stdout.split()
                times.append(float(out[0]))
                if form == "if":
                    statements = len(re.findall(r"if \(.*\) \{ /\* (?:NW|NE|SW|SE) \*/", source))
            stats = fn.tree.stats()
            # node table: 8 ints per node, the two axes, the two first-copy maps, two ints per method
            table_bytes = 4 * (8 * stats["nodes"] + dmap.shape[0] * 2 + dmap.shape[1] + 2 * len(dmap.methods)) + 8 * dmap.shape[1]
            print(f"| {fn.constraint} | {stats['depth_mean']:.2f} | {stats['leaves']} | {stats['nodes']} | {statements} | "
                  f"{times[0]:.2f} | {times[1]:.2f} | {table_bytes} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
