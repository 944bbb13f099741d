"""Identity of collectives, libraries and methods (quadsel/ingest/identity.py, docs/formats-input.md "Identity")."""

import json
import random

import pytest

from quadsel.errors import InputError, QuadselError
from quadsel.ingest import read_measurements
from quadsel.ingest.table import META_COMMENT

HEADER = "collective,algorithm,segsize,comm_size,msg_size,time_us\n"
GRID = [(c, m) for c in (2, 4, 8) for m in (1, 64, 1024, 65536)]


def write(path, rows, meta=None, header=HEADER):
    """rows: (algorithm, segsize, comm, msg, time) of bcast; meta: the .meta.json beside it."""
    path.write_text(header + "".join(f"bcast,{a},{s},{c},{m},{t}\n" for a, s, c, m, t in rows))
    if meta is not None:
        path.with_name(path.stem + ".meta.json").write_text(json.dumps(meta))
    return path


def grid(algorithm, scale, segsize=0, noise=0.0, seed=0):
    rnd = random.Random(seed)
    return [(algorithm, segsize, c, m, round(scale * c * (1 + m / 1024) * (1 + rnd.uniform(-noise, noise)), 4))
            for c, m in GRID]


# -- libraries ---------------------------------------------------------------------------------------------
def test_two_libraries_from_their_metadata_are_never_merged(tmp_path):
    a = write(tmp_path / "ompi.csv", grid("6", 1.0), {"library": "openmpi"})
    b = write(tmp_path / "mpich.csv", grid("binomial", 1.3), {"library": "mpich"})
    with pytest.raises(QuadselError, match=r"holds MPICH measurements \(mpich.meta.json\) and .*ompi.csv Open MPI "
                                           r"ones \(ompi.meta.json\): a decision map is one library's"):
        read_measurements([a, b])


def test_two_libraries_from_their_algorithm_names_are_never_merged(tmp_path):
    a = write(tmp_path / "a.csv", grid("6", 1.0))                       # an id: Open MPI
    b = write(tmp_path / "b.csv", grid("smp", 1.3) + grid("nb", 2.0))  # names only MPICH has
    with pytest.raises(QuadselError, match="MPICH measurements .* Open MPI ones"):
        read_measurements([a, b])


def test_one_file_with_names_of_both_libraries_is_refused(tmp_path):
    path = write(tmp_path / "mixed.csv", grid("pipeline", 1.0) + grid("smp", 2.0))
    with pytest.raises(InputError, match="algorithm names are of MPICH .* and Open MPI"):
        read_measurements(path)


def test_library_from_a_streamed_csvs_comment_line(tmp_path):
    path = tmp_path / "streamed.csv"
    path.write_text(HEADER + f'{META_COMMENT} {{"library": "mpich", "collective": "bcast"}}\n'
                    "bcast,6,0,2,1,1.5\n")
    with pytest.raises(InputError, match=r"streamed.csv:3: algorithm id 6 is not one of MPICH's bcast algorithms"):
        read_measurements(path)


def test_damaged_metadata_is_noted_and_the_names_decide(tmp_path):
    path = write(tmp_path / "x.csv", grid("6", 1.0))
    (tmp_path / "x.meta.json").write_text("{not json")
    rows = read_measurements(path)
    assert rows.library == "openmpi" and any("ignored" in n and "x.meta.json" in n for n in rows.notes)


# -- methods -----------------------------------------------------------------------------------------------
def test_a_name_and_an_id_of_one_open_mpi_algorithm_are_one_method(tmp_path):
    a = write(tmp_path / "ids.csv", grid("6", 1.0) + grid("1", 3.0))
    b = write(tmp_path / "names.csv", grid("Binomial", 1.0) + grid("basic-linear", 3.0) + grid("Pipeline", 2.0))
    rows = read_measurements([a, b])
    assert {m.algorithm for m in rows} == {"1", "3", "6"}
    assert any("'Binomial' -> 6" in n and "'basic-linear' -> 1" in n for n in rows.notes)


def test_mpich_container_names_and_cvar_names_are_one_method(tmp_path):
    path = write(tmp_path / "m.csv", grid("MPIR_Bcast_intra_binomial", 1.0) + grid("binomial", 1.0, seed=1)
                 + grid("scatter-ring-allgather", 2.0), {"library": "mpich"})
    assert {m.algorithm for m in read_measurements(path)} == {"binomial", "scatter_ring_allgather"}


def test_an_id_the_library_does_not_have_is_an_error_at_its_line(tmp_path):
    path = write(tmp_path / "ids.csv", grid("6", 1.0) + [("12", 0, 2, 1, 3.0)])
    with pytest.raises(InputError, match=r"ids.csv:14: algorithm id 12 is not one of Open MPI's bcast algorithms"):
        read_measurements(path)


def test_names_that_cannot_be_resolved_are_kept_and_said_so(tmp_path):
    unknown = write(tmp_path / "u.csv", grid("binomial", 1.0) + grid("ring", 2.0))
    rows = read_measurements(unknown)
    assert rows.library is None and {m.algorithm for m in rows} == {"binomial", "ring"}
    assert any("library of these measurements is unknown" in n for n in rows.notes)
    known = write(tmp_path / "k.csv", grid("6", 1.0) + grid("my_tweak", 2.0))
    rows = read_measurements(known)
    assert {m.algorithm for m in rows} == {"6", "my_tweak"}
    assert any("'my_tweak'" in n and "kept as methods of their own" in n for n in rows.notes)


def test_the_default_under_several_segment_sizes_is_pooled_by_its_median(tmp_path):
    rows = [("default", seg, 2, 1, t) for seg, t in ((0, 10.0), (1024, 11.0), (8192, 30.0), (65536, 12.0))]
    path = write(tmp_path / "d.csv", rows + [("6", 0, 2, 1, 9.0)])
    table = read_measurements(path)
    default = [m for m in table if m.is_default]
    assert len(default) == 1 and default[0].segsize == 0 and default[0].time == 11.5
    assert any("pooled as one baseline" in n for n in table.notes)


# -- relabelled copies -------------------------------------------------------------------------------------
def test_a_relabelled_rerun_is_warned_about(tmp_path):
    a = write(tmp_path / "bcast_alg6.csv", grid("6", 1.0, noise=0.01, seed=1))
    b = write(tmp_path / "bcast_alg1.csv", grid("1", 1.0, noise=0.01, seed=2))   # a re-run of 6, labelled 1
    c = write(tmp_path / "bcast_alg3.csv", grid("3", 1.7, noise=0.01, seed=3))
    warnings = [n for n in read_measurements([a, b, c]).notes if n.startswith("warning")]
    assert len(warnings) == 1 and "methods 1 and 6" in warnings[0] and "bcast_alg1.csv" in warnings[0]


def test_segment_sizes_of_one_algorithm_that_coincide_are_not_warned_about(tmp_path):
    path = write(tmp_path / "s.csv", grid("6", 1.0) + grid("6", 1.0, segsize=1 << 20, seed=4))
    assert not [n for n in read_measurements(path).notes if n.startswith("warning")]


# -- collectives -------------------------------------------------------------------------------------------
def test_collective_option_selects_files_and_never_relabels(tmp_path):
    bcast = tmp_path / "bcast_alg6.csv"
    bcast.write_text("Processes,Size,Latency(us)\n2,8,1.0\n4,8,2.0\n")
    reduce = tmp_path / "reduce_alg5.csv"
    reduce.write_text("Processes,Size,Latency(us)\n2,8,1.5\n4,8,2.5\n")
    rows = read_measurements([bcast, reduce], collective="reduce")
    assert {(m.collective, m.algorithm) for m in rows} == {("reduce", "5")}
    assert any("left out 1 file" in n and "bcast_alg6.csv (bcast)" in n for n in rows.notes)
    with pytest.raises(InputError, match=r"bcast_alg6.csv: its name says bcast, not reduce"):
        read_measurements(bcast, collective="reduce")
    with pytest.raises(QuadselError, match=r"no allreduce measurements in any input file: bcast_alg6.csv \(bcast\), "
                                           r"reduce_alg5.csv \(reduce\)"):
        read_measurements([bcast, reduce], collective="allreduce")


def test_labels_the_metadata_lists_stand_even_beyond_quadsels_tables(tmp_path):
    """quadsel measure lists the library's own labels (from MPI_T): Open MPI main's reduce 8 (knomial) stays."""
    path = tmp_path / "main.csv"
    path.write_text("collective,algorithm,segsize,comm_size,msg_size,time_us\nreduce,8,0,2,8,1.5\nreduce,5,0,2,8,2.0\n")
    (tmp_path / "main.meta.json").write_text(json.dumps({"library": "openmpi",
                                                         "grid": {"algorithms": {"5": "binomial", "8": "knomial"}}}))
    assert {m.algorithm for m in read_measurements(path)} == {"5", "8"}
    (tmp_path / "main.meta.json").write_text(json.dumps({"library": "openmpi"}))
    with pytest.raises(InputError, match="main.csv:2: algorithm id 8 is not one of Open MPI's reduce algorithms"):
        read_measurements(path)


@pytest.mark.parametrize("at", [0, 5, (1 << 20) - 7, (1 << 20) - 1, 1 << 20, (1 << 20) + 3, None])
def test_a_metadata_line_is_found_wherever_it_stands(tmp_path, at):
    """measured_by_quadsel reads the file a block at a time: a `# quadsel-meta:` line at the start, across a block
    boundary or nowhere (None); the marker inside a line is not one."""
    from quadsel.ingest.metadata import measured_by_quadsel
    body = bytearray(b"x,y\n" * (1 << 19))
    body[100:100] = b"z" + META_COMMENT.encode()           # inside a line: never counts
    if at is not None:
        start = body.rfind(b"\n", 0, at) + 1 if at else 0
        body[start:start] = META_COMMENT.encode() + b"{}\n"
    path = tmp_path / "sweep.csv"
    path.write_bytes(bytes(body))
    assert measured_by_quadsel(str(path)) is (at is not None)
