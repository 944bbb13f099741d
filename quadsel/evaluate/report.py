"""Tables 1–2 and beyond: statistics and penalty of every quadtree and of every comparator (§4.2).

One row per decision rule. Quadtrees (depth-limited, exact, threshold-limited) are compared with the
library default (measured), the single best method, the run-length rules table of
ompi-collectives-tuning, CART trees with the quadtrees' leaf budgets and a fitted analytical model
(quadsel.evaluate.comparators, model.py) — all scored with the one penalty definition of penalty.py, on the measured
points they were built from and, with a held-out split (quadsel.holdout), on points they never saw.
docs/report.md explains every column.
"""

import csv
import dataclasses
import io
import json
import math
from dataclasses import dataclass, field
from typing import List, Optional

import numpy as np

from .comparators import (CartSelector, OutsideRuleSelector, QuadtreeSelector, RunLengthTable, SingleBest,
                          TreeFileSelector, cart_available, choice_on)
from .model import ModelSelector
from ..decision.builder import DEFAULT_BUILD, build_size_tree
from ..errors import QuadselError, markdown_cell
from ..decision.decision_map import penalty_cube
from ..decision.padding import padded_size
from .penalty import charged_grid, default_penalty_grid, penalty_grid, summarize

ROW_KEYS = ("constraint", "depth_min", "depth_max", "depth_mean", "penalty_min", "penalty_max",
            "penalty_mean", "penalty_median", "leaves", "nodes")
EXTRA_KEYS = ("method", "size", "assignments", "rules", "holdout", "points", "unscored", "charged", "points_over_5")
DEFAULT_THRESHOLDS = tuple(round(0.1 * i, 1) for i in range(1, 11))
COMPARATORS = ("quadsel", "default", "single", "runlength", "cart", "model")
PAPER_SET = ("the paper's trees (method quadtree) choose among the forced algorithms only, the paper's method set: "
             "where the library default is the fastest measured they pay; quadsel's trees and CART have the default "
             "as a method (issue 39)")
NO_SKLEARN = "scikit-learn is not installed: the cart rows are left out (pip install 'quadsel[compare]')"


def tree_row(fn, dmap):
    """The Table 1/2 row of one quadtree decision function on the map it was built from."""
    return selector_row(QuadtreeSelector.of(fn), dmap)


def default_row(dmap, mask=None, holdout=None):
    """The library default's row (its measured time, nothing is fitted); None without `default` rows."""
    grid = default_penalty_grid(dmap)
    if grid is None:
        return None
    row = {"constraint": "default", "method": "default", "depth_min": None, "depth_max": None, "depth_mean": None,
           "leaves": None, "nodes": None, "size": None}
    row.update(summarize(grid, dmap, mask).to_json())
    row["holdout"] = holdout
    return row


def selector_row(selector, dmap, mask=None, holdout=None, cube=None, assignments=None):
    """Row of any selector scored on `dmap` (the full data) at its measured points, or only where `mask`
    (`cube`: penalty_cube(dmap), `assignments`: its deployed_assignments, when the caller scores several)."""
    row = {"constraint": selector.constraint, "method": selector.kind}
    row.update(selector.stats())
    choice = choice_on(selector, dmap)
    row.update(summarize(penalty_grid(dmap, choice, cube), dmap, mask, charged_grid(dmap, choice)).to_json())
    row["size"] = selector.size
    row["rules"] = selector.deployed_rules
    row["assignments"] = selector.deployed_assignments if assignments is None else assignments
    row["holdout"] = holdout
    return row


def quadsel_functions(dmap):
    """The default build (size chosen by held-out folds), then the leaf budgets of its folds' ladder -- 2, 4, 8,
    ... leaves inside the measured range, plus the leaves that hand the sizes outside it back to the library
    (the budget is the deployed tree's) -- up to the largest the folds scored (they stop once their curve has
    turned, decision/size.py), and the exact tree (every budget from one best-first growth,
    decision/best_first.py): each the tree `quadsel build` deploys with that `--max-leaves`."""
    from ..decision.builder import SharedWork, budget_functions
    shared = SharedWork()          # one grid, look-ahead cache and exact tree for the three
    # the trees `quadsel build` deploys: each side outside the measured range handed back or extrapolated by the folds
    deployed = dict(DEFAULT_BUILD, outside="auto")
    chosen = build_size_tree(dmap, shared=shared, **deployed)
    # the budget rows and the exact tree keep the library default, and hand back the sides, where the default build does
    options = {k: v for k, v in deployed.items() if k != "max_leaves"}
    options.update(keep_default=chosen.options.keep_default, outside=chosen.options.outside,
                   outside_sides=chosen.options.outside_sides, outside_reach=chosen.options.outside_reach)
    exact = build_size_tree(dmap, shared=shared, **options)
    size = chosen.provenance.get("size", {})
    frame = size.get("outside_leaves", 0)
    scored = [b for b, _ in size.get("held_out_penalty", ()) if b is not None]
    budgets, inner = [], 2
    while frame + inner < exact.tree.n_leaves and (not scored or frame + inner <= max(scored)):
        budgets.append(frame + inner)
        inner *= 2
    fns = budget_functions(dmap, budgets, shared=shared, **options) if budgets else []
    fns = [dataclasses.replace(chosen, options=dataclasses.replace(chosen.options, size_rule="fixed"))
           if b == chosen.options.max_leaves else fn for b, fn in zip(budgets, fns)]
    return [chosen] + fns + [exact]


def outside_alternatives(dmap, chosen, far=False):
    """The default build of `dmap` with every side of the measured range handed back, and with every side
    extrapolated, where its folds decided the sides (a measured library default): a held-out split's rows then say
    what each rule costs at sizes the build never saw, beside the sides the build chose (docs/report.md). `far`: a
    split two steps past the range (holdout.py), where `build --bound-extrapolation` answers otherwise too."""
    if dmap.default_cost is None or chosen.fn.options.split == "midpoint" or \
            chosen.fn.provenance.get("outside") is None:
        return []
    out = []
    rules = [(dict(outside="default"), "handed back"), (dict(outside="extrapolate"), "extrapolated")]
    if far:
        rules.append((dict(outside="auto", bound_outside=True), "bounded (--bound-extrapolation)"))
    for outside, rule in rules:
        fn = build_size_tree(dmap, **dict(DEFAULT_BUILD, **outside))
        out.append(OutsideRuleSelector(list(fn.methods), fn, rule=rule))
    return out


def quadtree_functions(dmap, pad_mode="spread", thresholds=DEFAULT_THRESHOLDS, leaf_rule="majority"):
    """The paper's trees: max depth 1..k (k = log2 of the padded side), the exact tree, then the threshold
    sweep (< 1)."""
    from ..decision.paper_sweep import paper_functions
    k = int(math.log2(padded_size(*dmap.shape)))
    constraints = [(d, 1.0) for d in range(1, k + 1)] + [(None, 1.0)] + [(None, t) for t in thresholds if t < 1.0]
    return paper_functions(dmap, constraints, pad_mode, leaf_rule)     # all cut from one exact tree


def penalty_table(dmap, pad_mode="spread", thresholds=DEFAULT_THRESHOLDS, leaf_rule="majority"):
    """Rows for max depth 1..k, the exact tree, a threshold sweep, the default (the paper's Tables 1-2)."""
    rows = [tree_row(fn, dmap) for fn in quadtree_functions(dmap, pad_mode, thresholds, leaf_rule)]
    baseline = default_row(dmap)
    if baseline is not None:
        rows.append(baseline)
    return rows


# -- the full comparison ----------------------------------------------------------------------------
def build_selectors(train, pad_mode="spread", thresholds=DEFAULT_THRESHOLDS, comparators=COMPARATORS, notes=None,
                    leaf_rule="majority"):
    """Quadtrees and comparators built on the (training) map `train`, in report order.

    CART gets one tree per distinct quadtree leaf count (the same leaf budget) up to the first budget it
    does not use up (a fully grown tree; larger budgets repeat it). Missing scikit-learn or a
    model that cannot be fitted adds a line to `notes` and leaves those rows out.
    """
    notes = [] if notes is None else notes
    selectors = [QuadtreeSelector.of(fn) for fn in quadsel_functions(train)] if "quadsel" in comparators else []
    selectors += [QuadtreeSelector.of(fn) for fn in quadtree_functions(train, pad_mode, thresholds, leaf_rule)]
    if "single" in comparators:
        selectors.append(SingleBest.fit(train))
    if "runlength" in comparators:
        selectors.append(RunLengthTable.fit(train))
    if "cart" in comparators:
        if cart_available():
            for budget in sorted({s.size for s in selectors if s.kind in ("quadtree", "quadsel")}):
                cart = CartSelector.fit(train, budget)
                selectors.append(cart)
                if cart.size < budget:     # fully grown: every larger budget gives this same tree
                    break
        elif NO_SKLEARN not in notes:
            notes.append(NO_SKLEARN)
    if "model" in comparators:
        try:
            selectors.append(ModelSelector.fit(train))
        except ValueError as exc:
            notes.append(f"model: {exc}")
    return selectors


def _deployed_assignments(selector):
    return selector.deployed_assignments


def _assignments(dmap, selectors):
    """Each selector's deployed_assignments -- its C's count, in the order the search finds (targets/c_order.py:
    about a second on a large tree) --, side by side on the cores for a large map (cores.py)."""
    from ..cores import PARALLEL_FROM, forked_map
    large = int(dmap.measured.sum()) * len(dmap.methods) >= PARALLEL_FROM
    return forked_map(_deployed_assignments, selectors, None if large else 1)


def comparison_rows(dmap, selectors, mask=None, holdout=None, with_default=True):
    """Score `selectors` on `dmap`; the default row goes right after the quadtrees."""
    cube = penalty_cube(dmap)
    rows = [selector_row(s, dmap, mask, holdout, cube, a) for s, a in zip(selectors, _assignments(dmap, selectors))]
    baseline = default_row(dmap, mask, holdout) if with_default else None
    if baseline is not None:
        at = sum(1 for r in rows if r["method"] in ("tree", "quadtree", "quadsel"))
        rows.insert(at, baseline)
    return rows


@dataclass
class Report:
    """Everything one `quadsel report` run shows: rows of every split, notes, the fitted models, figures."""

    dmap: object
    rows: List[dict]
    selectors: list                                  # built on all the data (what the figures show)
    holdouts: list = field(default_factory=list)     # [(Holdout, test mask, training map, its selectors)]
    notes: List[str] = field(default_factory=list)
    figures: List[str] = field(default_factory=list)
    pad_mode: str = "spread"
    leaf_rule: str = "majority"

    @property
    def model(self) -> Optional[ModelSelector]:
        return next((s for s in self.selectors if s.kind == "model"), None)

    def meta(self):
        meta = {"collective": self.dmap.collective, "pad": self.pad_mode, "leaf_rule": self.leaf_rule,
                "comm_sizes": self.dmap.comm_sizes.tolist(), "msg_sizes": self.dmap.msg_sizes.tolist(),
                "methods": [m.label for m in self.dmap.methods], "points": int(self.dmap.measured.sum()),
                "holdouts": [{"holdout": h.name, "description": h.describe(), "points": int(test.sum())}
                             for h, test, _, _ in self.holdouts],
                "notes": self.notes, "figures": self.figures}
        if self.model is not None:
            meta["models"] = self.model.to_json()
        meta["versus_default"] = versus_default(self)
        if _paper_set(self):
            meta["paper_method_set"] = PAPER_SET
        return meta


def _paper_set(report):
    """The report has rows of the paper's trees, which cannot choose a measured library default (PAPER_SET)."""
    return report.dmap.default_cost is not None and any(r["method"] == "quadtree" for r in report.rows)


def build_report(dmap, pad_mode="spread", thresholds=DEFAULT_THRESHOLDS, holdouts=(), comparators=COMPARATORS,
                 leaf_rule="majority", trees=()):
    """All rows: the given trees ((name, DecisionFunction): scored as they are), every selector on all the
    data, then for each held-out split every selector rebuilt on its training part."""
    from .holdout import split, training_map
    notes = []
    for name, fn in trees:
        if fn.collective != dmap.collective:
            notes.append(f"{name} is a {fn.collective} tree scored on {dmap.collective} measurements")
    selectors = [TreeFileSelector(list(fn.methods), fn, name) for name, fn in trees]
    selectors += build_selectors(dmap, pad_mode, thresholds, comparators, notes, leaf_rule)
    with_default = "default" in comparators
    rows = comparison_rows(dmap, selectors, with_default=with_default)
    splits = []
    for holdout in holdouts:
        try:
            test = split(dmap, holdout)
        except QuadselError as exc:     # e.g. `comm` on a map with one communicator size: keep the other splits
            notes.append(f"{exc}: skipped")
            continue
        train = training_map(dmap, test)
        held = build_selectors(train, pad_mode, thresholds, comparators, notes, leaf_rule)
        if "quadsel" in comparators:        # beside the default build: each outside rule for every side
            held[1:1] = outside_alternatives(train, held[0], far=holdout.kind.endswith("-far"))
        rows += comparison_rows(dmap, held, test, holdout.name, with_default)
        splits.append((holdout, test, train, held))
    return Report(dmap, rows, selectors, splits, notes, pad_mode=pad_mode, leaf_rule=leaf_rule)


# -- output ---------------------------------------------------------------------------------------
def _cell(value, digits=2):
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return markdown_cell(value)


MD_COLUMNS = (("method", "Method"), ("constraint", "Constraint"), ("size", "Size"), ("assignments", "C assignments"),
              ("rules", "Rules"),
              ("depth_max", "Depth max"),
              ("depth_min", "Depth min"), ("depth_mean", "Depth mean"), ("penalty_min", "Penalty min %"),
              ("penalty_max", "Penalty max %"), ("penalty_mean", "Penalty mean %"),
              ("penalty_median", "Penalty median %"), ("leaves", "Leaves"), ("paper_leaves", "Paper leaves"), ("nodes", "Nodes"),
              ("points", "Points"),
              ("points_over_5", "Points ≥ 5 %"), ("charged", "Charged"), ("unscored", "Unscored"))


def _table(rows):
    lines = ["| " + " | ".join(h for _, h in MD_COLUMNS) + " |",
             "|" + "|".join("---" if i < 2 else "---:" for i in range(len(MD_COLUMNS))) + "|"]
    for row in rows:
        lines.append("| " + " | ".join(_cell(row.get(k)) for k, _ in MD_COLUMNS) + " |")
    return lines


def _groups(rows):
    order = list(dict.fromkeys(row.get("holdout") for row in rows))
    return [(h, [r for r in rows if r.get("holdout") == h]) for h in order]


def to_markdown(rows, title=None, holdout_text=None):
    """One table per split (all measured points first, then each held-out split under its own heading)."""
    lines = [f"### {title}", ""] if title else []
    groups = _groups(rows)
    for i, (holdout, group) in enumerate(groups):
        if len(groups) > 1 or holdout is not None:
            what = "all measured points (built and scored on the same data)" if holdout is None else \
                (holdout_text or {}).get(holdout, f"held out: {holdout}")
            if i:
                lines.append("")
            lines += [f"#### {what}", ""]
        lines += _table(group)
    return "\n".join(lines) + "\n"


def _budget(constraint):
    return int(constraint.split("=", 1)[1]) if constraint.startswith("max_leaf_nodes=") else None


def _is_auto(row):
    return row["method"] == "quadsel" and row["constraint"].startswith("max_leaves=auto")


def summary_rows(rows, reference="max_depth=3"):
    """At a glance: per selector (the default build, the exact trees, the paper's reference tree, CART with the
    default build's leaf budget, the comparators) and per split, (size, mean penalty, points >= 5 %). CART
    is the tree with the default build's leaf budget of the same split (or the fully grown one below it)."""
    given = [r for r in rows if r["method"] == "tree"]
    wanted = [("tree", lambda r, c=r["constraint"]: r["constraint"] == c, f"tree {r['constraint'].split(':')[0]}")
              for r in given]
    wanted += [("quadsel", _is_auto, "quadsel default build"),
              ("quadsel", lambda r: r["constraint"] == "exact", "quadsel, exact"),
              ("quadtree", lambda r: r["constraint"] == "exact", "paper quadtree, exact"),
              ("quadtree", lambda r: r["constraint"] == reference, f"paper quadtree, {reference}"),
              ("cart", None, "CART, leaf budget of the default build"), ("runlength", None, "run-length table"),
              ("model", None, "analytical model"), ("single", None, "single best method"),
              ("default", None, "library default (measured)")]
    table = []
    for kind, match, name in wanted:
        cells = {}
        for holdout, group in _groups(rows):
            if kind == "cart":
                ref = next((r for r in group if _is_auto(r)), None)
                carts = [r for r in group if r["method"] == "cart" and ref is not None
                         and _budget(r["constraint"]) <= ref["leaves"]]
                row = carts[-1] if carts else None
            else:
                row = next((r for r in group if r["method"] == kind and (match is None or match(r))), None)
            if row is not None:
                cells[holdout] = row
        if cells:
            table.append((name, cells))
    return table


def summary_markdown(rows, reference="max_depth=3"):
    splits = [h for h, _ in _groups(rows)]
    head = ["Decision rule", "Size (all points)"] + ["all points" if h is None else f"held out: {h}" for h in splits]
    lines = ["At a glance — mean penalty % [points with penalty >= 5 % / points scored; unscored points "
             "after a +]:", "",
             "| " + " | ".join(head) + " |", "|---|" + "---:|" * (len(head) - 1)]
    for name, cells in summary_rows(rows, reference):
        size = cells.get(None, {}).get("size")
        values = [f"{_cell(cells[h]['penalty_mean'])} [{cells[h]['points_over_5']}/{cells[h]['points']}"
                  + (f" +{cells[h]['unscored']}" if cells[h].get("unscored") else "") + "]"
                  if h in cells else "-" for h in splits]
        lines.append(f"| {name} | {_cell(size)} | " + " | ".join(values) + " |")
    return "\n".join(lines) + "\n"


def report_markdown(report, title=None, figure_links=()):
    """The Markdown document of a full report: tables, notes, fitted models, links to the figures."""
    dmap = report.dmap
    title = title or (f"{dmap.collective}: {dmap.shape[0]} comm sizes x {dmap.shape[1]} msg sizes, "
                      f"{len(dmap.methods)} methods, {int(dmap.measured.sum())} measured points")
    holdout_text = {h.name: f"held out: {h.name} — {h.describe()}; built on {int((dmap.measured & ~t).sum())} "
                            f"points, scored on the {int(t.sum())} held-out points"
                    for h, t, _, _ in report.holdouts}
    text = to_markdown(report.rows, title, holdout_text)
    if any(r["method"] != "quadtree" for r in report.rows):
        head, _, tables = text.partition("\n\n")
        reference = "max_depth=3" + ("" if report.leaf_rule == "majority" else f",leaf={report.leaf_rule}")
        text = head + "\n\n" + summary_markdown(report.rows, reference) + "\n" + tables
    extra = []
    notes = report.notes + ([PAPER_SET] if _paper_set(report) else [])
    if notes:
        extra += ["", "Notes:", ""] + [f"- {markdown_cell(note)}" for note in notes]
    model = report.model
    if model is not None:
        extra += ["", "Fitted models (all data), T = c + a·L + b·B in µs:", "",
                  "| Method | Family | c µs | a µs | b µs/byte | Points |", "|---|---|---:|---:|---:|---:|"]
        for m in model.models:
            params = ["-", "-", "-"] if m.params is None else [_parameter(value, tiny) for value, tiny in
                                                               zip(m.params, (1e-6, 1e-6, 1e-12))]
            family = m.family + (" (assumed)" if m.assumed else "")
            extra.append(f"| {markdown_cell(m.method.label)} ({markdown_cell(m.name)}) | {family} | " + " | ".join(params)
                         + f" | {m.points} |")
    extra += versus_default_lines(report)
    if figure_links:
        extra += ["", "Figures:", ""] + [f"- [{name}]({link})" for name, link in figure_links]
    return text + ("\n".join(extra) + "\n" if extra else "")


def versus_default(report):
    """The default build's speed-up over the measured library default (evaluate/reconcile.py), or None."""
    from .comparators import choice_on
    from .reconcile import speedup_over_default
    default_build = next((s for s in report.selectors
                          if s.kind == "quadsel" and s.constraint.startswith("max_leaves=auto")), None)
    penalty = default_penalty_grid(report.dmap)
    if default_build is None or penalty is None:
        return None
    return speedup_over_default(report.dmap, choice_on(default_build, report.dmap), penalty)


def versus_default_lines(report):
    from .reconcile import lines
    return lines("the default build", versus_default(report))


def _parameter(value, tiny):
    """A fitted model parameter as printed: below `tiny` (1e-6 µs; 1e-12 µs per byte) it is the
    fit's rounding noise (1e-16 µs), shown as 0."""
    return "0" if abs(value) < tiny else f"{value:.3g}"


def _json_value(value):
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (np.floating,)):
        return None if math.isnan(value) else float(value)
    return value


def to_json(rows, meta=None):
    payload = {"rows": [{k: _json_value(v) for k, v in row.items()} for row in rows]}
    if meta:
        payload.update(meta)
    return json.dumps(payload, indent=1) + "\n"


def to_csv(rows):
    keys = list(ROW_KEYS)
    for row in rows:
        keys += [k for k in row if k not in keys]
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=keys, extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: "" if _json_value(row.get(k)) is None else _json_value(row.get(k)) for k in keys})
    return buffer.getvalue()
