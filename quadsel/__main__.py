"""`python -m quadsel`: the same as the `quadsel` command."""

from .cli import main

if __name__ == "__main__":
    main(prog_name="quadsel")
