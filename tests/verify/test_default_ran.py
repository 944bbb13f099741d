"""Which algorithm the library default ran, named from the follow check's fingerprints (verify/default_ran.py)."""

from quadsel.verify import command
from quadsel.verify.default_ran import DefaultRan, compare, describe, describe_ran, for_rows, identify, named
from quadsel.verify.follow import PointCheck


def test_open_mpi_ids_are_named_per_collective():
    assert named("openmpi", "bcast", "6") == "6 binomial"
    assert named("openmpi", "allreduce", "6") == "6 rabenseifner"      # "6" is another algorithm there
    assert named("openmpi", "bcast", "3/seg8192") == "3 pipeline/seg8192"
    assert named("openmpi", "bcast", "2/seg8192 (chain_fanout=2)") == "2 chain/seg8192 (chain_fanout=2)"
    assert named("intelmpi", "allreduce", "8") == "8 ring"
    assert named("mpich", "bcast", "binomial") == "binomial" and named("openmpi", "bcast", "default") == "default"


def _fp(traffic, functions):
    return [traffic, [[0, [[f, 1] for f in functions]], [1, [[f, 1] for f in functions]]]]


def test_identify_by_fingerprint_by_functions_or_not_at_all():
    arms = {"default": _fp([[0, 1]], ["bcast_intra_binomial"]), "6": _fp([[0, 1]], ["bcast_intra_binomial"]),
            "1": _fp([[0, 1]], ["bcast_intra_basic_linear"]), "3": _fp([[0, 1]], ["bcast_intra_pipeline"])}
    assert identify(arms) == {"arms": ["6"], "match": "fingerprint", "functions": ["bcast_intra_binomial"]}
    # the fixed decision's pipeline in 128 KiB segments: the same functions as pipeline forced at segment size 0
    arms["default"] = _fp([[0, 8]], ["bcast_intra_pipeline"])
    found = identify(arms)
    assert found["arms"] == ["3"] and found["match"] == "functions"
    assert describe("openmpi", "bcast", found) == "3 pipeline, other segment size"
    arms["default"] = _fp([[0, 2]], ["bcast_intra_knomial"])
    found = identify(arms)
    assert found["match"] == "none" and describe("openmpi", "bcast", found) == "? (bcast_intra_knomial)"
    assert identify({"6": _fp([], [])}) is None
    # MPICH at 2 ranks: several algorithms send alike
    same = {"default": [None, [[0, "x"]]], "binomial": [None, [[0, "x"]]], "tree": [None, [[0, "x"]]]}
    assert describe("mpich", "bcast", identify(same)) == "one of: binomial, tree"


def test_rows_and_table_show_what_the_default_ran():
    rows = [{"collective": "allreduce", "comm_size": 2, "msg_size": 8, "quadsel": "6", "best": "4",
             "default_us": 2.0, "quadsel_us": 1.0, "best_us": 1.0, "speedup": 2.0, "vs_best": 0.0}]
    found = {"arms": ["3"], "match": "fingerprint", "functions": ["allreduce_intra_recursivedoubling"]}
    checks = {"f": [PointCheck("allreduce", 2, 8, "6", "follows", ["6"], found)]}
    for_rows(rows, checks, "openmpi")
    assert rows[0]["default_ran"]["names"] == ["3 recursive_doubling"]
    table = command.format_table(rows, {}, None, (), "openmpi")
    assert ("| allreduce | 2 | 8 | 2.0 | 1.0 | 1.0 | 2.00 | — | — | +0 % | 6 rabenseifner | 4 ring | "
            "3 recursive_doubling |") in table
    for_rows(rows, None, "openmpi")
    assert rows[0]["default_ran"] is None


# trace's side: compare (the real launches are tests/trace/test_trace_mpi.py's trace of `default`)
def _probed(functions, traffic=None):
    return [traffic, [[0, functions], [1, []]]]


def test_probe_part_names_the_algorithm_whatever_the_messages():
    # Open MPI's functions probe: the default ran binomial with a segment size (other traffic than the forced
    # run at segment size 0), the functions are the same
    default = _probed([["bcast_intra_binomial", 1], ["bcast_intra_generic", 1]], traffic=[[0, 4]])
    forced = {"6": _probed([["bcast_intra_binomial", 1], ["bcast_intra_generic", 1]], traffic=[[0, 1]]),
              "7": _probed([["bcast_intra_knomial", 1]], traffic=[[0, 1]])}
    ran = compare(default, forced, probed_functions=True)
    assert ran == DefaultRan("identified", ["6"], "the coll/base functions that ran")
    assert describe_ran(ran, {"6": "binomial"}).startswith("6 binomial, told apart by")
    assert compare(default, forced, probed_functions=False).status == "unknown"


def test_equal_fingerprints_are_ambiguous_and_none_is_unchecked():
    fp = [[0, 1], [1, 0]]
    ran = compare(fp, {"10": fp, "2": fp, "3": [[0, 2]]}, probed_functions=False)
    assert ran.status == "ambiguous" and ran.labels == ["2", "10"]
    assert describe_ran(ran).startswith("one of 2, 10")
    assert compare(None, {"2": fp}, False).status == "unchecked"
    assert compare(_probed([]), {"2": _probed([])}, True).status == "unchecked"
    assert ran.as_json({"2": "chain"})["algorithms"] == [{"label": "2", "name": "chain"}, {"label": "10", "name": "10"}]
