"""Build and score: the decision function of a collective's measurements, and its penalty on them.

What `quadsel build` and `quadsel tune` do alike. Rows without a layout give one decision map and a decision
function of one size tree (decision/builder.py); rows with one (nodes, ppn) give one map per ppn and one size tree
each, the layout key (decision/layouts.py). Every map is built with the same settings, and the score is pooled over
every measured point of every map, each answered by the layer its ppn selects: one number, whatever the shape.
"""

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

from ..errors import QuadselError


@dataclass
class Maps:
    """The decision maps of one collective's rows: {ppn (None: the rows have no layout): map}."""
    collective: str
    maps: Dict[Optional[int], object]
    nodes: Dict[int, Tuple[int, ...]] = field(default_factory=dict)   # per ppn: its measured node counts

    @property
    def layered(self):
        return None not in self.maps

    @property
    def replaced(self):
        return tuple(p for dmap in self.maps.values() for p in dmap.replaced)


@dataclass
class Built:
    fn: object                   # the DecisionFunction
    maps: Maps                   # what it was built from, as measured (a model-based build: as predicted)
    score: object                # evaluate.penalty.PenaltySummary over every measured point of every map
    warnings: List[str] = field(default_factory=list)   # a large loss at a measured point (measured_floor.py)


def decision_maps(rows, collective=None):
    """The Maps of `rows` (an ingest table) for `collective` (None: the only one they hold)."""
    from ..decision.layouts import layer_maps, layout_groups
    groups = layout_groups(rows)
    if groups is None:
        from ..decision.decision_map import build_decision_map
        dmap = build_decision_map(rows, collective)
        return Maps(dmap.collective, {None: dmap})
    wanted = _collective(rows, collective)
    groups = {ppn: [m for m in group if m.collective == wanted] for ppn, group in groups.items()}
    maps = layer_maps({p: g for p, g in groups.items() if g}, wanted, rows)
    return Maps(wanted, {p: dmap for p, (dmap, _) in maps.items()}, {p: nodes for p, (_, nodes) in maps.items()})


def build(maps, settings, keep_default="auto", outside="default", provenance=None, model=None, bound_outside=False):
    """Built of `maps`. `settings`: the size tree builder's keyword arguments (decision/options.py;
    cli/options.build_settings); keep_default: True, False or "auto" (the folds decide), never kept where the
    default was not measured; outside: "default" hands sizes outside the measured range back to the library,
    "extrapolate" does not, "auto" decides each side by the held-out folds (bound_outside: and bounds an extrapolated
    side that loses two steps out, decision/reach.py). `model`: (form, comm sizes, msg sizes) to build from the map that form predicts over
    the grid (models/predict.py): scored on that map, whose predicted points are never scored."""
    from ..decision.builder import build_size_tree
    from ..decision.decision_function import DecisionFunction
    from ..decision.layouts import build_layered

    def build_one(dmap):
        return build_size_tree(dmap, **settings, keep_default=keep_default if dmap.default_cost is not None else False,
                               outside=outside, provenance=provenance, bound_outside=bound_outside)

    if maps.layered:
        if model:
            raise QuadselError("--model builds one 2-D map: it does not take measurements with layouts (nodes, ppn) yet")
        fn = build_layered({p: (dmap, maps.nodes[p]) for p, dmap in maps.maps.items()}, build_one, provenance)
        return _scored(fn, maps)
    dmap = maps.maps[None]
    if model:
        from ..models.predict import as_measured, model_provenance, predict_decision_map
        predicted, models = predict_decision_map(dmap, *model)
        provenance = dict(provenance or {}, model=model_provenance(model[0], models, predicted))
        maps = Maps(maps.collective, {None: predicted})
        return _scored(DecisionFunction.of(build_one(as_measured(predicted))), maps)
    return _scored(DecisionFunction.of(build_one(dmap)), maps)


def _collective(rows, collective):
    """The collective a layered build is of: the one asked, or the only one in the rows."""
    from ..ingest.names import normalise_collective
    found = sorted({m.collective for m in rows})
    if collective is None and len(found) != 1:
        raise QuadselError(f"the input holds several collectives ({', '.join(found)}): choose one with --collective")
    wanted = normalise_collective(collective) if collective else found[0]
    if wanted not in found:
        raise QuadselError(f"no measurements of collective '{wanted}' in the input (found: {', '.join(found)})")
    return wanted


def as_written(built, library):
    """`built` as `library`'s file carries it (targets/written.py: one method per communicator cell where the
    library matches on no message size), scored again when that differs: what tune deploys, verifies and reports."""
    from ..targets.written import as_written as written
    fn = written(built.fn, library)
    return built if fn is built.fn else _scored(fn, built.maps)


def _scored(fn, maps):
    """The Built of `fn`: every map scored by the layer its ppn selects, pooled."""
    import numpy as np
    from ..decision.measured_floor import loss_warning
    from ..evaluate.comparators import QuadtreeSelector, choice_on
    from ..evaluate.penalty import charged_grid, penalty_grid, pooled_summary
    parts, warnings = [], []
    for ppn, dmap in maps.maps.items():
        tree = fn.layers[int(fn.layer_index(np.array([ppn or 1]))[0])].tree
        choice = choice_on(QuadtreeSelector.of(tree), dmap)
        penalty = penalty_grid(dmap, choice)
        parts.append((penalty, dmap, charged_grid(dmap, choice)))
        warning = loss_warning(dmap, tree, penalty)
        if warning:
            warnings.append(warning if ppn is None else f"ppn {ppn}: {warning}")
    return Built(fn, maps, pooled_summary(parts), warnings)
