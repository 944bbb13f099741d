"""Resuming an output with another grid (docs/measure.md, "Output, crash safety and --resume").

A resumed run may give other communicator sizes, message sizes or methods than the runs before it: it measures
what is missing of its own grid and leaves every row there. This is never silent: rank 0 says so in one note,
each run's entry of the metadata records its own grid (`runs[i].grid`), the metadata's `grid` becomes the union
of all of them (what the file holds: `build --model` predicts on it), and `complete` is true only when every
run's grid is measured (a row, or a `# replaced` / `# skipped` line for each of its points). What a time means
must not change within a file: another collective, library, datatype, --timing or --sync is refused (output.py,
metadata.py).
"""

from ..errors import one_line
from ..layout import Layout

RUN_GRID = ("methods", "comm_sizes", "msg_sizes")
_WHAT = {"comm_sizes": "communicator sizes", "msg_sizes": "message sizes", "methods": "methods"}


def difference(recorded, new):
    """'other message sizes (recorded 1,1024; this run 1,4096)' for the grid keys in which `new` differs, or ''."""
    parts = []
    for key in RUN_GRID:
        had, now = (recorded or {}).get(key), (new or {}).get(key)
        if had is not None and now is not None and had != now:
            parts.append(f"other {_WHAT[key]} (recorded {_short(had)}; this run {_short(now)})")
    return " and ".join(parts)


def note(path, recorded, new):
    """The one line a resumed run with another grid prints, or None."""
    diff = difference(recorded, new)
    if not diff:
        return None
    return (f"note: {one_line(path)} was measured with {diff}: this run measures what is missing of its grid and "
            "keeps every row; the metadata records each run's grid, and the union as the file's grid")


def run_grid(grid):
    """A run's own grid: methods, communicator and message sizes, and the layouts of a multi-host run."""
    return {key: list(grid[key]) for key in RUN_GRID + ("layouts",) if isinstance((grid or {}).get(key), list)}


def _keys(collective, grid):
    """Every key of `grid` as the ResultFile holds them (a layout's end in nodes, ppn)."""
    layouts = [Layout.parse(text, "the metadata's grid") for text in grid.get("layouts") or []] or [()]
    for label in grid.get("methods", []):
        algorithm, seg = method_key(label)
        for n in grid.get("comm_sizes", []):
            for layout in layouts:
                if layout and layout[0] * layout[1] != n:
                    continue
                for m in grid.get("msg_sizes", []):
                    yield (collective, algorithm, seg, n, m) + layout


def union(old, new):
    """The file's grid after a run with grid `new` on a file whose grid was `old` (both metadata `grid` objects)."""
    if not isinstance(old, dict) or not old:
        return dict(new)
    out = dict(old, **new)
    for key in ("comm_sizes", "msg_sizes", "segments"):
        if isinstance(old.get(key), list) and isinstance(new.get(key), list):
            out[key] = sorted(set(old[key]) | set(new[key]))
    if isinstance(old.get("methods"), list) and isinstance(new.get("methods"), list):
        out["methods"] = list(old["methods"]) + [m for m in new["methods"] if m not in old["methods"]]
    if isinstance(old.get("algorithms"), dict) and isinstance(new.get("algorithms"), dict):
        out["algorithms"] = dict(old["algorithms"], **new["algorithms"])
    return out


def earlier_grids(old):
    """The grids of the runs before this one (from their metadata `old`): each run's own, or, for the runs of an
    older quadsel that recorded none (it resumed one grid only), the file's."""
    if not isinstance(old, dict):
        return []
    fallback = run_grid(old.get("grid"))
    grids = []
    for entry in old.get("runs") or []:
        grid = run_grid(entry.get("grid")) if isinstance(entry, dict) else {}
        grid = grid if all(key in grid for key in RUN_GRID) else fallback
        if all(key in grid for key in RUN_GRID) and grid not in grids:
            grids.append(grid)
    return grids


def method_key(label):
    """'6/seg8192' -> ('6', 8192); 'default' -> ('default', 0) (decision_map.method_label, read back)."""
    name, sep, seg = str(label).rpartition("/seg")
    return (name, int(seg)) if sep and seg.isdigit() else (str(label), 0)


def covered(collective, grid, results):
    """Is every point of `grid` in the file: a row, a `# replaced` line, or a `# skipped` line (`*` = any value)?
    `results`: the ResultFile (its done, replaced and skipped keys)."""
    patterns = [text.split(",") for text in results.skipped if "*" in text]
    exact = results.skipped | results.replaced
    for key in _keys(collective, grid):
        if key in results.done:
            continue
        cells = [str(v) for v in key]
        if ",".join(cells) in exact or ",".join(cells[:5]) in results.replaced:   # replaced: at every layout
            continue
        if not any(len(p) == len(cells) and all(a in ("*", b) for a, b in zip(p, cells)) for p in patterns):
            return False
    return True


def points(collective, grids, replaced):
    """The points of the union of `grids` (method, comm size, msg size), less the `# replaced` ones."""
    keys = set()
    for grid in grids:
        keys.update(_keys(collective, grid))
    return sum(1 for k in keys if ",".join(map(str, k[:5])) not in replaced and ",".join(map(str, k)) not in replaced)


def complete(collective, this_grid, this_complete, earlier, results):
    """The file's `complete`: this run finished its grid, and every earlier run's grid is measured."""
    return this_complete and all(grid == this_grid or covered(collective, grid, results) for grid in earlier)


def _short(value):
    text = ",".join(map(str, value)) if isinstance(value, list) else str(value)
    return one_line(text, 60)
