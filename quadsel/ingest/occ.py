"""OCC tables. No public sample of OCC output exists, so this is a layout of quadsel's own (docs/formats-input.md):

    # OCC
    # collective algorithm segsize procs msgsize time_us [stddev_us [reps]]
    bcast binomial 1024 8 65536 152.3 4.1 200
"""

MARKER = "# OCC"


def read(ctx):
    rows, marked = [], False
    for line, text in ctx.numbered():
        if not marked:
            if not text.upper().startswith(MARKER):
                raise ctx.error(line, f"an OCC file starts with a '{MARKER}' line")
            marked = True
            continue
        if text.startswith("#"):
            continue
        cells = text.split()
        if not 6 <= len(cells) <= 8:
            raise ctx.error(line, f"{len(cells)} cells; an OCC row has 6 to 8 (collective algorithm segsize "
                                  "procs msgsize time_us [stddev_us [reps]])")
        collective, algorithm, segsize, procs, msg_size, time, *optional = cells
        rows.append(ctx.measurement(
            line, collective=collective, algorithm=algorithm, segsize=segsize, comm_size=procs,
            msg_size=msg_size, time=time,
            stddev=optional[0] if optional else None, reps=optional[1] if len(optional) > 1 else None))
    return rows
