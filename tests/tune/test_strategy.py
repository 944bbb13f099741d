"""tune's measuring strategy (docs/tune.md, *Strategy*): auto = adaptive on grids of 64 points or more, the full
sweep on smaller ones, and the full sweep where the library refuses --adaptive for a collective."""

import sys

import pytest

from quadsel.errors import QuadselError
from quadsel.tune import steps
from quadsel.tune.run import TuneSpec

EIGHT = "1,8,64,512,4K,32K,256K,1M"


@pytest.mark.parametrize("np_, comm_sizes, msg_sizes, strategy, expected", [
    (2, None, EIGHT, "auto", "full"),             # tune's default run here: 1 x 8 points
    (8, None, EIGHT, "auto", "full"),             # 7 x 8 = 56 < 64
    (9, None, EIGHT, "auto", "adaptive"),         # 8 x 8 = 64
    (64, "2,4,8,16,32,64", "1-1M:pow2", "auto", "adaptive"),
    (64, None, "0", "auto", "full"),              # a barrier: one message size, 63 points
    (2, None, EIGHT, "adaptive", "adaptive"),     # asked for: as asked
    (64, None, EIGHT, "full", "full"),
])
def test_the_strategy_of_a_grid(np_, comm_sizes, msg_sizes, strategy, expected):
    spec = TuneSpec(folder="x", np=np_, msg_sizes=EIGHT, comm_sizes=comm_sizes, strategy=strategy)
    assert steps.strategy_for(spec, msg_sizes) == expected


def _refusing(message):
    return [sys.executable, "-c", f"import sys; sys.stderr.write({message!r}); sys.exit(2)"]


def test_auto_falls_back_to_the_full_sweep_only_where_the_library_refuses_adaptive(tmp_path):
    out = str(tmp_path / "m.csv")
    refusal = ("Error: Open MPI cannot force allgatherv through MPI_T (read-only variables): --adaptive and "
               "--sample need it; measure without them\n")
    assert steps._measure(_refusing(refusal), out, "allgatherv", None, fallback=True) is None
    with pytest.raises(QuadselError, match="measuring allgatherv failed: .*--adaptive"):
        steps._measure(_refusing(refusal), out, "allgatherv", None, fallback=False)   # asked for adaptive: said
    with pytest.raises(QuadselError, match="measuring bcast failed: Error: out of memory"):
        steps._measure(_refusing("Error: out of memory\n"), out, "bcast", None, fallback=True)  # not a refusal
