"""The tune folder's journal and tuned.env (no MPI)."""

import json
import subprocess
from types import SimpleNamespace

import pytest

from quadsel.errors import QuadselError
from quadsel.tune import deploy
from quadsel.tune.folder import Folder, Journal

SETTINGS = {"library": "openmpi", "library_version": "x", "np": 2, "comm_sizes": None, "msg_sizes": "8",
            "strategy": "full"}
MEASURED = dict(complete=True, seconds=1.0, stopped=False, strategy="full")      # what a measure step records
BUILT = dict(leaves=3, penalty_mean=1.0, penalty_max=2.0, comm_sizes=2, msg_sizes=2, methods=2, constraint=None)


def test_a_finished_step_is_skipped_until_its_inputs_change(tmp_path):
    folder = Folder(str(tmp_path / "d"))
    folder.make()
    data = tmp_path / "in.csv"
    data.write_text("a\n")
    journal = Journal(folder, SETTINGS)
    assert not journal.resumed and journal.done("build:bcast", [str(data)]) is None
    journal.finish("build:bcast", [str(data)], **BUILT)
    again = Journal(folder, SETTINGS)
    assert again.resumed and again.done("build:bcast", [str(data)])["leaves"] == 3
    data.write_text("b\n")
    assert again.done("build:bcast", [str(data)]) is None


def test_another_tuning_in_the_same_folder_is_refused_in_one_line(tmp_path):
    folder = Folder(str(tmp_path / "d"))
    folder.make()
    Journal(folder, SETTINGS).finish("measure:bcast", **MEASURED)
    with pytest.raises(QuadselError, match=r"other settings \(np 2 there, 4 now\)"):
        Journal(folder, dict(SETTINGS, np=4))
    # no finished step, but a measurement begun (a run killed in its first collective): refused too
    other = Folder(str(tmp_path / "e"))
    other.make()
    Journal(other, SETTINGS)
    (tmp_path / "e" / "measurements" / "bcast.csv").write_text("collective,algorithm\n")
    with pytest.raises(QuadselError, match="other settings"):
        Journal(other, dict(SETTINGS, np=4))


def test_other_settings_over_a_run_that_measured_nothing_start_a_new_run(tmp_path):
    # the journal is written as a run starts: one that failed before measuring (say mpiexec was not found)
    # leaves it behind, and the corrected command must not be refused for it
    folder = Folder(str(tmp_path / "d"))
    folder.make()
    Journal(folder, SETTINGS)
    again = Journal(folder, dict(SETTINGS, np=4))
    assert not again.resumed
    assert json.loads((tmp_path / "d" / "tune.json").read_text())["settings"]["np"] == 4


GOOD_STEP = ('"measure:bcast": {"inputs": {"bcast.csv": "%s"}, "complete": true, "seconds": 1.5, "stopped": false, '
             '"strategy": "full"}' % ("0" * 64))


@pytest.mark.parametrize("text", [
    "{", "[]", '{"format": "quadsel-tune", "version": 1, "settings": {}, "steps": {"x": 1}}', '{"format": "other"}',
    # issue 32, the journal through the one schema-checked path (docs/schemas/tune-journal.schema.json):
    '{"format": "quadsel-tune", "version": 1, "version": 1, "settings": {}, "steps": {}}',          # a key twice
    '{"format": "quadsel-tune", "version": 1, "settings": {"np": NaN}, "steps": {}}',               # not JSON
    '{"format": "quadsel-tune", "version": 1, "settings": {}, "steps": {"measure:bcast": {"inputs": '
    '{"bcast.csv": "not a digest"}}}}',
    '{"format": "quadsel-tune", "version": 1, "settings": {}, "steps": {"\u001b[2Jx": {"inputs": {}}}}',
    '{"format": "quadsel-tune", "version": 2, "settings": {}, "steps": {%s}}' % GOOD_STEP,
    # issue 41: every value tune reads back is checked (a strategy of 5 was a TypeError in tune/report.py)
    '{"format": "quadsel-tune", "version": 1, "settings": %s, "steps": {%s}}'
    % (json.dumps(SETTINGS), GOOD_STEP.replace('"strategy": "full"', '"strategy": 5')),
    '{"format": "quadsel-tune", "version": 1, "settings": %s, "steps": {}}' % json.dumps(dict(SETTINGS, strategy=5)),
    '{"format": "quadsel-tune", "version": 1, "settings": %s, "steps": {}, "written": {"x": "not a digest"}}'
    % json.dumps(SETTINGS)])
def test_a_damaged_journal_is_one_line(tmp_path, text):
    folder = Folder(str(tmp_path / "d"))
    folder.make()
    (tmp_path / "d" / "tune.json").write_text(text)
    with pytest.raises(QuadselError, match="not a quadsel tune journal") as caught:
        Journal(folder, SETTINGS)
    assert "\n" not in str(caught.value) and "\x1b" not in str(caught.value)
    assert "tune.json" in str(caught.value)


def test_a_sound_journal_is_read(tmp_path):
    folder = Folder(str(tmp_path / "d"))
    folder.make()
    (tmp_path / "d" / "tune.json").write_text('{"format": "quadsel-tune", "version": 1, "settings": %s, "steps": {%s}}'
                                               % (json.dumps(SETTINGS), GOOD_STEP))
    assert Journal(folder, SETTINGS).resumed


def test_tuned_env_is_sourced_by_a_posix_shell(tmp_path):
    odd = str(tmp_path / "it's a folder $HOME")
    env = deploy.environment(deploy.DEPLOYMENTS["openmpi"], odd, [SimpleNamespace(collective="bcast")])
    path = tmp_path / "tuned.env"
    path.write_text(deploy.env_text(env, ["header; $(not run)"]))
    out = subprocess.run(["sh", "-c", f". '{path}' && printf %s \"$OMPI_MCA_coll_tuned_dynamic_rules_filename\""],
                         capture_output=True, text=True, check=True).stdout
    assert out.endswith("it's a folder $HOME/tuned.rules")
    nothing = deploy.env_text(deploy.environment(deploy.DEPLOYMENTS["mpich"], odd, []), ["h"])
    assert subprocess.run(["sh", "-c", f". /dev/stdin <<'EOF'\n{nothing}EOF\nenv"], capture_output=True, text=True,
                          check=True).stdout.count("MPIR_CVAR") == 0


def test_every_library_deploys_with_its_own_target():
    for library, dep in deploy.DEPLOYMENTS.items():
        from quadsel.targets import TARGETS
        from quadsel.targets.method_ids import TARGET_LIBRARY
        assert dep.target in TARGETS and TARGET_LIBRARY[dep.target] == library
    with pytest.raises(QuadselError, match="cannot write"):
        deploy.deployment("othermpi")


def test_the_journal_is_json_with_its_settings(tmp_path):
    folder = Folder(str(tmp_path / "d"))
    folder.make()
    Journal(folder, SETTINGS).finish("measure:bcast", [], **MEASURED)
    data = json.loads((tmp_path / "d" / "tune.json").read_text())
    assert data["settings"] == SETTINGS and data["steps"]["measure:bcast"]["complete"] is True
