import os
import shutil
import subprocess
from pathlib import Path

import pytest

from netns_helpers import cluster2, make_cluster  # noqa: F401 (the namespace cluster's fixtures)

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
ORFEO = SHARED / "datasets" / "orfeo-epyc-openmpi4"
STRICT_FLAGS = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic"]
GCC_FLAGS = STRICT_FLAGS + ["-O1"]
SANITIZE_FLAGS = ["-fsanitize=address,undefined", "-fno-sanitize-recover=all", "-g"]
TEMPLATES = REPO / "templates"

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


RUNNER = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "quadsel_blob.h"
%(declarations)s
typedef int (*decide_fn)(int, size_t, int *);
static decide_fn functions[] = { %(functions)s };

/* "f I COMM MSG": compiled function I; "b I COMM MSG": blob I (argv). --load FILES: each load status. */
int main(int argc, char **argv)
{
    quadsel_tree **trees = calloc((size_t)argc, sizeof *trees);
    char kind;
    long form, comm;
    unsigned long long msg;
    int i, seg, alg, status;
    if (trees == NULL) {
        return 3;
    }
    if (argc > 1 && strcmp(argv[1], "--load") == 0) {
        for (i = 2; i < argc; i++) {
            status = quadsel_tree_load_file(&trees[0], argv[i]);
            printf("%%d %%d\n", status, trees[0] == NULL);
            quadsel_tree_free(trees[0]);
        }
        free(trees);
        return 0;
    }
    for (i = 1; i < argc; i++) {
        status = quadsel_tree_load_file(&trees[i - 1], argv[i]);
        if (status != QUADSEL_BLOB_OK) {
            fprintf(stderr, "%%s: %%s\n", argv[i], quadsel_blob_strerror(status));
            return 2;
        }
    }
    while (scanf(" %%c %%ld %%ld %%llu", &kind, &form, &comm, &msg) == 4) {
        if (kind == 'f') {
            alg = functions[form]((int)comm, (size_t)msg, &seg);
            status = functions[form]((int)comm, (size_t)msg, NULL) == alg;
        } else {
            alg = quadsel_tree_decide(trees[form], (int)comm, (size_t)msg, &seg);
            status = quadsel_tree_decide(trees[form], (int)comm, (size_t)msg, NULL) == alg;
        }
        printf("%%d %%d%%s\n", alg, seg, status ? "" : " segsize=NULL changed the answer");
    }
    for (i = 1; i < argc; i++) {
        quadsel_tree_free(trees[i - 1]);
    }
    free(trees);
    return 0;
}
"""


class CProgram:
    """Generated C functions and blobs compiled into one program with the blob loader; asks it queries."""

    def __init__(self, folder, blobs):
        self.folder, self.blobs = folder, blobs

    def run(self, args, text=""):
        env = dict(os.environ, ASAN_OPTIONS="detect_leaks=1:abort_on_error=0", UBSAN_OPTIONS="print_stacktrace=1")
        result = subprocess.run([str(self.folder / "program"), *args], input=text, capture_output=True, text=True,
                                env=env)
        assert result.returncode == 0 and not result.stderr, f"exit {result.returncode}: {result.stderr[-3000:]}"
        return result.stdout

    def ask(self, queries):
        """queries: (kind "f" or "b", index, comm, msg) -> [(alg, seg)]."""
        text = "".join(f"{k} {i} {c} {m}\n" for k, i, c, m in queries)
        lines = self.run([str(p) for p in self.blobs], text).splitlines()
        assert len(lines) == len(queries)
        return [tuple(int(v) for v in line.split()) for line in lines]

    def load_status(self, datas):
        """The loader's status and whether the tree pointer stayed NULL, for each blob."""
        paths = []
        for n, data in enumerate(datas):
            paths.append(self.folder / f"probe{n}.qsb")
            paths[-1].write_bytes(data)
        out = self.run(["--load", *map(str, paths)])
        return [tuple(int(v) for v in line.split()) for line in out.splitlines()]


@pytest.fixture(scope="session", params=["gcc", "clang"])
def c_compiler(request):
    """Each C compiler the generated C must compile with; a missing one is skipped (CI installs both)."""
    path = shutil.which(request.param)
    if not path:
        pytest.skip(f"{request.param} is not installed")
    return path


@pytest.fixture(scope="session")
def c_program(c_compiler, tmp_path_factory):
    """build(functions: {name: source}, blobs: [bytes], sanitize=False, opt="-O1") -> CProgram."""

    def build(functions, blobs=(), sanitize=False, opt="-O1"):
        folder = tmp_path_factory.mktemp("cprog")
        sources = []
        for n, source in enumerate(functions.values()):
            sources.append(folder / f"f{n}.c")
            sources[-1].write_text(source)
        declarations = "".join(f"int {name}(int comm_size, size_t msg_size, int *segsize);\n" for name in functions)
        (folder / "runner.c").write_text(RUNNER % {"declarations": declarations,
                                                   "functions": ", ".join(functions) or "NULL"})
        paths = []
        for n, data in enumerate(blobs):
            paths.append(folder / f"tree{n}.qsb")
            paths[-1].write_bytes(data)
        flags = STRICT_FLAGS + [opt] + (SANITIZE_FLAGS if sanitize else [])
        result = subprocess.run([c_compiler, *flags, "-I", str(TEMPLATES), "-o", str(folder / "program"), *map(str, sources),
                                 str(TEMPLATES / "quadsel_blob.c"), str(folder / "runner.c")],
                                capture_output=True, text=True)
        assert result.returncode == 0, f"{c_compiler} rejected the C:\n{result.stderr[:5000]}"
        return CProgram(folder, paths)
    return build


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


@pytest.fixture(scope="session", autouse=True)
def _sweep_folders_of_killed_measurements(tmp_path_factory):
    """A measurement killed with SIGKILL (the kill -9 tests) cannot remove its temporary folder
    (pipeline/measure.py: /tmp/quadsel-measure-*, its ranks' spec file): at the end of the session, the folders whose
    spec names an output under this session's tmp paths go. Nothing else is touched."""
    yield
    import glob
    import json
    import tempfile
    base = str(tmp_path_factory.getbasetemp())
    for folder in glob.glob(os.path.join(tempfile.gettempdir(), "quadsel-measure-*")):
        try:
            with open(os.path.join(folder, "spec.json")) as handle:
                output = str(json.load(handle).get("output") or "")
        except (OSError, ValueError, AttributeError):
            continue
        if output.startswith(base + os.sep):
            shutil.rmtree(folder, ignore_errors=True)
