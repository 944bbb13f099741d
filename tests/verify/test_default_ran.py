"""Which algorithm the library default ran, named from the follow check's fingerprints (verify/default_ran.py)."""

from quadsel.verify import command
from quadsel.verify.default_ran import describe, for_rows, identify, named
from quadsel.verify.follow import PointCheck


def test_open_mpi_ids_are_named_per_collective():
    assert named("openmpi", "bcast", "6") == "binomial (6)"
    assert named("openmpi", "allreduce", "6") == "rabenseifner (6)"      # "6" is another algorithm there
    assert named("openmpi", "bcast", "3/seg8192") == "pipeline (3)/seg8192"
    assert named("openmpi", "bcast", "2/seg8192 (chain_fanout=2)") == "chain (2)/seg8192 (chain_fanout=2)"
    assert named("intelmpi", "allreduce", "8") == "ring (8)"
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
    assert describe("openmpi", "bcast", found) == "pipeline (3), other segment size"
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
    assert rows[0]["default_ran"]["names"] == ["recursive_doubling (3)"]
    table = command.format_table(rows, {}, None, (), "openmpi")
    assert ("| allreduce | 2 | 8 | 2.0 | 1.0 | 1.0 | 2.00 | — | — | +0 % | rabenseifner (6) | ring (4) | "
            "recursive_doubling (3) |") in table
    for_rows(rows, None, "openmpi")
    assert rows[0]["default_ran"] is None
