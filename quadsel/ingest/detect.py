"""Tell a measurement file's format from its content (never from its name)."""

import re

from ..errors import InputError
from .common import first_lines, read_content, text_lines

# Markers may follow a preamble (IMB's banner, mpirun warnings), so the first one found decides.
_MARKERS = (
    ("skampi", re.compile(r'^#?\s*begin\s+result\s+"')),
    ("osu", re.compile(r"^#\s*OSU MPI", re.IGNORECASE)),
    ("imb", re.compile(r"^#\s*Benchmarking\s")),
    ("detail", re.compile(r"^#N(?:nodes|ranks)\b", re.IGNORECASE)),
)


def detect_format(path, lines=None, text=None):
    """"csv", "skampi", "osu", "imb", "detail" or "occ"; InputError when the content matches none. `text`: the
    file's text, when its lines have not been split yet."""
    if lines is None:
        text = read_content(path) if text is None else text
        if "#" not in text and "begin" not in text:     # no line can hold a marker: the first line decides
            first_row = next((line.strip() for _, _, line in first_lines(text) if line.strip()), None)
            return _csv_or_error(path, first_row)
        lines = text_lines(text)
    content = [text.strip() for text in lines if text.strip()]
    if content and content[0].upper().startswith("# OCC"):
        return "occ"
    for text in content:
        if not text.startswith(("#", "begin")):     # where every marker starts
            continue
        for fmt, marker in _MARKERS:
            if marker.match(text):
                return fmt
    return _csv_or_error(path, next((text for text in content if not text.startswith("#")), None))


def _csv_or_error(path, first_row):
    if first_row is not None and "," in first_row:
        return "csv"
    raise InputError(path, None, "cannot tell the format (not CSV, SKaMPI, OSU, IMB, detail.out or OCC); "
                                 "give --input-format")
