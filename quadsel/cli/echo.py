"""Every line the commands print goes through say(): messages are built from data (method labels, file names,
notes read from files), and no control character of theirs may reach a terminal (docs/conventions.md)."""

import click

from ..errors import visible


def say(message=None, file=None, nl=True, err=False, color=None):
    """click.echo of `message` with its control and format characters but newline and tab shown as "?"."""
    click.echo(None if message is None else visible(message), file=file, nl=nl, err=err, color=color)
