"""Every reader converts to the decision map's message size: bytes per rank (libraries/sizes.py).

Benchmarks print per-rank sizes (per peer for alltoall) except reduce_scatter, which OSU, IMB-MPI1, SKaMPI and
ompi-collectives-tuning (OSU underneath) print as the whole vector: divided by the communicator size.
"""

import pytest

from quadsel.errors import InputError
from quadsel.ingest import read_measurements

OSU = """# OSU MPI {title} Latency Test v7.3
# Size       Avg Latency(us)
4                       1.50
4096                   11.00
"""


@pytest.mark.parametrize("coll, title, per_rank", [
    ("reduce_scatter", "Reduce_scatter", [1, 1024]),        # sum(recvcounts) x 4 printed: / 4 ranks
    ("allgather", "Allgather", [4, 4096]), ("alltoall", "All-to-All Personalized Exchange", [4, 4096]),
    ("gather", "Gather", [4, 4096]), ("scatter", "Scatter", [4, 4096]), ("allgatherv", "Allgatherv", [4, 4096]),
])
def test_osu_sizes_per_collective(tmp_path, coll, title, per_rank):
    path = tmp_path / f"osu_{coll}_np4.txt"
    path.write_text(OSU.format(title=title))
    rows = read_measurements(path)
    assert {m.collective for m in rows} == {coll}
    assert [m.msg_size for m in rows] == per_rank


def test_imb_reduce_scatter_is_a_total_and_reduce_scatter_block_a_block(tmp_path):
    text = ""
    for bench in ("Reduce_scatter", "Reduce_scatter_block", "Allgather"):
        text += (f"#----\n# Benchmarking {bench}\n# #processes = 8\n#----\n"
                 "       #bytes #repetitions  t_min[usec]  t_max[usec]  t_avg[usec]\n"
                 "            0         1000         0.05         0.06         0.05\n"
                 "         8192         1000        10.00        12.00        11.00\n")
    path = tmp_path / "imb.txt"
    path.write_text(text)
    sizes = {}
    for m in read_measurements(path):
        sizes.setdefault(m.collective, []).append(m.msg_size)
    assert sizes == {"reduce_scatter": [0, 1024], "reduce_scatter_block": [0, 8192], "allgather": [0, 8192]}


def test_skampi_reduce_scatter_reports_the_send_vector(tmp_path):
    path = tmp_path / "run.sko"
    path.write_text('# begin result "MPI_Reduce_scatter-procs-length"\n'
                    "procs= 4 count= 1024  4096  30.0  0.5  40\n"
                    '# end result "MPI_Reduce_scatter-procs-length"\n'
                    '# begin result "MPI_Allgather-procs-length"\n'
                    "procs= 4 count= 1024  4096  30.0  0.5  40\n"
                    '# end result "MPI_Allgather-procs-length"\n')
    got = {(m.collective, m.msg_size) for m in read_measurements(path)}
    assert got == {("reduce_scatter", 1024), ("allgather", 4096)}


def test_detail_out_of_reduce_scatter_is_osu_s_total(tmp_path):
    path = tmp_path / "reduce_scatter_detail.out"
    path.write_text("#Nnodes Message_size 1 2\n4 4096 10.0(0.1) 12.0(0.2)\n")
    assert {m.msg_size for m in read_measurements(path)} == {1024}


def test_generic_csv_total_column_is_divided_by_the_comm_size(tmp_path):
    path = tmp_path / "allgather.csv"
    path.write_text("collective,algorithm,comm_size,total_bytes,time_us\nallgather,1,4,4096,10\nallgather,1,8,4096,11\n")
    assert [(m.comm_size, m.msg_size) for m in read_measurements(path)] == [(4, 1024), (8, 512)]
    both = tmp_path / "both.csv"
    both.write_text("collective,algorithm,comm_size,msg_size,total_size,time_us\nallgather,1,4,1024,4096,10\n")
    with pytest.raises(InputError, match=r"both.csv:1: both a per-rank message size column and a total"):
        read_measurements(both)
