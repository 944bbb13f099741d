"""Write docs/cli.md from the commands' own --help texts (run after changing any option).

usage: python scripts/cli_reference.py > docs/cli.md
"""

import click

from quadsel.cli import main

INTRO = """# CLI reference

`quadsel` is one Click group; every command has `--help` (`-h`). This page is generated from those help
texts by `python scripts/cli_reference.py > docs/cli.md` (a test checks that it names every option).

Conventions shared by all commands:

* Output paths ([conventions.md](conventions.md) has the whole table): `-o -` writes to stdout; a regular
  file is replaced atomically and keeps its mode (a new one gets the umask's: 0644 under 022); a symbolic
  link is followed and its target written; a FIFO, a device or `/dev/stdout` is written directly, never
  replaced; a missing folder or an unwritable path is one line, exit 2 (no folder is created), checked
  before any work. `quadsel measure -o -` streams its CSV with the metadata as `# quadsel-meta:` comment
  lines (no resume).
* Inputs must be regular files below a size limit; numbers beyond what the pipeline holds are refused
  where they are read (formats-input.md, "Limits").
* Bad input (a malformed file, an impossible option value, unusable data, an unusable output path) prints
  **one line** `Error: FILE:LINE: message` (or `Error: message`) on stderr and exits with status **2**; no
  traceback, no file written. Click's own usage errors (unknown option, missing argument) also exit 2.
* Ctrl-C: `measure` keeps every finished row and says how to resume, the others write nothing; one line,
  exit status 130.
* Measurement-reading commands (`build`, `report`) accept several files at once, in any mix of formats
  (`--input-format auto` detects each by content; see formats-input.md).
* Sizes accept binary suffixes where noted: `4K` = 4096, `1M` = 1048576.
"""


def main_reference():
    ctx = click.Context(main, info_name="quadsel", terminal_width=100, max_content_width=100)
    parts = [INTRO, "## quadsel", "", "```", main.get_help(ctx), "```", ""]
    for name in sorted(main.commands):
        command = main.commands[name]
        sub = click.Context(command, info_name=name, parent=ctx, terminal_width=100, max_content_width=100)
        parts += [f"## quadsel {name}", "", "```", command.get_help(sub), "```", ""]
    return "\n".join(parts)


if __name__ == "__main__":
    print(main_reference())
