"""What an MPI library runs for one call: a `Pick` (forced method or the library default) and the call's facts.

The rules-file readers (ompi_rules.py, ompi_json.py, mpich_json.py) answer with a Pick; `quadsel verify`
forces it. `CallModel` holds what an MPICH selection may test about a call (count, type, operation).
"""

from dataclasses import dataclass, field
from typing import Optional, Tuple

# Collectives verify calls with MPI_SUM on floats (REDUCTIONS); every other one moves MPI_BYTE (measure/calls.py).
from ..libraries.base import DEFAULT_ALGORITHM, REDUCTIONS, is_reduction  # noqa: F401 (REDUCTIONS: interface)


@dataclass(frozen=True)
class Pick:
    """What the library runs at one point: a forcible method, or the library default."""

    label: str                     # "default", an Open MPI id ("6"), an MPICH algorithm ("binomial")
    segsize: int = 0
    params: Tuple = ()             # (("chain_fanout", 2), ("max_requests", 8)): forced alongside (Open MPI)
    rule: str = field(default="", compare=False)   # "file:line" of the rule that chose it

    @property
    def is_default(self):
        return self.label == DEFAULT_ALGORITHM

    def arm(self):
        """The verify launches' JSON form: [label, segsize] or [label, segsize, [[name, value], ...]]."""
        return [self.label, int(self.segsize)] + ([[list(p) for p in self.params]] if self.params else [])


DEFAULT_PICK = Pick(DEFAULT_ALGORITHM, 0)


@dataclass(frozen=True)
class CallModel:
    """The facts of one collective call that an MPICH selection may test (a verify call by default)."""

    count: int
    type_size: int
    op_built_in: bool = True
    commutative: bool = True
    threaded: bool = True          # mpi4py asks for MPI_THREAD_MULTIPLE
    one_node: bool = True          # every rank on this machine (quadsel verify --np)
    nodes: Optional[int] = None    # the nodes the communicator spans (its layout); None: one_node says

    @staticmethod
    def of_verify_call(collective, msg, type_size=None):
        """The call quadsel.verify.speed makes: bytes for bcast; MPI_SUM of float (4 B) or uint8 for reductions
        (`type_size`, as verify_type_size chose it for the whole grid; None: float where msg allows it)."""
        if type_size is None:
            type_size = 4 if msg % 4 == 0 else 1
        if not is_reduction(collective) or type_size == 1:
            return CallModel(count=msg, type_size=1)
        return CallModel(count=msg // type_size, type_size=type_size)

    @staticmethod
    def of_order_call(msg):
        """quadsel.verify.fingerprint's order call: int64, a user operation declared commutative."""
        return CallModel(count=msg // 8, type_size=8, op_built_in=False, commutative=True)


def verify_type_size(collective, msg_sizes):
    """Element size of verify's calls, by quadsel measure's `--datatype auto` rule over the same sizes: bytes
    for the collectives that move data; for reductions float (4) when every size is a multiple of 4, else
    uint8 (1)."""
    if not is_reduction(collective):
        return 1
    return 4 if all(m % 4 == 0 for m in msg_sizes) else 1
