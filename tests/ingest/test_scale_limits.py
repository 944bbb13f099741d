"""Issue 22's scale cases: what cannot be built in reasonable memory is refused before it is all read."""

import pytest

from quadsel.errors import InputError
from quadsel.ingest import common, csvfile, read_measurements
from quadsel.inputs import MAX_COLUMNS

HEADER = "collective,algorithm,segsize,comm_size,msg_size,time_us\n"


def sweep(path, comm_sizes, msg_sizes, methods=(1, 6)):
    with open(path, "w") as out:
        out.write(HEADER)
        for c in comm_sizes:
            for m in msg_sizes:
                for a in methods:
                    out.write(f"bcast,{a},0,{c},{m},{10 + a + (c * m) % 7}\n")
    return str(path)


def test_a_line_of_millions_of_commas_is_refused_at_its_line(tmp_path):
    path = tmp_path / "commas.csv"
    path.write_text("," * (4 << 20))
    with pytest.raises(InputError, match=rf"commas.csv:1: more than {MAX_COLUMNS} cells in one line"):
        read_measurements([str(path)])


def test_a_grid_too_large_is_refused_before_the_rest_is_read(tmp_path, monkeypatch):
    """With the limit at 100 points, the second file of a 20 x 10 grid is refused at an early line (every
    CHECK_EVERY rows are checked), and the third file is never opened."""
    monkeypatch.setattr(common, "MAX_GRID_POINTS", 100)
    monkeypatch.setattr(csvfile, "CHECK_EVERY", 16)
    first = sweep(tmp_path / "a.csv", range(2, 7), range(1, 11))           # 5 x 10 = 50 points: fine
    second = sweep(tmp_path / "b.csv", range(7, 22), range(1, 11))         # 15 more sizes: 200 points
    third = tmp_path / "c.csv"                                             # absent: never read
    with pytest.raises(InputError) as caught:
        read_measurements([first, second, str(third)])
    message = str(caught.value)
    assert "b.csv:" in message and "beyond 100 points" in message
    line = int(message.split("b.csv:")[1].split(":")[0])
    assert line < 300                                   # the file has 301 lines: refused before its end


def test_points_times_methods_are_bounded_too(tmp_path, monkeypatch):
    monkeypatch.setattr(common, "MAX_CUBE", 50)
    path = sweep(tmp_path / "a.csv", range(2, 7), range(1, 11), methods=(1, 2, 6))
    with pytest.raises(InputError, match="150 point-methods|point-methods"):
        read_measurements([path])


def test_the_limits_let_real_sweeps_through(tmp_path):
    """256 communicator sizes x 40 message sizes (a dense cluster sweep) stays within the limits."""
    extent = common.Extent()
    extent.comm, extent.msg = set(range(256)), set(range(40))
    extent.methods = {(str(a), s) for a in range(10) for s in range(4)}
    extent.update("x.csv", None, [])
