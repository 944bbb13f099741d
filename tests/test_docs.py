"""The docs name every command and option the CLI has."""

from helpers import REPO
from quadsel.cli import main


def test_cli_reference_names_every_command_and_option():
    text = (REPO / "docs" / "cli.md").read_text()
    for name, command in main.commands.items():
        assert f"## quadsel {name}" in text, name
        for param in (p for p in command.params if not getattr(p, "hidden", False)):
            for opt in getattr(param, "opts", []):
                if opt.startswith("-"):
                    assert opt in text, f"{name} {opt} missing from docs/cli.md (python scripts/cli_reference.py > docs/cli.md)"
