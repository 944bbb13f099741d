"""The docs name every command and option the CLI has."""

from helpers import REPO
from quadsel.cli import main


def test_cli_reference_names_every_command_and_option():
    text = (REPO / "docs" / "cli.md").read_text()
    for name, command in main.commands.items():
        assert f"## quadsel {name}" in text, name
        for param in (p for p in command.params if not getattr(p, "hidden", False)):
            for opt in getattr(param, "opts", []):
                if opt.startswith("-"):
                    assert opt in text, f"{name} {opt} missing from docs/cli.md (python scripts/cli_reference.py > docs/cli.md)"


# -- the docs' commands still give what the docs quote (issue 22) -------------------------------------------------
import os
import re
import shlex
import shutil
import subprocess
import sys

import pytest

RUNNABLE = ("quadsel", "head", "gcc")        # measure, verify and mpiexec need MPI: not run here
NEEDS_MPI = ("quadsel measure", "quadsel verify", "mpiexec")


def _console_blocks(text):
    """[(command, [expected output lines])] of the ```console blocks of a Markdown text."""
    steps = []
    for block in re.findall(r"```console\n(.*?)```", text, re.S):
        for line in block.splitlines():
            if line.startswith("$ "):
                steps.append((line[2:], []))
            elif steps:
                steps[-1][1].append(line)
    return steps


def _run(command, folder):
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    command = re.sub(r"(^|&& )quadsel ", lambda m: f"{m.group(1)}{shlex.quote(sys.executable)} -m quadsel ", command)
    return subprocess.run(command, shell=True, cwd=folder, env=env, capture_output=True, text=True, timeout=600)


def test_every_test_path_the_docs_name_exists():
    for doc in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md")), REPO / "examples" / "README.md"]:
        for path in re.findall(r"\btests/[\w/]+\.py\b", doc.read_text()):
            assert (REPO / path).exists(), f"{doc.name} names {path}, which does not exist"


def test_worked_example_commands_print_what_the_doc_quotes(tmp_path):
    """Every command of docs/worked-example.md that needs no MPI is run on the current code; every line the doc
    quotes under it must be in its output (`...` stands for lines left out). A `cat FILE` of a file the doc
    shows but does not make creates it from the doc."""
    os.symlink(REPO / "examples", tmp_path / "examples")
    steps = _console_blocks((REPO / "docs" / "worked-example.md").read_text())
    assert steps, "no console blocks in docs/worked-example.md"
    for command, expected in steps:
        if any(word in command for word in NEEDS_MPI):
            continue
        if command.startswith("cat ") and not (tmp_path / command.split()[1]).exists():
            (tmp_path / command.split()[1]).write_text("\n".join(expected) + "\n")
            continue
        if not command.startswith(RUNNABLE) or (command.startswith("gcc") and not shutil.which("gcc")):
            continue
        done = _run(command, tmp_path)
        assert done.returncode == 0, f"{command}: {done.stderr[-500:]}"
        printed = {line.rstrip() for line in (done.stdout + done.stderr).splitlines()}
        for line in expected:
            if line.strip() and line.strip() != "...":
                assert line.rstrip() in printed, f"docs/worked-example.md: `{command}` no longer prints\n{line}"


def test_readme_main_job_runs(tmp_path):
    """The README's main job (install, then build, codegen and report on an example) runs on the current code."""
    text = (REPO / "README.md").read_text()
    job = next(line for block in re.findall(r"```sh\n(.*?)```", text, re.S) for line in block.splitlines()
               if "pip install" in line and "quadsel build examples/" in line)
    os.symlink(REPO / "examples", tmp_path / "examples")
    for part in job.split("&&"):
        part = part.strip()
        if part.startswith("mkdir "):                   # the folder the outputs go to (git ignores it)
            subprocess.run(shlex.split(part), cwd=tmp_path, check=True)
        if part.startswith("quadsel"):
            done = _run(part, tmp_path)
            assert done.returncode == 0, f"{part}: {done.stderr[-500:]}"


# -- issue 31: the README and the option tables say what the code does --------------------------------------------
def _readme():
    return (REPO / "README.md").read_text()


def test_readme_main_job_leaves_nothing_git_would_track():
    # the first command of the README (the main job) wrote bcast.qt.json and bcast_decision.c into the root
    line = next(l for l in _readme().splitlines() if "quadsel build examples/ompi5-bcast.csv" in l)
    outputs = [words[i + 1] for part in line.split("&&") for words in [shlex.split(part)]
               for i, w in enumerate(words[:-1]) if w in ("-o", "--output")]
    assert len(outputs) == 2, line
    git = shutil.which("git")
    if not git or not (REPO / ".git").exists():
        pytest.skip("not a git checkout")
    for path in outputs:
        inside = (REPO / path).resolve()
        if REPO.resolve() not in inside.parents:
            continue                     # outside the repository: nothing to track
        done = subprocess.run([git, "check-ignore", "-q", "--no-index", path], cwd=REPO)
        assert done.returncode == 0, f"{path}: the README's main job leaves it for git to track"


def test_readme_says_collectives_covered_once():
    assert _readme().count("Collectives covered") == 1


def test_measure_option_table_names_every_collective():
    from quadsel.libraries import COLLECTIVES
    row = next(l for l in (REPO / "docs" / "measure.md").read_text().splitlines() if l.startswith("| `-c, --collective`"))
    missing = [c for c in COLLECTIVES if not re.search(rf"\b{c}\b", row)]
    assert not missing, f"docs/measure.md's -c row misses {missing}"


def test_readme_says_what_ci_installs():
    ci = (REPO / ".ci" / "run").read_text()
    text = _readme()
    for tool, said in (("clang", "clang"), (".venv-mpich", "MPICH"), (".venv-impi", "Intel MPI")):
        assert tool in ci
    assert re.search(r"`\.ci/run`[^.]*installs gcc and\s+clang[^.]*builds the MPICH and the Intel MPI\s+venvs", text)


def test_readme_states_the_skips_of_a_fresh_clone():
    # the figures the README quotes, recounted as it says (collection only; the same with and without ../shared,
    # the venvs' variables, root or Slurm: scripts/count_skips.py counts what each test needs, not what is here)
    said = re.search(r"skips without it: (\d+) need the MPICH venv .*?, (\d+) the Intel MPI venv .*?,\s+(\d+) "
                     r"`\.\./shared/datasets`, (\d+) the namespace cluster .*? and (\d+) a Slurm cluster", _readme(),
                     re.S)
    assert said, "the README does not state what a fresh clone skips"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), str(REPO / "scripts"), os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "count_skips", "-p",
                           "no:cacheprovider", "tests"], cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    counted = [re.search(rf"(\d+)  need {re.escape(need)}\n", done.stdout) for need in
               ("the MPICH venv", "the Intel MPI venv", "../shared/datasets", "the namespace cluster", "a Slurm cluster")]
    assert all(counted), done.stdout[-2000:] + done.stderr[-2000:]
    assert [int(g) for g in said.groups()] == [int(c.group(1)) for c in counted]


def test_readme_says_how_to_source_tuned_env_as_root():
    """Issue 41: `. deploy/tuned.env && mpiexec -n 2 ./your_app` is refused by Open MPI as root, and only
    docs/tune.md said so."""
    text = _readme()
    at = text.index(". deploy/tuned.env && mpiexec")
    assert "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1" in text[at:at + 600]
