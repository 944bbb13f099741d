"""verify/default_ran.compare: the default's fingerprint against the forced ones (no MPI; the real launches are
tests/trace/test_trace_mpi.py's trace of `default`)."""

from quadsel.verify.default_ran import DefaultRan, compare, describe


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
    assert describe(ran, {"6": "binomial"}).startswith("binomial (6), told apart by")
    assert compare(default, forced, probed_functions=False).status == "unknown"


def test_equal_fingerprints_are_ambiguous_and_none_is_unchecked():
    fp = [[0, 1], [1, 0]]
    ran = compare(fp, {"10": fp, "2": fp, "3": [[0, 2]]}, probed_functions=False)
    assert ran.status == "ambiguous" and ran.labels == ["2", "10"]
    assert describe(ran).startswith("one of 2, 10")
    assert compare(None, {"2": fp}, False).status == "unchecked"
    assert compare(_probed([]), {"2": _probed([])}, True).status == "unchecked"
    assert ran.as_json({"2": "chain"})["algorithms"] == [{"label": "2", "name": "chain"}, {"label": "10", "name": "10"}]
