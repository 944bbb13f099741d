"""Issue 39's "done when" table from benchmarks/selection_cart.py's figures ({case: {split: {selector: (mean,
max, leaves)}}}). Held-out rows use the four parity splits (msg-odd/even, comm-odd/even); the edge splits
(the outside-range question) have a table of their own."""

import math

HELD_OUT = ("msg-odd", "msg-even", "comm-odd", "comm-even")
REFS = ("floor", "floor + default", "default")
ORFEO = (("orfeo-bcast", "msg"), ("orfeo-bcast", "comm"), ("orfeo-reduce", "msg"), ("orfeo-reduce", "comm"))


def _mean(results, split, name):
    return results.get(split, {}).get(name, (math.nan,))[0]


def _held(everything):
    """[(case, split, {selector: mean})] of every held-out parity split."""
    return [(case, split, {n: v[0] for n, v in row.items()})
            for case, splits in everything.items() for split, row in splits.items() if split in HELD_OUT]


def done_when(everything):
    out = ["", "#### Done when (issue 39)", "", "| goal | now |", "|---|---|"]
    cases = list(everything)
    if any("quadsel exact" in s.get("all", {}) for s in everything.values()):
        exact = [(c, _mean(everything[c], "all", "quadsel exact")) for c in cases]
        bad = [f"{c} {v:.2f} %" for c, v in exact if not v <= 0.005]
        out.append(f"| exact trees 0 % on the measured points | {len(exact) - len(bad)} of {len(exact)}"
                   + (f"; not: {', '.join(bad)}" if bad else "") + " |")
    if any("quadsel 16 leaves" in s.get("all", {}) for s in everything.values()):
        gaps = [(c, _mean(everything[c], "all", "quadsel 16 leaves"), _mean(everything[c], "all", "CART-16"))
                for c in cases]
        bad = [f"{c} {q:.2f} against {r:.2f}" for c, q, r in gaps if not q <= r + 0.25]
        out.append(f"| `--max-leaves 16` within 0.25 pp of CART-16, all points | {len(gaps) - len(bad)} of {len(gaps)}"
                   + (f"; not: {'; '.join(bad)}" if bad else "") + " |")
    held = [h for h in _held(everything) if "quadsel default build" in h[2]]
    if held:
        bad = [f"{c} {s} {v['quadsel default build']:.2f} against {v['CART-16']:.2f}" for c, s, v in held
               if not v["quadsel default build"] <= v["CART-16"] + 0.5]
        out.append(f"| held out, default build within 0.5 pp of CART-16 | {len(held) - len(bad)} of {len(held)} "
                   f"splits" + (f"; not: {'; '.join(bad)}" if bad else "") + " |")
        q = sum(v["quadsel default build"] for _, _, v in held) / len(held)
        r = sum(v["CART-16"] for _, _, v in held) / len(held)
        out.append(f"| held out, mean <= 0.8 x CART-16's | {q:.2f} % against {r:.2f} % ({q / r:.2f} x) |")
        bad = [f"{c} {s} {v['quadsel default build']:.2f} against {v['default']:.2f}" for c, s, v in held
               if not v["quadsel default build"] <= v["default"] + 1.0]
        out.append(f"| held out, never > 1 pp worse than the default alone | {len(held) - len(bad)} of {len(held)}"
                   + (f"; not: {'; '.join(bad)}" if bad else "") + " |")
    for label, parities in (("odd positions held out, the issue's convention", ("odd",)),
                            ("both parities' mean", ("odd", "even"))):
        four = []
        for case, axis in ORFEO:
            both = [everything.get(case, {}).get(f"{axis}-{p}") for p in parities]
            if not all(both) or "quadsel default build" not in both[0]:
                continue
            value = lambda n: sum(r[n][0] for r in both) / len(both)  # noqa: E731
            four.append((f"{case[6:]} {axis}", value("quadsel default build"), min(value(n) for n in REFS)))
        if len(four) == 4:
            mean = sum(q for _, q, _ in four) / 4
            met = sum(q <= r + 1e-9 for _, q, r in four)
            cells = "; ".join(f"{n} {q:.2f} (best ref {r:.2f})" for n, q, r in four)
            out.append(f"| the 4 ORFEO held-out cases ({label}): mean <= 6.0 %, each <= its best reference | "
                       f"mean {mean:.2f} %, {met} of 4 at most their best reference: {cells} |")
    out += edge_table(everything)
    return "\n".join(out)


def edge_table(everything):
    """The outside-range question: the edge sizes held out, what each choice costs there."""
    names = ("quadsel default build", "quadsel extrapolate", "CART-16", "floor + default", "default")
    rows = [(c, s, r) for c, splits in everything.items() for s, r in splits.items() if s.endswith("-edge")]
    if not rows:
        return []
    out = ["", "Edge sizes held out (trained on the inner sizes): mean penalty %", "",
           "| case | split | " + " | ".join(names) + " |", "|---|---|" + "---:|" * len(names)]
    for case, split, row in rows:
        out.append(f"| {case} | {split} | " + " | ".join(f"{row.get(n, (math.nan,))[0]:.2f}" for n in names) + " |")
    means = [sum(r.get(n, (math.nan,))[0] for _, _, r in rows) / len(rows) for n in names]
    out.append("| mean | | " + " | ".join(f"{m:.2f}" for m in means) + " |")
    return out
