"""tune's measuring strategy (docs/tune.md, *Strategy*): auto = adaptive on every grid on one host, the full sweep
where the library refuses --adaptive for a collective and across hosts (where --strategy adaptive asks for one plan
per ppn)."""

import sys

import pytest

from quadsel.errors import QuadselError
from quadsel.tune import steps
from quadsel.tune.run import TuneSpec

EIGHT = "1,8,64,512,4K,32K,256K,1M"


@pytest.mark.parametrize("np_, comm_sizes, strategy, hosts, expected", [
    (2, None, "auto", None, "adaptive"),            # tune's default run here: 1 x 8 points
    (64, "2,4,8,16,32,64", "auto", None, "adaptive"),
    (2, None, "adaptive", None, "adaptive"),         # asked for: as asked
    (64, None, "full", None, "full"),
    (4, None, "auto", "--host a:2,b:2", "full"),      # across hosts: the layouts replay misses the bound
    (4, None, "adaptive", "--host a:2,b:2", "adaptive"),   # asked for: one plan per ppn (sampling/adaptive_run.py)
])
def test_the_strategy_of_a_run(np_, comm_sizes, strategy, hosts, expected):
    spec = TuneSpec(folder="x", np=np_, msg_sizes=EIGHT, comm_sizes=comm_sizes, strategy=strategy,
                    mpiexec_args=hosts)
    assert steps.strategy_for(spec) == expected


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
