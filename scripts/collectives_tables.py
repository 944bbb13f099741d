"""Print the ids and fallbacks sections of docs/collectives.md from quadsel/libraries/ (run after changing them).

usage: python scripts/collectives_tables.py   (then paste between the markers of docs/collectives.md;
tests/libraries/test_library_tables.py checks that the page holds this text)
"""

from quadsel.libraries import COLLECTIVES, fallbacks, mpich, openmpi

BEGIN, END = "<!-- ids and fallbacks: scripts/collectives_tables.py -->", "<!-- end of ids and fallbacks -->"


def _runs(lib, f):
    if f.runs == fallbacks.ERROR:
        return "an error (Open MPI: MPI_ERR_UNSUPPORTED_OPERATION) or an abort (MPICH)"
    if f.runs == "default":
        return "MPICH's own selection (`auto`)"
    return f"{f.runs} {openmpi.ALGORITHMS[f.collective][int(f.runs)]}" if lib == "openmpi" else f.runs


def text():
    out = [BEGIN, "## Algorithm ids of each library", "",
           "The tables quadsel forces, checks and writes (`ALGORITHMS` of `quadsel/libraries/openmpi.py` and "
           "`quadsel/libraries/mpich.py`) are the installed libraries' own: `tests/libraries/test_library_tables.py` "
           "reads them back through MPI_T from the Open MPI wheel (5.0.11: each `coll_tuned_<coll>_algorithm` is an "
           "MPI_T enumeration) and from MPICH's venv (5.0.2: each `MPIR_CVAR_<COLL>_INTRA_ALGORITHM` lists its "
           "values in its description) and fails on any difference. `quadsel measure` labels an Open MPI method by "
           "its id, an MPICH method by its name.", "",
           "### Open MPI 5.0.x coll/tuned (`coll_tuned_<coll>_algorithm`; 0 = `ignore`, the fixed decision)", "",
           "| collective | rules-file id | algorithms (id name) | read the segment size |", "|---|---:|---|---|"]
    for c in COLLECTIVES:
        algs = ", ".join(f"{i} {openmpi.MPIT_SPELLINGS.get((c, i), n)}" for i, n in openmpi.ALGORITHMS[c].items())
        seg = ", ".join(str(i) for i in sorted(openmpi.SEGMENTED.get(c, ()))) or "none"
        out.append(f"| {c} | {openmpi.COLLECTIVE_IDS[c]} | {algs} | {seg} |")
    out += ["", "allgatherv 1 is `default` in MPI_T (`ompi_coll_base_allgatherv_intra_basic_default`: gatherv + "
            "bcast); quadsel spells it `basic_default`, because `default` means the library's own choice everywhere "
            "in quadsel. scan and exscan have no fixed decision: 0 runs 1 (linear). gatherv, scatterv and alltoallw "
            "have no coll/tuned algorithm to force, so quadsel does not measure them.", "",
            "### MPICH 5.0.x (`MPIR_CVAR_<COLL>_INTRA_ALGORITHM`; `auto` = MPICH's own selection)", "",
            "| collective | algorithms | swept only when `--algorithms` names them |", "|---|---|---|"]
    for c in COLLECTIVES:
        nd = ", ".join(a for a in mpich.ALGORITHMS[c] if a in mpich.NOT_BY_DEFAULT) or "—"
        out.append(f"| {c} | {', '.join(mpich.ALGORITHMS[c])} | {nd} |")
    out += ["", "`nb` runs the non-blocking algorithm and waits. Forced MPICH runs set "
            "`MPIR_CVAR_DEVICE_COLLECTIVES=none` so that ch4 does not pick its own. Algorithms with parameters run "
            "with MPICH's CVAR defaults, which the MPICH JSON target writes into their containers "
            "(`mpich.PARAMETERS`).", "",
            "## Internal fallbacks: where the library runs another algorithm than the forced one", "",
            "Read from the sources — Open MPI v5.0.9 `ompi/mca/coll/base/coll_base_*.c` (the `switching to` "
            "branches), MPICH v5.0.1 `src/mpi/coll/coll_algorithms.txt` (`restrictions:`, which `maint/gen_coll.py` "
            "turns into `MPII_COLLECTIVE_FALLBACK_CHECK`; with the default `MPIR_CVAR_COLLECTIVE_FALLBACK=silent` "
            "MPICH then runs `MPIR_<Coll>_allcomm_auto`, its own selection) — and checked on the installed "
            "libraries by `tests/libraries/test_fallbacks.py`: Open MPI by traffic (a replaced algorithm sends "
            "exactly its replacement's messages), MPICH with `MPIR_CVAR_COLLECTIVE_FALLBACK=print` at 2 and 3 "
            "ranks (it prints exactly the table's rows). The table is `quadsel/libraries/fallbacks.py`; each condition "
            "there also names the call fields it reads (`reads`), so that ingest asks it once per distinct value of "
            "those fields over a whole sweep, and a property test in `tests/libraries/test_fallbacks.py` holds every "
            "condition to its list. "
            "*count* = elements per rank (bytes per rank / datatype size), *p* = communicator size.", "",
            "**What quadsel does with them.** Before it times anything, `quadsel measure` computes every point "
            "where a forced algorithm would be replaced for its own calls (MPI_SUM, never in place, the chosen "
            "datatype) and does not time it there: the CSV gets a "
            "`# replaced COLL,ALG,SEG,P,MSG runs X: condition (source)` line and the metadata a `replaced` list "
            "instead of a row. The decision map therefore has no time for that method at that point — it is never "
            "credited with the time of the algorithm that really ran, and the builders never pick an unmeasured "
            "method over a measured one. `build` and `report` print how many points were replaced and where. An "
            "algorithm the library refuses or aborts on (`runs error`) is handled the same way, so a sweep never "
            "crashes on it.", "",
            "**Other benchmarks' rows.** OSU, IMB, SKaMPI, OCC, `detail.out` and generic CSV rows were timed by "
            "someone else: a row of a forced algorithm at a point where its library replaces it holds the "
            "replacement's time. Wherever the library (metadata, names or `--library`) and the algorithm are known, "
            "every reader's rows go through the same table (`drop_replaced` in `quadsel/ingest/replaced.py`) and such "
            "rows are dropped before the decision map is built; `build` and `report` list them like `# replaced` "
            "lines. Those files do not record their datatype: OSU and IMB-MPI1 time reductions on 4-byte floats and "
            "the data movers on bytes, so a count condition is checked for reductions with 4-byte and with 1-byte "
            "elements and a row replaced under either is dropped (a row too many dropped loses a measurement; one "
            "too few would credit another algorithm's time). quadsel measure's own files keep their rows: their "
            "`# replaced` lines already say where, with the datatype they were timed with "
            "(`tests/ingest/test_replaced_rows.py`).", ""]
    for lib, title in (("openmpi", "Open MPI 5.0.x"), ("mpich", "MPICH 5.0.x")):
        out += [f"### {title}", "", "| collective | forced | when | runs instead | source |", "|---|---|---|---|---|"]
        for f in fallbacks.known(lib):
            name = f"{f.algorithm} {openmpi.ALGORITHMS[f.collective][int(f.algorithm)]}" if lib == "openmpi" \
                else f.algorithm
            out.append(f"| {f.collective} | {name} | {f.when} | {_runs(lib, f)} | `{f.source}` |")
        out.append("")
    out += ["Not modelled, because they never apply to quadsel's calls: MPICH's scan smp also needs node-consecutive "
            "ranks (one node: always); Open MPI's ring reduce_scatter and MPICH's `noinplace` algorithms differ only "
            "with non-commutative operations or MPI_IN_PLACE, which quadsel never uses. Chains are followed: Open "
            "MPI's segmented ring with count < p × segment count runs ring, which with count < p runs recursive "
            "doubling.", END]
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    print(text(), end="")
