"""How a tree is built: the builder's options, the default build and the paper's (docs/methodology.md)."""

from dataclasses import dataclass
from typing import Optional

from ..errors import OptionError
from .grid import BETWEEN_RULES
from .quadtree import LEAF_RULES

SPLITS = ("midpoint", "measured")
SIDES = ("comm_below", "comm_above", "msg_below", "msg_above")    # the sides of the measured range
OUTSIDE = ("default", "extrapolate")   # sizes outside the measured range: the library's, or the nearest rules'
# What `quadsel build` does with no options (chosen by held-out penalty, docs/methodology.md), and the paper's.
DEFAULT_BUILD = {"split": "measured", "between": "least-bad", "leaf_rule": "penalty", "max_leaves": "auto",
                 "tolerance": "ci", "keep_default": "auto"}
PAPER_BUILD = {"split": "midpoint", "between": "floor", "leaf_rule": "majority", "max_leaves": None, "tolerance": 0.0}


@dataclass
class BuildOptions:
    """How a tree was built (the tree file's `builder`); `constraint` names it in reports."""

    split: str = "midpoint"            # midpoint: the paper's padded quadtree; measured: cuts at measured sizes
    between: str = "floor"             # query rule between measured sizes (decision/grid.py)
    pad: str = "spread"                # midpoint only: how the grid is padded to 2^k x 2^k
    max_depth: Optional[int] = None
    accuracy_threshold: float = 1.0
    max_leaves: Optional[int] = None   # measured only: best-first growth to this many leaves
    size_rule: str = "fixed"           # "auto": max_leaves was chosen by held-out folds (decision/size.py)
    leaf_rule: str = "majority"
    tolerance: object = 0.0            # %: penalties up to it are ties when building; "ci": within the noise
    keep_default: bool = False         # leaves that do not beat the measured library default get it
    outside: str = "extrapolate"       # "default": sizes outside the measured range are the library's
    outside_sides: Optional[list] = None  # outside="default": the sides handed back (library_default.SIDES); None: all
    outside_reach: Optional[dict] = None  # outside="default": {side: the size from which (above) / below which that
    #                                       side is handed back}: extrapolated up to that bound (decision/reach.py)

    def check(self):
        if self.split not in SPLITS:
            raise OptionError(f"unknown split {self.split!r} (choose from {', '.join(SPLITS)})")
        if self.between not in BETWEEN_RULES:
            raise OptionError(f"unknown between rule {self.between!r} (choose from {', '.join(BETWEEN_RULES)})")
        if self.leaf_rule not in LEAF_RULES:
            raise OptionError(f"unknown leaf rule {self.leaf_rule!r} (choose from {', '.join(LEAF_RULES)})")
        if self.max_leaves is not None and (self.split != "measured" or self.max_leaves < 1):
            raise OptionError("a leaf budget needs split=measured and at least 1 leaf")
        if self.max_leaves is not None and self.accuracy_threshold < 1.0:
            raise OptionError("a leaf budget and an accuracy threshold do not combine: give one of them")
        if not 0.0 < self.accuracy_threshold <= 1.0 or (self.max_depth is not None and self.max_depth < 0):
            raise OptionError("the accuracy threshold must be in (0, 1] and the maximum depth >= 0")
        if self.outside not in OUTSIDE:
            raise OptionError(f"unknown outside rule {self.outside!r} (choose from {', '.join(OUTSIDE)})")
        if self.outside_sides is not None and (self.outside != "default" or not isinstance(self.outside_sides, list)
                                               or not set(self.outside_sides) <= set(SIDES) or not self.outside_sides):
            raise OptionError(f"outside_sides must be a non-empty list among {', '.join(SIDES)}, with outside=default")
        if self.outside_reach is not None and (
                self.outside != "default" or not isinstance(self.outside_reach, dict) or not self.outside_reach
                or not set(self.outside_reach) <= set(self.outside_sides or SIDES)
                or not all(isinstance(v, int) and not isinstance(v, bool) and v >= 1
                           for v in self.outside_reach.values())):
            raise OptionError("outside_reach must map sides handed back to sizes >= 1, with outside=default")
        if not isinstance(self.keep_default, bool):
            raise OptionError("keep_default must be true or false")
        if self.size_rule not in ("fixed", "auto"):
            raise OptionError(f"unknown size rule {self.size_rule!r}")
        if self.tolerance != "ci" and not (isinstance(self.tolerance, float) and 0.0 <= self.tolerance < 1e6):
            raise OptionError("the tolerance must be a percentage >= 0 or `ci`")

    def reach(self, axis):
        """(below, above) bound of `axis` ("comm" or "msg") from outside_reach (None: at the measured range)."""
        reach = self.outside_reach or {}
        return reach.get(f"{axis}_below"), reach.get(f"{axis}_above")

    @property
    def size_constraint(self):
        """The size part of the constraint only ("exact", "max_depth=3", "max_leaves=auto(8)", ...)."""
        return self.constraint.split(",split=")[0] if self.split != "midpoint" else self.constraint

    @property
    def is_default(self):
        """Built with the default builder's options (any size constraint; an exact tree's ties are off)."""
        exact = self.max_leaves is None and self.max_depth is None and self.accuracy_threshold >= 1.0
        return all(getattr(self, k) == v or (k == "tolerance" and exact and self.tolerance == 0.0)
                   for k, v in DEFAULT_BUILD.items()
                   if k not in ("max_leaves", "keep_default", "outside", "outside_sides", "outside_reach")) and \
            self.pad == "spread"

    @property
    def constraint(self):
        parts = []
        if self.max_depth is not None:
            parts.append(f"max_depth={self.max_depth}")
        if self.accuracy_threshold < 1.0:
            parts.append(f"threshold={self.accuracy_threshold:g}")
        if self.size_rule == "auto":
            parts.append(f"max_leaves=auto({self.max_leaves if self.max_leaves is not None else 'exact'})")
        elif self.max_leaves is not None:
            parts.append(f"max_leaves={self.max_leaves}")
        parts = parts or ["exact"]
        if self.split != "midpoint":
            parts.append(f"split={self.split}")
        if self.between != "floor":
            parts.append(f"between={self.between}")
        if self.leaf_rule != "majority" and parts[0] != "exact":     # every leaf of an exact tree is exact
            parts.append(f"leaf={self.leaf_rule}")
        if self.tolerance != (0.0 if self.split == "midpoint" else DEFAULT_BUILD["tolerance"]):
            parts.append(f"tolerance={self.tolerance if self.tolerance == 'ci' else format(self.tolerance, 'g')}")
        if self.keep_default:
            parts.append("keep-default")
        if self.outside == "default":
            parts.append("outside=default" + (f"({'+'.join(self.outside_sides)})" if self.outside_sides else ""))
        if self.outside_reach:      # sides extrapolated up to a bound, handed back beyond it (decision/reach.py)
            parts.append("reach=" + "+".join(f"{side}:{size}" for side, size in self.outside_reach.items()))
        return ",".join(parts)

    def to_json(self):
        """The tree file's `builder` (outside_reach only when set: files without a bound are as before)."""
        return {k: v for k, v in self.__dict__.items() if not (k == "outside_reach" and v is None)}


def exact_options(same):
    """The options of an exact tree: ties within the noise do not apply (issue 39: an exact tree is exact on every
    measured point, 0 % penalty there; a fixed --tolerance is the user's own equivalence and stays)."""
    if same["tolerance"] == "ci" and same["max_depth"] is None and same["accuracy_threshold"] >= 1.0:
        return dict(same, tolerance=0.0)
    return same
