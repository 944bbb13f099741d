"""`# replaced` lines of `quadsel measure` CSVs: points where the library runs another algorithm than the
forced one (quadsel/libraries/fallbacks.py). They carry no time, so the decision map never credits the
forced algorithm there; `build` and `report` say where it happened."""

import os

PREFIX = "# replaced "


def replaced_points(paths, collective=None):
    """[(collective, algorithm, segsize, comm_size, msg_size, runs)] of every `# replaced` line in `paths`
    (files that cannot be read as text are skipped: their reader reports them)."""
    out = []
    for path in paths:
        if not os.path.isfile(path):
            continue
        try:
            with open(path, encoding="utf-8", errors="replace") as handle:
                lines = [line for line in handle if line.startswith(PREFIX)]
        except OSError:
            continue
        for line in lines:
            parts = line[len(PREFIX):].split(" ", 2)
            key = parts[0].split(",")
            if len(key) != 5 or len(parts) < 2 or parts[1] != "runs" or not all(k.isdigit() for k in key[2:]):
                continue
            runs = line[len(PREFIX):].split(" ", 3)[2].rstrip(":") if len(parts) > 2 else "?"
            if collective is None or key[0] == collective:
                out.append((key[0], key[1], int(key[2]), int(key[3]), int(key[4]), runs))
    return out


def replaced_note(paths, collective=None, show=6):
    """One line for stderr / the report's notes, or None when no point was replaced."""
    points = replaced_points(paths, collective)
    if not points:
        return None
    shown = "; ".join(f"{c} {a}{f'/seg{s}' if s else ''} at comm {n} msg {m} runs {r}"
                      for c, a, s, n, m, r in points[:show])
    more = f"; and {len(points) - show} more" if len(points) > show else ""
    return (f"{len(points)} point(s) where the library replaces the forced algorithm were not timed and are never "
            f"credited to it (docs/collectives.md): {shown}{more}")
