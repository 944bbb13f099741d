"""The `breakdown` command: per-rank tables, side-by-side comparison and timemap of trace files."""

import json

import click

from .echo import say
from .types import FloatRange
from ..errors import missing_extra
from .options import require_matplotlib
from ..output import check as check_output, write_text
from .group import main


@main.command()
@click.argument("traces", metavar="TRACE...", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("--format", "fmt", type=click.Choice(["text", "markdown"]), default="text", show_default=True,
              help="Table format.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of the tables.")
@click.option("--select", metavar="LIST", default=None,
              help="Comma list of configurations to keep: their index (0, 1, …, in file order) or label.")
@click.option("--tolerance", type=FloatRange(0, 1), default=0.10, show_default=True,
              help="Ranks (and subtrees) are alike when their mean waits and transfer differ by at most this "
                   "share of the mean span (or twice their CI half-width, if larger).")
@click.option("--timemap", "timemap_path", type=click.Path(dir_okay=False), metavar="PNG",
              help="Also draw the timemap (one panel per configuration, side by side; needs quadsel[figures]).")
@click.option("-o", "--output", default="-", show_default=True, type=click.Path(), metavar="FILE",
              help="File to write (- for stdout).")
def breakdown(traces, fmt, as_json, select, tolerance, timemap_path, output):
    """Per-rank breakdown of TRACE files written by `quadsel trace`.

    For every traced configuration (algorithm x message size, in every file): per rank the time inside the
    call, the arrival wait (last arrival - own), the wait for the ranks it depends on in the algorithm's tree,
    the transfer after that, the departure wait (own exit - first exit), its tree position and how often it
    is on the critical path; ranks and subtrees that behave alike; the cost of tracing. Configurations of
    one message size (two algorithms in one file, or two files traced with other --map-by) are put side by
    side. docs/trace.md defines every column.
    """
    from ..trace.breakdown_report import analyses, as_json as to_json, render
    from ..trace.trace_file import load_trace
    check_output(output, inputs=traces)
    if timemap_path:
        check_output(timemap_path, inputs=traces)
        require_matplotlib("--timemap")
    named = [(path, load_trace(path)) for path in traces]
    chosen = [s.strip() for s in select.split(",") if s.strip()] if select else None
    results = analyses(named, chosen, tolerance)
    if timemap_path:
        try:
            from ..trace.timemap import write_timemap
        except ImportError:
            raise missing_extra("--timemap", "matplotlib", "figures") from None
        write_timemap(results, timemap_path)
        say(f"wrote {timemap_path}", err=True)
    write_text(output, json.dumps(to_json(results), indent=1) + "\n" if as_json else render(results, fmt) + "\n")
