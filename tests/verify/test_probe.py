"""The follow check's probe without MPI: counting stubs that forward every argument to the real function, and
MPICH's tag classes (quadsel/verify/probe.py)."""

import os
import platform
import shutil
import subprocess
import sys

import pytest

from quadsel.verify import probe

needs_cc = pytest.mark.skipif(not (shutil.which("cc") or shutil.which("gcc")) or not shutil.which("nm")
                              or platform.machine() != "x86_64", reason="needs cc, nm and x86-64")

TARGET = r"""
int quadsel_t_intra_a(int x) { return x + 1; }
long quadsel_t_intra_b(long a, long b, long c, long d, long e, long f, long g, double h) {
    return a + 2 * b + 3 * c + 4 * d + 5 * e + 6 * f + 7 * g + (long)(8 * h);
}
int quadsel_t_other(int x) { return x; }
long entry(int x) { return quadsel_t_intra_a(x) + quadsel_t_intra_b(1, 2, 3, 4, 5, 6, x, 0.5) + quadsel_t_other(x); }
"""

CALLER = r"""
import ctypes, sys
lib = ctypes.CDLL(sys.argv[1])
shim = ctypes.CDLL(sys.argv[2])
n = ctypes.c_int.in_dll(shim, "quadsel_probe_n").value
names = (ctypes.c_char_p * n).in_dll(shim, "quadsel_probe_names")
shim.quadsel_probe_counters.restype = ctypes.POINTER(ctypes.c_uint64)
counts = shim.quadsel_probe_counters()
lib.entry.restype = ctypes.c_long
print(lib.entry(10), lib.entry(20), sorted((names[i].decode(), counts[i]) for i in range(n)))
"""


@needs_cc
def test_the_stubs_count_calls_and_forward_every_argument(tmp_path):
    target = tmp_path / "libt.so"
    (tmp_path / "t.c").write_text(TARGET)
    subprocess.run(["cc", "-shared", "-fPIC", "-O1", "-o", str(target), str(tmp_path / "t.c")], check=True)
    names = probe.exported_functions(str(target), r"quadsel_t_intra_\w+")
    assert names == ["quadsel_t_intra_a", "quadsel_t_intra_b"]
    shim, why = probe._compile(probe.functions_source(names), str(tmp_path), "shim")
    assert why is None
    env = dict(os.environ, LD_PRELOAD=shim, QUADSEL_PROBE_LIB=str(target))
    done = subprocess.run([sys.executable, "-c", CALLER, str(target), shim], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    # entry(x) = (x + 1) + (1 + 4 + 9 + 16 + 25 + 36 + 7x + 4) + x: six register arguments, one on the stack,
    # one in an SSE register all reach the real function
    assert done.stdout.split()[:2] == [str(11 + 95 + 70 + 10), str(21 + 95 + 140 + 20)]
    assert "[('quadsel_t_intra_a', 2), ('quadsel_t_intra_b', 2)]" in done.stdout
    # without the preload the same program runs unprobed: the stubs are what counted
    plain = subprocess.run([sys.executable, "-c", "import ctypes,sys; l=ctypes.CDLL(sys.argv[1]); "
                            "l.entry.restype=ctypes.c_long; print(l.entry(10))", str(target)],
                           capture_output=True, text=True)
    assert plain.stdout.split() == [str(11 + 95 + 70 + 10)]


def test_mpich_tag_classes():
    # ch4/ucx tags seen on MPICH 5.0.2: context id, source rank, then the MPI tag in the low bits
    assert probe.tag_class(0x1F1000100000003) == "3"        # MPIR_GATHER_TAG of a blocking gather
    assert probe.tag_class(0x1E1000000000014) == "20"       # a blocking scan
    assert probe.tag_class(0x1F100010000011F) == "nbc"      # the first schedule tag (MPIR_FIRST_NBC_TAG)
    assert probe.tag_class(0x1D1000000000121) == "nbc"      # later schedules count up from there


def test_no_probe_for_a_library_without_one(tmp_path):
    env, why = probe.environment("intelmpi", str(tmp_path))
    assert env is None and why
