"""Rules files as the MPI library reads them: what `quadsel verify RULES` measures and proves.

`read_rules_file` detects the format by content and reads it with its target module, which holds the
writer and the reader side by side: ompi_rules.py (Open MPI classic, versions 1 and 2), ompi_json.py
(Open MPI JSON rules, version 3), mpich_json.py (MPICH csel), impi_adjust.py (Intel MPI I_MPI_ADJUST strings)
and impi_json.py (Intel MPI's JSON tuning file). A `RulesFile` answers, per collective,
`pick(comm, msg)` (msg in bytes per rank, converted to what the library matches on: libraries/sizes.py):
the method the library runs there (library_call.Pick), or its own default where it
decides by itself or drops the whole file (`RulesFile.ignored` says why; not an error).

The readers are deliberately separate from tests/library_readers.py, the small independent reader the
emitter tests use as their oracle; the tests compare the two on emitted files.
"""

import re
from dataclasses import dataclass, field
from typing import List, Optional

from ..errors import InputError, QuadselError
from ..inputs import read_text
from ..libraries import COLLECTIVES, mpich, openmpi, sizes
from . import impi_adjust, impi_json, mpich_json, ompi_json, ompi_rules
from ..json_lines import JObject, parse_json_lines
from .library_call import DEFAULT_PICK, CallModel, Pick

VERIFIABLE = COLLECTIVES   # quadsel verify measures every collective quadsel measures


# -- files ------------------------------------------------------------------------------------------------------
FORMAT_NAMES = {"ompi-rules": "Open MPI classic rules", "ompi-json": "Open MPI JSON rules",
                "mpich-json": "MPICH selection JSON", "impi-adjust": "Intel MPI I_MPI_ADJUST strings",
                "impi-json": "Intel MPI JSON tuning file"}


def detect_format(text):
    """'tree', 'ompi-json', 'mpich-json', 'impi-json' (a "coll=Name" key first), 'impi-adjust'
    (I_MPI_ADJUST_<COLL>= lines) or 'ompi-rules' (anything else that is not JSON)."""
    head = text.lstrip()
    if not head.startswith("{"):
        if impi_adjust.looks_like(text):
            return "impi-adjust"
        words = [w for line in text.split("\n") for w in line.split("#", 1)[0].split()][:3]
        from .ompi_han import COLLTYPES
        return "ompi-han" if len(words) > 1 and words[1] in COLLTYPES else "ompi-rules"
    if "quadsel-quadtree" in text[:4096]:
        return "tree"
    if impi_json.looks_like(text):
        return "impi-json"
    if re.search(r'"collectives"\s*:', text) and not re.search(r'"collective\s*=', text):
        return "ompi-json"
    return "mpich-json"


def ompi_major(version_string):
    match = re.search(r"Open MPI v?(\d+)", version_string or "")
    return int(match.group(1)) if match else None


@dataclass
class RulesFile:
    path: str
    format: str                                    # ompi-rules | ompi-json | mpich-json | impi-adjust | impi-json
    library: str                                   # openmpi | mpich | intelmpi
    collectives: List[str]                         # every collective the file has rules for
    ignored: Optional[str] = None                  # why the library drops the whole file ("file:line: ...")
    warnings: List[str] = field(default_factory=list)
    version: int = 0                               # classic: 1 or 2
    matching: str = "5.0"                          # classic: "5.0" or "6" (Open MPI >= 6 reads comm keys as ranges)
    _data: object = None

    def selections(self):
        return [RulesSelection(self, c) for c in self.collectives if c in VERIFIABLE]

    def pick(self, collective, comm_size, msg, call=None):
        """The Pick the library makes for one call (DEFAULT_PICK where it uses its own decision)."""
        if self.ignored:
            return DEFAULT_PICK
        if self.format != "mpich-json":      # msg is bytes per rank: Open MPI matches on its own key (sizes.py)
            call = call or CallModel.of_verify_call(collective, msg)
            key = sizes.library_size(openmpi.NAME, collective, msg, comm_size, call.type_size)
        if self.format == "ompi-rules":
            rule = ompi_rules.lookup(self._data.get(openmpi.COLLECTIVE_IDS[collective], []), comm_size, key, self.matching)
            if rule is None:
                return DEFAULT_PICK
            return ompi_rules.pick(collective, rule.alg, rule.faninout, rule.segsize, rule.maxreq,
                             f"{self.path}:{rule.line}")
        if self.format == "impi-adjust":
            return impi_adjust.pick(self.path, collective, self._data.get(collective, []), comm_size, msg)
        if self.format == "impi-json":
            return impi_json.pick(self.path, collective, self._data.get(collective, []), comm_size, msg)
        if self.format == "ompi-json":
            rule = ompi_json.lookup(self._data.get(collective, []), comm_size, key)
            if rule is None:
                return DEFAULT_PICK
            return ompi_rules.pick(collective, rule.alg, rule.faninout, rule.segsize, rule.reqs, f"{self.path}:{rule.line}")
        call = call or CallModel.of_verify_call(collective, msg)
        found = mpich_json.lookup(self._data, collective, comm_size, msg, call)
        if found is None:
            raise QuadselError(f"{self.path}: no {collective} rule holds for comm size {comm_size}, message size "
                               f"{msg}: MPICH aborts there (add an \"=any\" catch-all)")
        container, params, line = found
        label = mpich_json.label(collective, container)
        if label is None:
            raise QuadselError(f"{self.path}:{line}: {container} is not an MPICH {collective} algorithm quadsel "
                               f"can force (known: {', '.join(mpich.ALGORITHMS.get(collective, []))})")
        return Pick(label, 0, (), f"{self.path}:{line}")

    def container_params(self, collective, comm_size, msg, call=None):
        """MPICH: the parameters the selected container carries (they override MPICH's CVAR defaults)."""
        if self.format != "mpich-json":
            return {}
        found = mpich_json.lookup(self._data, collective, comm_size, msg, call or CallModel.of_verify_call(collective, msg))
        return found[1] if found else {}


class RulesSelection:
    """One collective of a rules file, in the interface quadsel verify uses for trees too."""

    def __init__(self, rules_file, collective):
        self.file = rules_file
        self.collective = collective
        self.path = rules_file.path
        self.comm_sizes = None         # a rules file has no measured grid: --comm-sizes/--msg-sizes or --measurements
        self.msg_sizes = None
        self.has_layout = False        # its layout level, if any, is the library's: verified as the library reads it

    def pick(self, comm_size, msg, call=None):
        return self.file.pick(self.collective, comm_size, msg, call)


def read_rules_file(path, text=None, library_version=None):
    """Read a rules file (format detected from its content) as the library in `library_version` would."""
    if text is None:
        text = read_text(path, what="rules file")   # regular files only, size-limited
    kind = detect_format(text)
    major = ompi_major(library_version)
    if kind == "tree":
        raise InputError(path, None, "a quadsel tree file, not a rules file")
    if kind == "ompi-han":
        raise InputError(path, None, "an Open MPI coll/han rules file: it names components, not algorithms; give the "
                                     "coll/tuned file written with it (-t ompi-rules of the same trees)")
    if kind == "ompi-rules":
        version, collectives, ignored, warnings = ompi_rules.read(text, path)
        out = RulesFile(path, kind, "openmpi", [openmpi.COLLECTIVE_NAMES.get(c, f"collective {c}") for c in collectives],
                        warnings=warnings, version=version, matching="6" if major and major >= 6 else "5.0",
                        _data=collectives)
        if ignored:
            out.ignored = (f"{path}:{ignored[0]}: {ignored[1]}: Open MPI silently ignores this whole file and "
                           f"uses its fixed decisions")
        return out
    if kind == "impi-adjust":
        collectives = impi_adjust.read(text, path)
        return RulesFile(path, kind, "intelmpi", list(collectives), _data=collectives)
    if kind == "impi-json":
        collectives = impi_json.read(text, path)
        return RulesFile(path, kind, "intelmpi", list(collectives), _data=collectives)
    doc = parse_json_lines(text, path)
    if kind == "ompi-json":
        collectives, warnings = ompi_json.read(doc, path)
        out = RulesFile(path, kind, "openmpi", list(collectives), warnings=warnings, _data=collectives)
        if major is not None and major < 6:
            out.ignored = (f"{path}: Open MPI {major}.x reads only the classic rules format, not JSON rules "
                           f"(Open MPI >= 6 / main): it does not use this file (emit -t ompi-rules for it)")
        return out
    warnings = mpich_json.check(doc, path)
    collectives = []

    def collect(node):
        for key, _, child in node.items:
            ckey = key.replace(" ", "")
            if ckey.startswith("collective=") and ckey[len("collective="):] not in collectives:
                collectives.append(ckey[len("collective="):])
            if isinstance(child, JObject) and not ckey.startswith(("algorithm=", "composition=")):
                collect(child)

    collect(doc)
    missing = [c for c in mpich_json.HARNESS_COLLECTIVES if c not in collectives]
    if missing:
        warnings.append(f"{path}: no selection for {', '.join(missing)}: MPICH aborts on the first such call, "
                        f"so a program (and verify's rules check) using them fails (emit with --mpich-base)")
    return RulesFile(path, kind, "mpich", collectives, warnings=warnings, _data=doc)
