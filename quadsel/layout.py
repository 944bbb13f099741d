"""The layout of a communicator: nodes x ranks per node (ppn), one value parsed once at the edge.

One syntax everywhere a person writes a layout (--layout, --layouts, a metadata grid, verify's results):
`NODESxPPN`, two positive integers joined by `x` or `X`, e.g. `4x8` (docs/conventions.md, "Layouts"). A layout
is a tuple (nodes, ppn), so it compares and unpacks as one; `str()` writes it back in the same syntax.
"""

import re
from typing import NamedTuple

from .errors import QuadselError
from .inputs import INT_MAX

SYNTAX = re.compile(r"^\s*([0-9]{1,10})\s*[xX]\s*([0-9]{1,10})\s*$")


class Layout(NamedTuple):
    nodes: int
    ppn: int

    @property
    def comm_size(self):
        return self.nodes * self.ppn

    def __str__(self):
        return f"{self.nodes}x{self.ppn}"

    @classmethod
    def parse(cls, text, where="--layout"):
        """The Layout `text` writes (QuadselError naming `where` otherwise): both numbers at least 1, their product
        a C int (a communicator size)."""
        match = SYNTAX.match(str(text))
        if match:
            layout = cls(int(match.group(1)), int(match.group(2)))
            if layout.nodes >= 1 and layout.ppn >= 1 and layout.comm_size <= INT_MAX:
                return layout
        shown = str(text).strip()[:40]
        raise QuadselError(f"{where}: {shown!r} is not NODESxPPN such as 4x8 (nodes x ranks per node, both at least "
                           f"1, their product at most {INT_MAX})")

    @classmethod
    def match(cls, text):
        """The Layout of `text`, or None when it is not written as one."""
        try:
            return cls.parse(text)
        except QuadselError:
            return None


def parse_layouts(text, where="--layouts"):
    """'2x1,1x2,2x2' -> [Layout(2, 1), Layout(1, 2), Layout(2, 2)] (order kept, duplicates dropped); a layout of
    one rank is refused (a collective needs 2 or more)."""
    out = []
    for item in str(text).split(","):
        if not item.strip():
            continue
        layout = Layout.parse(item, where)
        if layout.comm_size < 2:
            raise QuadselError(f"{where}: {item.strip()} is one rank: a collective needs 2 or more")
        if layout not in out:
            out.append(layout)
    if not out:
        raise QuadselError(f"{where}: empty list")
    return out
