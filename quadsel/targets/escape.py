"""Text from input files made safe for generated code: C comments and C identifiers."""

import re

from ..errors import printable

C_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
C_KEYWORDS = frozenset("auto break case char const continue default do double else enum extern float for goto if "
                       "inline int long register restrict return short signed sizeof static struct switch typedef "
                       "union unsigned void volatile while _Bool _Complex _Imaginary".split())


def comment_text(text):
    """Text safe inside a C block comment: printable ASCII only, no comment terminator."""
    return printable(text).replace("*/", "* /").replace("/*", "/ *")


def identifier_part(text):
    """An upper-case C identifier fragment from an arbitrary algorithm name."""
    part = re.sub(r"[^A-Za-z0-9]+", "_", str(text)).strip("_").upper()
    return part or "ALG"
