"""Other benchmarks' rows at points where the library replaces the forced algorithm (issue 17): OSU, IMB, generic
CSV rows of a known library and algorithm are dropped there (they hold the replacement's time), the decision map
never credits the forced algorithm with it, and build and report say where it happened. quadsel measure's own
files are left to their `# replaced` lines."""

import json

from click.testing import CliRunner

from quadsel.cli import main
from quadsel.decision.decision_map import build_decision_map
from quadsel.ingest import read_measurements


def _osu(path, title, sizes, time=5.0):
    lines = [f"# OSU MPI {title} Latency Test v7.3", "# Size       Avg Latency(us)"]
    lines += [f"{m:<12d}{time + i:.2f}" for i, m in enumerate(sizes)]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_osu_ring_allreduce_below_one_element_per_rank_is_dropped(tmp_path):
    # Open MPI ring allreduce (4) runs recursive doubling (3) when count < comm size: at 3 ranks, 4 and 8 bytes
    # of floats are 1 and 2 elements; 64 bytes (16 floats) is ring itself
    ring = _osu(tmp_path / "osu_allreduce_alg4_np3.txt", "Allreduce", [4, 8, 64])
    rd = _osu(tmp_path / "osu_allreduce_alg3_np3.txt", "Allreduce", [4, 8, 64], time=50.0)
    rows = read_measurements([str(ring), str(rd)], library="openmpi")
    assert sorted((m.algorithm, m.msg_size) for m in rows) == [("3", 4), ("3", 8), ("3", 64), ("4", 64)]
    assert rows.replaced == [("allreduce", "4", 0, 3, 4, "3"), ("allreduce", "4", 0, 3, 8, "3")]
    dmap = build_decision_map(rows)
    ring_at = dmap.methods.index(next(m for m in dmap.methods if m.algorithm == "4"))
    # ring is never credited with recursive doubling's time where it did not run
    assert [bool(x) for x in ~__import__("numpy").isnan(dmap.cost[0, :, ring_at])] == [False, False, True]
    assert dmap.replaced == tuple(rows.replaced)


def test_mpich_and_generic_csv_rows(tmp_path):
    # MPICH ring allreduce needs a commutative op: never replaced for quadsel's calls; MPICH
    # recursive_doubling allgather needs a power of two: at 3 ranks MPICH runs its own selection
    data = tmp_path / "gen.csv"
    data.write_text("collective,algorithm,segsize,comm_size,msg_size,time_us\n"
                    "allgather,recursive_doubling,0,3,1024,9.0\nallgather,ring,0,3,1024,12.0\n"
                    "allgather,recursive_doubling,0,4,1024,9.0\nallgather,ring,0,4,1024,12.0\n")
    for columns in (False, True):     # a plain CSV is read as columns when asked: the same rows are dropped
        rows = read_measurements([str(data)], library="mpich", columns=columns)
        assert type(rows).__name__ == ("ColumnTable" if columns else "Table")
        assert sorted((m.algorithm, m.comm_size) for m in rows) == [("recursive_doubling", 4), ("ring", 3),
                                                                     ("ring", 4)]
        assert rows.replaced == [("allgather", "recursive_doubling", 0, 3, 1024, "default")]


def test_an_unknown_library_drops_nothing(tmp_path):
    ring = _osu(tmp_path / "osu_allreduce_alg4_np3.txt", "Allreduce", [4, 8, 64])
    rows = read_measurements([str(ring)], library="somempi")
    assert len(rows) == 3 and rows.replaced == []


def test_quadsel_measure_files_keep_their_own_rows(tmp_path):
    # a measure file's metadata says it was measured by quadsel: its `# replaced` lines already tell, and its
    # rows (timed with its own datatype) are never second-guessed with another benchmark's datatype
    data = tmp_path / "m.csv"
    data.write_text("collective,algorithm,segsize,comm_size,msg_size,time_us\nallreduce,4,0,3,8,9.0\n"
                    "allreduce,3,0,3,8,12.0\n")
    (tmp_path / "m.meta.json").write_text(json.dumps({"library": "openmpi", "datatype": "int8"}))
    rows = read_measurements([str(data)])
    assert len(rows) == 2 and rows.replaced == []


def test_build_and_report_say_where(tmp_path):
    ring = _osu(tmp_path / "osu_allreduce_alg4_np3.txt", "Allreduce", [4, 8, 64, 1024])
    rd = _osu(tmp_path / "osu_allreduce_alg3_np3.txt", "Allreduce", [4, 8, 64, 1024], time=50.0)
    runner = CliRunner()
    done = runner.invoke(main, ["build", str(ring), str(rd), "--library", "openmpi", "-o", str(tmp_path / "t.qt.json")])
    assert done.exit_code == 0, done.output
    assert "2 point(s) where the library replaces the forced algorithm" in done.output
    assert "allreduce 4 at comm 3 msg 4 runs 3" in done.output
    done = runner.invoke(main, ["report", str(ring), str(rd), "--library", "openmpi", "--format", "json"])
    assert done.exit_code == 0, done.output
    assert "allreduce 4 at comm 3 msg 8 runs 3" in done.output


def test_columns_drop_the_rows_each_row_asks_the_table_about(tmp_path):
    """replaced_rows (one look-up per distinct point, reductions under 4- and 1-byte elements) drops exactly the
    rows fallbacks.replacement names, row by row, and lists their points once, ordered."""
    import numpy as np
    from quadsel.ingest.replaced import TYPE_SIZES, replaced_rows
    from quadsel.libraries import fallbacks
    from quadsel.libraries.base import is_reduction
    rng = np.random.default_rng(5)
    lines = ["collective,algorithm,segsize,comm_size,msg_size,time_us"]
    for collective, algorithms in (("bcast", (4, 6, 8, 9)), ("allreduce", (3, 4, 5, 6)), ("reduce", (5, 7))):
        for _ in range(400):
            lines.append(f"{collective},{rng.choice(algorithms)},{rng.choice([0, 1, 512, 1024])},"
                         f"{rng.integers(1, 40)},{rng.choice([0, 1, 3, 4, 7, 64, 1000, 4096, 1 << 20])},1.5")
    from quadsel.ingest import common, csvfile
    cols = csvfile.read_columns(common.Context("sweep.csv", None, text="\n".join(lines) + "\n"))   # repeats too
    mask, points = replaced_rows(cols, "openmpi")
    expected = []
    for m in cols.rows():
        runs = None
        for size in TYPE_SIZES[is_reduction(m.collective)]:
            call = fallbacks.Call(m.comm_size, m.msg_size // size, size, segsize=m.segsize)
            runs = runs or fallbacks.replacement("openmpi", m.collective, m.algorithm, call)
        expected.append(runs)
    assert mask.tolist() == [runs is not None for runs in expected]
    listed = {(m.collective, m.algorithm, m.segsize, m.comm_size, m.msg_size, runs)
              for m, runs in zip(cols.rows(), expected) if runs is not None}
    assert points == sorted(listed, key=lambda p: (p[0], p[3], p[4], p[1], p[2])) and 100 < len(points) < 1200
