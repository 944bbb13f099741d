"""A sourced tuned.env (or a site's rules or forcing variables) never stands in for the library's default in the
launches of measure, verify and trace: launch_env leaves them out, with one note (docs/conventions.md)."""

from hypothesis import given, strategies as st

from quadsel.measure import launch

SELECTION = ["OMPI_MCA_coll_tuned_use_dynamic_rules", "OMPI_MCA_coll_tuned_dynamic_rules_filename",
             "OMPI_MCA_coll_han_use_dynamic_file_rules", "OMPI_MCA_coll_han_dynamic_rules_filename",
             "MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE", "I_MPI_TUNING", "I_MPI_TUNING_BIN", "I_MPI_ADJUST_BCAST",
             "I_MPI_ADJUST_REDUCE_SCATTER_BLOCK", "MPIR_CVAR_ALLREDUCE_DEVICE_COLLECTIVE",
             "MPIR_CVAR_REDUCE_SCATTER_BLOCK_DEVICE_COLLECTIVE"]
# forcing variables stay: they override any file in the user's jobs too, and verify reports that file as not followed
# (tests/verify/test_verify_speed.py)
KEPT = ["OMPI_MCA_coll_tuned_bcast_algorithm", "OMPI_MCA_coll_tuned_bcast_algorithm_segmentsize",
        "MPIR_CVAR_BCAST_INTRA_ALGORITHM", "OMPI_MCA_coll", "OMPI_MCA_btl", "OMPI_MCA_coll_tuned_priority", "MPIR_CVAR_DEVICE_COLLECTIVES",
        "MPIR_CVAR_CH4_NETMOD", "I_MPI_PIN", "FI_PROVIDER", "PATH", "i_mpi_adjust_bcast", "XOMPI_MCA_coll_tuned_use_dynamic_rules"]


def test_selection_variables_left_out_with_one_note(monkeypatch, capsys):
    monkeypatch.setattr(launch, "_noted", set())
    for name in SELECTION + KEPT:
        monkeypatch.setenv(name, "1")
    env = launch.launch_env("openmpi", {"I_MPI_ADJUST_BCAST": "3"})
    assert not set(SELECTION) - {"I_MPI_ADJUST_BCAST"} & set(env)
    assert env["I_MPI_ADJUST_BCAST"] == "3"           # the launch's own forcing is applied after
    assert all(env[name] == "1" for name in KEPT)
    launch.launch_env("openmpi")
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("note: left out of the launches' environment: ")
    assert all(name in err[0] for name in SELECTION)


def test_no_note_without_selection_variables(monkeypatch, capsys):
    monkeypatch.setattr(launch, "_noted", set())
    for name in SELECTION:
        monkeypatch.delenv(name, raising=False)
    launch.launch_env("mpich")
    assert capsys.readouterr().err == ""


@given(st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,40}", fullmatch=True))
def test_only_selection_names_match(name):
    dropped = launch.selection_variables({name: "x"})
    expected = (name.startswith(("OMPI_MCA_coll_tuned_", "OMPI_MCA_coll_han_", "MPIR_CVAR_COLL_SELECTION",
                                 "I_MPI_TUNING", "I_MPI_ADJUST_")))
    assert not dropped or expected
