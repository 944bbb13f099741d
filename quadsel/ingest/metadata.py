"""The metadata `quadsel measure` writes beside a measured CSV (`NAME.meta.json`, docs/formats-input.md) or into a
streamed one (`# quadsel-meta:` lines), read back: where it is, the whole of it for a resumed run, the grid it
records (`build --model`), whether a file was measured by quadsel. The library it names is read by identity.py."""

import os

from ..errors import InputError
from ..inputs import read_text
from ..output import is_stream
from .table import META_COMMENT


def meta_path(path):
    """`out/ompi5-bcast.csv` -> `out/ompi5-bcast.meta.json` (where `quadsel measure` puts it)."""
    path = os.fspath(path)
    base = path[:-4] if path.lower().endswith(".csv") else path
    return base + ".meta.json"


def load_meta(path, text=None, line=None, what="metadata"):
    """A metadata object (a `.meta.json` file at `path`, or `text` on `line` of a streamed CSV), read through
    the one checked path of JSON inputs: strict JSON and docs/schemas/metadata.schema.json (quadsel/schemas.py).
    InputError (FILE:LINE: what) otherwise."""
    from ..schemas import check_json
    if text is None:
        text = read_text(path, what=what)
    return check_json(text, path, "metadata", line=line)


def read_meta(path):
    """The metadata beside a CSV being resumed (None: a stream, or no metadata yet)."""
    if is_stream(path) or not os.path.exists(meta_path(path)):
        return None
    try:
        return load_meta(meta_path(path), what="measure output")   # its own: measure replaces it (quadsel.inputs)
    except InputError as exc:
        raise InputError(exc.path, exc.line, f"{exc.message}; remove it or use --no-resume") from None


def recorded_grid(path):
    """The `grid` of the metadata beside a measured CSV ({} when there is none); damaged metadata is refused
    (InputError naming its file and line): `build --model` would otherwise predict on another grid."""
    meta = load_meta(meta_path(path)) if not is_stream(path) and os.path.exists(meta_path(path)) else {}
    grid = meta.get("grid") or {}
    out = {}
    for key in ("comm_sizes", "msg_sizes"):
        values = grid.get(key)
        if values:
            out[key] = sorted(set(values))
    return out


def measured_by_quadsel(path):
    """Does metadata of `quadsel measure` stand beside the file (or in it, for a streamed run)?"""
    if os.path.exists(meta_path(path)):
        return True
    marker, block = b"\n" + META_COMMENT.encode(), 1 << 20
    try:
        with open(path, "rb") as handle:        # a line that starts with the marker, read a block at a time
            data = handle.read(block)
            if data.startswith(marker[1:]):
                return True
            while data:
                if marker in data:
                    return True
                more = handle.read(block)
                data = data[-len(marker) + 1:] + more if more else b""
            return False
    except OSError:
        return False
