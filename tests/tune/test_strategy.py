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


def test_auto_falls_back_to_the_full_sweep_only_where_the_library_refuses_adaptive(tmp_path, monkeypatch):
    """The refusal is a typed one (pipeline/measure.py NeedsFullSweep), not a message matched as text (issue 38)."""
    from quadsel.pipeline import measure as pipeline_measure
    from quadsel.tune.folder import Folder, Journal
    asked = []

    def fake(spec, np_, mpiexec=None, mpiexec_args=None, on_line=None, stop_after=None):
        asked.append(spec.adaptive)
        if spec.collective == "bcast":
            raise QuadselError("measuring bcast failed: out of memory")      # not a refusal: said as it is
        if spec.adaptive:
            raise pipeline_measure.NeedsFullSweep("Open MPI: --adaptive needs in-process forcing")
        return pipeline_measure.Measured(stopped=False, seconds=1.0)

    monkeypatch.setattr(pipeline_measure, "measure", fake)
    folder = Folder(str(tmp_path / "t"))
    folder.make()
    Journal(folder, {"library": "openmpi", "library_version": "x", "np": 2, "comm_sizes": None, "msg_sizes": EIGHT,
                     "strategy": "auto"})
    auto = TuneSpec(folder=folder.path, np=2, msg_sizes=EIGHT)
    assert steps.measure(auto, folder, "allgatherv")["strategy"] == "full" and asked == [True, False]
    adaptive = TuneSpec(folder=folder.path, np=2, msg_sizes=EIGHT, strategy="adaptive")
    with pytest.raises(pipeline_measure.NeedsFullSweep):       # asked for adaptive: said, not replaced
        steps.measure(adaptive, folder, "allgatherv")
    with pytest.raises(QuadselError, match="measuring bcast failed: out of memory"):
        steps.measure(auto, folder, "bcast")
