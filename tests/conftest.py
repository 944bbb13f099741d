import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
ORFEO = SHARED / "datasets" / "orfeo-epyc-openmpi4"
GCC_FLAGS = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-O1"]

DRIVER = r"""
#include <stdio.h>
#include <stddef.h>
int %(name)s(int comm_size, size_t msg_size, int *segsize);
int main(void)
{
    long comm; unsigned long long msg; int seg;
    while (scanf("%%ld %%llu", &comm, &msg) == 2) {
        int alg = %(name)s((int)comm, (size_t)msg, &seg);
        printf("%%d %%d\n", alg, seg);
    }
    return 0;
}
"""


@pytest.fixture(scope="session")
def gcc():
    path = shutil.which("gcc")
    if not path:
        pytest.skip("gcc is not installed")
    return path


@pytest.fixture
def compile_decision(gcc, tmp_path):
    """Compile generated C (strict flags) with a stdin-driven driver; return a function answering queries."""
    counter = [0]

    def build(source, name):
        counter[0] += 1
        folder = tmp_path / f"c{counter[0]}"
        folder.mkdir()
        (folder / "decision.c").write_text(source)
        (folder / "driver.c").write_text(DRIVER % {"name": name})
        result = subprocess.run([gcc, *GCC_FLAGS, "-o", str(folder / "decide"), str(folder / "decision.c"),
                                 str(folder / "driver.c")], capture_output=True, text=True)
        assert result.returncode == 0, f"gcc rejected the generated C:\n{result.stderr}\n{source}"

        def ask(queries):
            text = "".join(f"{c} {m}\n" for c, m in queries)
            out = subprocess.run([str(folder / "decide")], input=text, check=True, capture_output=True, text=True).stdout
            return [tuple(int(v) for v in line.split()) for line in out.splitlines()]
        return ask
    return build


@pytest.fixture
def orfeo():
    if not ORFEO.is_dir():
        pytest.skip("../shared/datasets is not present (fresh clone)")
    return ORFEO


@pytest.fixture
def mpi_env(monkeypatch):
    """What a launch of quadsel's MPI workers needs here: root is allowed, and the workers import this tree."""
    import os
    monkeypatch.setenv("OMPI_ALLOW_RUN_AS_ROOT", "1")
    monkeypatch.setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    monkeypatch.setenv("PYTHONPATH", str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
