"""Extrapolating up to a bound (decision/reach.py): a side the folds extrapolate is tried two steps out; where the
tree loses to the library default there it is extrapolated one step and handed back beyond -- in the Python query,
the tree file, the C and the rules files alike."""

import json

import numpy as np
import pytest

from quadsel.decision.builder import build_size_tree
from quadsel.decision.decision_map import DEFAULT_METHOD, build_decision_map
from quadsel.decision.grid import Axis
from quadsel.decision.reach import bound, end_step, reach_of
from quadsel.decision.options import BuildOptions
from quadsel.errors import InputError, OptionError
from quadsel.targets import emit

from helpers import table_from_cube
from library_readers import OmpiClassicRules, OmpiJsonRules

COMMS = [2, 4, 8, 16]
MSGS = [8 << k for k in range(8)]          # 8 B .. 1 KiB


def largest_message_turns(turns=True):
    """Method 1 best everywhere, the default twice its time -- except at the largest message size when `turns`,
    where the default is best (1 at 1.5x)."""
    shape = (len(COMMS), len(MSGS))
    one, default = np.full(shape, 1.0), np.full(shape, 2.0)
    if turns:
        one[:, -1], default[:, -1] = 1.5, 1.0
    cost = np.stack([one, np.full(shape, 3.0)], axis=2)
    return table_from_cube(cost, COMMS, MSGS, [("1", 0), ("2", 0)], default=default)


def trees(options):
    from quadsel.decision.builder import budget_stream
    return lambda d, budgets: budget_stream(d, budgets, **options)


SAME = dict(split="measured", between="least-bad", max_depth=None, accuracy_threshold=1.0, leaf_rule="penalty",
            pad_mode="spread", tolerance=0.0, keep_default=True)


def test_bound_is_one_step_past_the_range_in_the_ratio_of_the_end_sizes():
    assert bound([8, 16, 32, 64], "msg_above") == 129            # 128 extrapolated, handed back from 129 on
    assert bound([8, 16, 48, 64], "comm_above") == 86            # 64 * 64 / 48 = 85.3: 85 extrapolated
    assert bound([8, 16, 32], "msg_below") == 4                  # 4 extrapolated, 3 handed back
    assert bound([8, 24, 32], "msg_below") == 3                  # 8 * 8 / 24 = 2.7: 3 extrapolated
    assert bound([1, 2, 4], "msg_below") is None                 # nothing below 1 B but 0: no bound worth one
    assert bound([2, 4, 8], "comm_below", least=2) is None       # no communicator below 1 rank
    assert bound([4, 8, 16], "comm_below", least=2) == 2


def test_on_a_ragged_grid_the_step_is_a_rows_own():
    """Two communicator sizes measured at their own message sizes (bytes per rank): the union's two largest sizes
    (768, 1024) are 1.33x apart, each row's two largest 2x."""
    rows = [r for r in largest_message_turns(False) if r.comm_size == 2 and r.msg_size <= 512]
    rows += [r.__class__(r.collective, r.algorithm, r.segsize, 4, r.msg_size * 3 // 2, r.time)
             for r in largest_message_turns(False) if r.comm_size == 4 and 16 <= r.msg_size <= 512]
    dmap = build_decision_map(rows)
    assert dmap.msg_sizes[-2:].tolist() == [512, 768] and end_step(dmap, "msg_above") == 2.0
    assert bound(dmap.msg_sizes, "msg_above", step=end_step(dmap, "msg_above")) == 1537
    assert end_step(dmap, "msg_below") == 2.0 and bound(dmap.msg_sizes, "msg_below", step=2.0) == 4


def test_a_side_that_loses_two_steps_out_is_bounded_and_one_that_holds_is_not():
    dmap = build_decision_map(largest_message_turns())
    bounds, records = reach_of(dmap, trees(SAME), 4, ["msg_above", "comm_above"])
    assert bounds == {"msg_above": 2049}                         # 1024 * 1024 / 512 extrapolated
    assert records["msg_above"]["gain"] < 0 and records["msg_above"]["points"] == len(COMMS)
    assert records["comm_above"]["gain"] > 0                     # method 1 holds at 16 ranks, trained on 2 and 4
    bounds, records = reach_of(build_decision_map(largest_message_turns(False)), trees(SAME), 4, ["msg_above"])
    assert bounds == {} and records["msg_above"]["gain"] > 0


def test_no_evidence_no_bound():
    dmap = build_decision_map(largest_message_turns())
    assert reach_of(dmap, trees(SAME), 4, []) == ({}, {})
    short = build_decision_map([r for r in largest_message_turns() if r.comm_size <= 4 and r.msg_size <= 32])
    assert reach_of(short, trees(SAME), 4, ["msg_above", "comm_above"]) == ({}, {})   # 2 and 3 sizes only


def test_the_default_build_bounds_the_side_when_asked_and_says_why():
    build = dict(split="measured", between="least-bad", leaf_rule="penalty", max_leaves="auto", tolerance="ci",
                 keep_default="auto", outside="auto")
    plain = build_size_tree(build_decision_map(largest_message_turns()), **build)
    assert plain.options.outside_reach is None and "two_steps" not in plain.provenance["outside"]
    assert "msg_above" in plain.provenance["outside"]["extrapolated"]
    fn = build_size_tree(build_decision_map(largest_message_turns()), **build, bound_outside=True)
    outside = fn.provenance["outside"]
    assert "msg_above" not in outside["extrapolated"] and "msg_above" not in outside["handed_back"]
    assert outside["bounded"] == {"msg_above": 2049} == fn.options.outside_reach
    assert outside["two_steps"]["msg_above"]["gain"] < 0
    assert "reach=msg_above:2049" in fn.options.constraint
    assert fn.query(8, 2048) == fn.query(8, 1024) and fn.query(8, 2049) == DEFAULT_METHOD


def reach_tree(reach, sides=None):
    return build_size_tree(build_decision_map(largest_message_turns(False)), split="measured", between="least-bad",
                           leaf_rule="penalty", keep_default=True, outside="default", outside_sides=sides,
                           outside_reach=reach)


def test_every_rules_file_and_the_c_answer_as_the_query(compile_decision):
    fn = reach_tree({"comm_above": 24, "msg_above": 1500, "msg_below": 5}, ["comm_above", "msg_above", "msg_below"])
    assert fn.query(17, 64).algorithm == "1" and fn.query(24, 64) == DEFAULT_METHOD
    assert fn.query(8, 1499).algorithm == "1" and fn.query(8, 1500) == DEFAULT_METHOD
    assert fn.query(8, 4) == DEFAULT_METHOD and fn.query(8, 5).algorithm == "1" and fn.query(1, 64).algorithm == "1"
    probes = [(c, m) for c in (1, 2, 3, 16, 17, 23, 24, 25, 1000) for m in (0, 4, 5, 7, 8, 1024, 1499, 1500, 1 << 40)]
    classic, js = OmpiClassicRules(emit("ompi-rules", [fn])), OmpiJsonRules(emit("ompi-json", [fn]))
    ask = compile_decision(emit("c", [fn], name="f_reach"), "f_reach")
    answers = dict(zip(probes, ask(probes)))
    for c, m in probes:
        want = 0 if fn.query(c, m) == DEFAULT_METHOD else int(fn.query(c, m).algorithm)
        assert classic.lookup(7, c, m)[0] == want and js.lookup("bcast", c, m)[0] == want, (c, m)
        assert answers[(c, m)] == (want, 0), (c, m)
    header = emit("ompi-rules", [fn])
    assert "from 24 ranks on" in header and "from 1500 bytes on" in header and "below 5 bytes" in header


def test_the_tree_file_keeps_the_bounds_and_refuses_bad_ones(tmp_path):
    fn = reach_tree({"msg_above": 1500})
    path = tmp_path / "t.json"
    fn.save(path)
    again = load_tree(path)
    assert again.size_tree.options.outside_reach == {"msg_above": 1500}
    assert [again.query(8, m) for m in (1024, 1499, 1500)] == [fn.query(8, m) for m in (1024, 1499, 1500)]
    data = json.loads(path.read_text())
    for reach in ({"msg_above": 1024}, {"msg_above": "2K"}, {"middle": 5}, {"msg_below": 9}, {"comm_above": 2**31}):
        data["builder"]["outside_reach"] = reach
        path.write_text(json.dumps(data))
        with pytest.raises(InputError):
            load_tree(path)
    assert "outside_reach" not in json.loads(emit_tree(reach_tree(None)))["builder"]    # files without a bound as before


def load_tree(path):
    from quadsel.decision.decision_function import DecisionFunction
    return DecisionFunction.load(path)


def emit_tree(fn):
    from quadsel.decision.tree_file import dumps
    return dumps(fn)


def test_axis_bounds():
    axis = Axis.of([8, 64, 512], "floor", outside=True, reach=(2, 4096))
    assert axis.lo.tolist() == [0, 2, 64, 512, 4096]
    for reach in ((9, None), (0, None), (None, 512), (None, 2**63)):
        with pytest.raises(ValueError):
            Axis.of([8, 64, 512], "floor", outside=True, reach=reach)
    for options in (dict(outside="extrapolate", outside_reach={"msg_above": 9}),
                    dict(outside="default", outside_sides=["comm_above"], outside_reach={"msg_above": 9}),
                    dict(outside="default", outside_reach={"msg_above": 0})):
        with pytest.raises(OptionError):
            BuildOptions(**options).check()


def test_the_build_command_bounds_with_its_flag_only(tmp_path):
    import subprocess
    import sys
    from helpers import REPO
    data = tmp_path / "m.csv"
    data.write_text("collective,algorithm,segsize,comm_size,msg_size,time_us\n" + "".join(
        f"{r.collective},{r.algorithm},{r.segsize},{r.comm_size},{r.msg_size},{r.time}\n"
        for r in largest_message_turns()))
    run = lambda *args: subprocess.run([sys.executable, "-m", "quadsel", "build", str(data), *args],  # noqa: E731
                                       capture_output=True, text=True, cwd=REPO)
    done = run("--bound-extrapolation", "-o", str(tmp_path / "t.json"))
    assert done.returncode == 0, done.stderr
    assert json.loads((tmp_path / "t.json").read_text())["builder"]["outside_reach"] == {"msg_above": 2049}
    assert "reach=msg_above:2049" in done.stderr
    done = run("-o", str(tmp_path / "u.json"))
    assert done.returncode == 0 and "outside_reach" not in json.loads((tmp_path / "u.json").read_text())["builder"]
    done = run("--bound-extrapolation", "--extrapolate", "-o", str(tmp_path / "v.json"))
    assert done.returncode == 2 and "does not combine with --extrapolate" in done.stderr
    assert "Traceback" not in done.stderr and not (tmp_path / "v.json").exists()
