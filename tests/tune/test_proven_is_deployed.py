"""What verify proves is what tune deploys: the follow check's file launch and tune's tuned.env take the environment that
makes a library load its file from one method, the library class's `rules_environment` (no MPI)."""

import os
import subprocess
from types import SimpleNamespace

import pytest

from quadsel.libraries import CLASSES, get
from quadsel.tune import deploy, hosts
from quadsel.verify.follow import file_environment

# a file of each deployed format, enough for the follow check to tell it apart (not parsed further here)
SAMPLE = {"ompi-rules": "1 # one collective\n7\n1\n2 1\n0 6 0 0\n", "mpich-json": '{"collective=bcast": {}}\n',
          "impi-json": '{"coll=Bcast": {}}\n'}


@pytest.mark.parametrize("library", [cls.name for cls in CLASSES])
def test_the_follow_check_loads_the_file_with_the_variables_tuned_env_exports(library, tmp_path):
    dep = deploy.deployment(library)
    path = tmp_path / dep.file
    path.write_text(SAMPLE[dep.target])
    deployed = deploy.environment(dep, str(tmp_path), [SimpleNamespace(collective="bcast")])
    assert deployed and file_environment(library, str(path), collectives=["bcast"]) == deployed
    assert deployed == get(library).rules_environment(str(path), collectives=["bcast"])


def test_mpich_turns_the_device_collectives_off_only_for_the_collectives_the_file_is_loaded_for(tmp_path):
    """MPICH's file applies where its device (ch4) collectives do not take the call: tune's tuned.env turns them off
    for the deployed collectives only (percoll), so the others keep MPICH's own choice; the follow check loads the
    file for the collective it checks, with the same value of every variable that collective's call reads."""
    dep = deploy.deployment("mpich")
    path = tmp_path / dep.file
    path.write_text(SAMPLE[dep.target])
    deployed = deploy.environment(dep, str(tmp_path), [SimpleNamespace(collective=c) for c in ("bcast", "allreduce")])
    assert deployed == {"MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE": str(path), "MPIR_CVAR_DEVICE_COLLECTIVES": "percoll",
                        "MPIR_CVAR_ALLREDUCE_DEVICE_COLLECTIVE": "0", "MPIR_CVAR_BCAST_DEVICE_COLLECTIVE": "0"}
    for coll in ("bcast", "allreduce"):
        checked = file_environment("mpich", str(path), collectives=[coll])
        assert checked.items() <= deployed.items()
        assert set(deployed) - set(checked) == {f"MPIR_CVAR_{c.upper()}_DEVICE_COLLECTIVE"
                                                for c in ("bcast", "allreduce") if c != coll}
    # not told which collectives: every one's device collectives off, as before
    assert get("mpich").rules_environment(str(path))["MPIR_CVAR_DEVICE_COLLECTIVES"] == "none"


def test_across_hosts_open_mpis_tuned_env_exports_what_the_follow_check_loads(tmp_path):
    """tune --mpiexec-args under Open MPI: tuned.env (targets/ompi_env.py) picks the job's per-ppn pair of rules files,
    coll/tuned's and coll/han's; sourced for 2 ranks per node it sets exactly the variables the follow check's file
    launch gets for that ppn's pair (a collective coll/han takes: bcast)."""
    forests = [SimpleNamespace(collective="bcast",
                               layers=[SimpleNamespace(measured_ppn=[1]), SimpleNamespace(measured_ppn=[2, 4])])]
    script = tmp_path / "tuned.env"
    script.write_text(hosts.env_text(get("openmpi"), str(tmp_path), forests, ["h"]))
    names = list(get("openmpi").rules_environment("x", "y"))
    env = dict(os.environ, QUADSEL_PPN="2")
    shown = subprocess.run(["sh", "-c", f". '{script}' && env"], capture_output=True, text=True, check=True,
                           env=env).stdout.splitlines()
    exported = dict(line.split("=", 1) for line in shown if line.split("=", 1)[0] in names)
    for name in ("tuned-ppn2.rules", "han-ppn2.rules"):
        (tmp_path / name).write_text(SAMPLE["ompi-rules"])
    assert exported == file_environment("openmpi", str(tmp_path / "tuned-ppn2.rules"), str(tmp_path / "han-ppn2.rules"))
