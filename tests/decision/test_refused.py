"""A method the library fails at a point (`# replaced ... runs error`: Open MPI's two_proc at another size than 2) is
never a tree's choice there, whatever the leaf budget (decision/grid.py refused_points; issue 40)."""

from hypothesis import given, settings, strategies as st
from click.testing import CliRunner

from quadsel.cli import main
from quadsel.decision.decision_function import DecisionFunction

HEADER = "collective,algorithm,segsize,comm_size,msg_size,time_us,stddev_us,reps\n"
MSGS = [8, 64, 512, 4096]


def _csv(path, two_proc_gain, other_gain):
    lines = [HEADER]
    for m in MSGS:
        lines.append(f"allgather,default,0,2,{m},{10.0:.3f},0.1,20\n")
        lines.append(f"allgather,6,0,2,{m},{10.0 / two_proc_gain:.3f},0.1,20\n")      # two_proc: 2 ranks only
        lines.append(f"allgather,4,0,2,{m},{12.0:.3f},0.1,20\n")
        for n in (4, 8):
            lines.append(f"allgather,default,0,{n},{m},{20.0 * n:.3f},0.1,20\n")
            lines.append(f"allgather,4,0,{n},{m},{20.0 * n / other_gain:.3f},0.1,20\n")
            lines.append(f"# replaced allgather,6,0,{n},{m} runs error: comm size not 2 (ompi/mca/coll/base/"
                         "coll_base_allgather.c ompi_coll_base_allgather_intra_two_procs (MPI_ERR_UNSUPPORTED_OPERATION))\n")
    path.write_text("".join(lines))


@settings(max_examples=15, deadline=None)
@given(two_proc_gain=st.floats(1.5, 20), other_gain=st.floats(0.8, 1.2), leaves=st.sampled_from(["7", "9", "auto", "none"]))
def test_a_refused_method_is_never_chosen_where_it_fails(tmp_path_factory, two_proc_gain, other_gain, leaves):
    tmp = tmp_path_factory.mktemp("refused")
    _csv(tmp / "m.csv", two_proc_gain, other_gain)
    result = CliRunner().invoke(main, ["build", str(tmp / "m.csv"), "--max-leaves", leaves, "-o", str(tmp / "t.json")])
    assert result.exit_code == 0, result.output
    fn = DecisionFunction.load(tmp / "t.json")
    for n in (4, 8):
        for m in MSGS:
            assert fn.query(n, m).algorithm != "6", (n, m, leaves)


def test_verify_times_no_arm_where_the_library_fails_the_call(tmp_path):
    """verify's best arm without --measurements tries every method of the tree: not one the library fails at the
    point (it ended the timing job of a 2 x 2 Slurm tune: allgather's two_proc at 4 ranks)."""
    from quadsel.verify.command import plan
    _csv(tmp_path / "m.csv", 5.0, 1.0)
    assert CliRunner().invoke(main, ["build", str(tmp_path / "m.csv"), "-o", str(tmp_path / "t.json")]).exit_code == 0
    points = plan(DecisionFunction.load(tmp_path / "t.json"), "openmpi", 8, comm_sizes=[2, 4, 8], msg_sizes=[64])
    arms = {p["comm"]: {c[0] for c in p["candidates"]} for p in points}
    assert arms[2] == {"4", "6", "default"} and arms[4] == arms[8] == {"4", "default"}, arms
