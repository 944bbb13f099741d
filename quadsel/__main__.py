"""`python -m quadsel`: the same as the `quadsel` command."""

from .entry import main

if __name__ == "__main__":
    main()
