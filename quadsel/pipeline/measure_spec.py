"""A measurement's Spec as the JSON its launched ranks read (pipeline/measure_job.py): what `quadsel measure --np` and
`quadsel tune` hand an MPI job, typed, instead of a command line rebuilt from options.

The file is written by the launching process into a folder of its own and read back by every rank through the
strict JSON parser every input shares; a field it does not know, or a value of the wrong type, is refused in one
line (a rank of another quadsel version, say).
"""

import json
from dataclasses import asdict, fields

from ..errors import QuadselError


def to_json(spec):
    """The Spec as plain JSON values (the job sets common_start itself)."""
    doc = {f.name: getattr(spec, f.name) for f in fields(spec) if f.name != "common_start"}
    doc["rule"] = asdict(spec.rule)
    doc["strategy"] = asdict(spec.strategy) if spec.strategy is not None else None
    doc["budget"] = asdict(spec.budget) if spec.budget is not None else None
    doc["layouts"] = [list(layout) for layout in spec.layouts] if spec.layouts is not None else None
    doc["env_method"] = list(spec.env_method) if spec.env_method is not None else None
    doc["alpha_levels"] = spec.alpha_levels if spec.alpha_levels == "auto" else list(spec.alpha_levels)
    return doc


def dumps(spec):
    return json.dumps(to_json(spec)) + "\n"


def from_json(doc, path="<spec>"):
    """The Spec of a parsed document (QuadselError naming `path` on a field it does not know or cannot build)."""
    from ..layout import Layout
    from ..sampling.adaptive import Strategy
    from ..sampling.budget import Budget
    from ..measure.runner import Spec
    from ..measure.timing import StoppingRule
    known = {f.name for f in fields(Spec)}
    if not isinstance(doc, dict) or set(doc) - known:
        extra = sorted(set(doc) - known) if isinstance(doc, dict) else ["(not an object)"]
        raise QuadselError(f"{path}: not a measurement spec of this quadsel (unknown: {', '.join(extra[:3])})")
    try:
        values = dict(doc)
        values["rule"] = StoppingRule(**doc["rule"])
        values["strategy"] = Strategy(**doc["strategy"]) if doc.get("strategy") is not None else None
        values["budget"] = Budget(**doc["budget"]) if doc.get("budget") is not None else None
        values["layouts"] = [Layout(*lay) for lay in doc["layouts"]] if doc.get("layouts") is not None else None
        values["env_method"] = tuple(doc["env_method"]) if doc.get("env_method") is not None else None
        if doc.get("alpha_levels", "auto") != "auto":
            values["alpha_levels"] = tuple(doc["alpha_levels"])
        return Spec(**values)
    except (TypeError, ValueError, KeyError) as exc:
        raise QuadselError(f"{path}: not a measurement spec of this quadsel ({exc})") from None


def load(path):
    from ..inputs import read_text
    from ..schemas import parse
    return from_json(parse(read_text(path, "metadata"), path), path)
