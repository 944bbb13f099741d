"""Every JSON input read through one checked path: strict JSON, then its JSON Schema (docs/schemas/, documented in
docs/formats-input.md, "JSON inputs and their schemas"), then one line naming the file and the line on any fault.

    doc = load_json(path, "trace")          # the file's text, parsed and checked whole
    doc = check_json(text, path, "metadata")  # text already read (a `# quadsel-meta:` line, a journal line)

Strict JSON: NaN, Infinity and numbers beyond a double (1e400) are refused (Python's json would read them and
write them back as invalid JSON); a key written twice in one object is refused; nesting too deep is refused. The schemas use JSON Schema 2020-12 with two
differences, both stricter: "integer" means a JSON number written without a fraction or exponent (1.0 and true
are not integers), and the keyword `x-finite-numbers: true` on an array says that it holds finite numbers only,
or arrays of them (checked in one pass: a trace holds millions of them, which jsonschema checks item by item
at about 100,000 a second). Cross-field rules a schema cannot state (a trace's rows have comm_size entries)
stay in the readers, after this check.
"""

import functools
import json
import math
import re
from pathlib import Path

from .errors import InputError, one_line
from .inputs import read_text, shorten

KINDS = {
    # kind: (schema file, what read_text calls the file: its size limit, docs/formats-input.md "Limits")
    "trace": ("trace.schema.json", "trace"),
    "verify-result": ("verify-result.schema.json", "verify result"),
    "mpich-base": ("mpich-base.schema.json", "MPICH library"),
    "metadata": ("metadata.schema.json", "metadata"),
    "rounds-journal": ("rounds-journal.schema.json", "rounds journal"),   # one line of it (measure/journal.py)
    "tune-journal": ("tune-journal.schema.json", "tune journal"),         # DIR/tune.json (tune/folder.py)
    "tree": ("tree.schema.json", "tree file"),
    "verify-decision": ("verify-decision.schema.json", "verify result"),   # what tune reads of its own results         # a tree file of either shape (decision/tree_file.py)
}


def schema_dir():
    """quadsel/schema_files in an installed wheel, else docs/schemas of the source tree this package is in."""
    package = Path(__file__).resolve().parent
    for folder in (package / "schema_files", package.parent / "docs" / "schemas"):
        if (folder / "trace.schema.json").is_file():
            return folder
    import importlib.resources
    return Path(str(importlib.resources.files("quadsel.schema_files")))


@functools.lru_cache(maxsize=None)
def schema(kind):
    return json.loads((schema_dir() / KINDS[kind][0]).read_text(encoding="utf-8"))


@functools.lru_cache(maxsize=None)
def _validator(kind):
    import jsonschema
    from jsonschema import validators
    base = jsonschema.Draft202012Validator
    checker = base.TYPE_CHECKER.redefine_many({
        "integer": lambda _, v: isinstance(v, int) and not isinstance(v, bool),
        "number": lambda _, v: isinstance(v, (int, float)) and not isinstance(v, bool),
    })

    def finite_numbers(validator, wanted, instance, schema_):
        if wanted and isinstance(instance, list):
            bad = _first_not_finite(instance)
            if bad is not None:
                yield jsonschema.ValidationError("not a finite number", path=bad, validator="x-finite-numbers")

    cls = validators.extend(base, {"x-finite-numbers": finite_numbers}, type_checker=checker)
    return cls(schema(kind))


def _first_not_finite(values):
    """The index path of the first item that is not a finite number (nested lists allowed), else None."""
    for i, v in enumerate(values):
        if type(v) is float:
            if v - v != 0.0:          # inf and nan
                return [i]
        elif type(v) is int:
            continue
        elif isinstance(v, list):
            inner = _first_not_finite(v)
            if inner is not None:
                return [i] + inner
        else:
            return [i]
    return None


# -- strict JSON ---------------------------------------------------------------------------------------------
class _Refused(ValueError):
    def __init__(self, token, why, nth=1):
        super().__init__(why)
        self.token, self.nth = token, nth


def _constant(word):
    raise _Refused(word, f"{word} is not a JSON value")


def _float(text):
    value = float(text)
    if not math.isfinite(value):
        raise _Refused(text, f"the number {shorten(text)} is beyond a double")
    return value


def _object(pairs):
    """An object whose keys are all distinct: a key written twice is refused (Python's json keeps the last one
    silently, other readers the first: which one the author meant cannot be known)."""
    doc = dict(pairs)
    if len(doc) != len(pairs):
        seen = set()
        for key, _ in pairs:
            if key in seen:
                raise _Refused(json.dumps(key), f"the key {json.dumps(one_line(key, 60))} stands twice in one object",
                               nth=2)
            seen.add(key)
    return doc


def _int(text):
    if len(text.lstrip("-")) > 4300:     # Python refuses longer ones; far beyond every limit anyway
        raise _Refused(text, f"a number of {len(text)} digits")
    return int(text)


def _line_of(text, token, nth=1):
    """The line of the nth place `token` stands (approximate: a string may hold it too; a key repeated in
    several objects is found at its first repetition)."""
    pos = -1
    for count, match in enumerate(re.finditer(re.escape(token), text), 1):
        pos = match.start()
        if count >= nth:
            break
    return text.count("\n", 0, pos) + 1 if pos >= 0 else None


def parse(text, path):
    """Strict JSON (no NaN, Infinity or numbers beyond a double); InputError naming the file and line."""
    try:
        return json.loads(text, parse_constant=_constant, parse_float=_float, parse_int=_int,
                          object_pairs_hook=_object)
    except _Refused as exc:
        raise InputError(path, _line_of(text, exc.token, exc.nth), f"not valid JSON: {exc}") from None
    except RecursionError:
        raise InputError(path, None, "not valid JSON: nested too deeply") from None
    except ValueError as exc:
        raise InputError(path, getattr(exc, "lineno", None), f"not valid JSON: {getattr(exc, 'msg', exc)}") from None


# -- schema errors as one line ---------------------------------------------------------------------------------
def where(path_items):
    """A JSON path as the docs write it: points[3].msg_size."""
    out = ""
    for item in path_items:
        out += f"[{item}]" if isinstance(item, int) else (f".{item}" if out else str(item))
    return one_line(out, 200) or "the document"


def _shown(value):
    if isinstance(value, (dict, list)):
        return "an object" if isinstance(value, dict) else "an array"
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, str):
        return repr(shorten(one_line(value, 80), 60))
    return shorten(value)


_TYPES = {"integer": "an integer", "number": "a number", "string": "a string", "object": "an object",
          "array": "an array", "boolean": "true or false", "null": "null"}


def explain(error):
    """One short line for a jsonschema ValidationError (never the instance itself: it can be megabytes)."""
    v, value, expected = error.validator, error.instance, error.validator_value
    if "propertyNames" in error.absolute_schema_path and v == "pattern":
        return f"the key {_shown(value)} is not of the form {expected}"
    if v == "type":
        kinds = expected if isinstance(expected, list) else [expected]
        return f"{_shown(value)} is not {' or '.join(_TYPES.get(k, k) for k in kinds)}"
    if v == "required":
        missing = [k for k in expected if isinstance(value, dict) and k not in value]
        return f"\"{one_line(missing[0] if missing else expected[0], 80)}\" is missing"
    if v in ("minimum", "exclusiveMinimum"):
        return f"{_shown(value)} is below {'or at ' if v == 'exclusiveMinimum' else ''}the minimum {expected}"
    if v in ("maximum", "exclusiveMaximum"):
        return f"{_shown(value)} is beyond {expected}"
    if v in ("enum", "const"):
        options = expected if v == "enum" else [expected]
        return f"{_shown(value)} is not {' or '.join(json.dumps(o) for o in options[:8])}"
    if v == "minItems":
        return f"{len(value)} items, at least {expected} needed"
    if v == "maxItems":
        return f"{len(value)} items, at most {expected} allowed"
    if v == "minLength":
        return "an empty string" if expected == 1 else f"shorter than {expected} characters"
    if v == "maxLength":
        return f"a string of {len(value)} characters, at most {expected} allowed"
    if v == "pattern":
        return f"{_shown(value)} is not of the form {expected}"
    if v == "propertyNames":
        return f"the key {_shown(value)} is not of the form {expected.get('pattern', expected)}"
    if v == "additionalProperties":
        extra = [k for k in value if k not in error.schema.get("properties", {})] if isinstance(value, dict) else []
        return f"unknown key {_shown(extra[0]) if extra else ''}".rstrip()
    if v == "uniqueItems":
        return "an item is repeated"
    if v == "x-finite-numbers":
        return "not a finite number"
    if v in ("oneOf", "anyOf"):
        return "not one of the allowed forms"
    return one_line(error.message, 200)


def _line_at(text, path, items):
    """The line of the value at JSON path `items` (parsed again, with lines, only when an error is reported)."""
    from .json_lines import JObject, parse_json_lines
    try:
        node = parse_json_lines(text, path)
    except InputError:
        return None
    line = getattr(node, "line", 1)
    for item in items:
        if isinstance(node, JObject) and isinstance(item, str):
            line, node = node.line_of(item), node.get(item)
        elif isinstance(node, list) and isinstance(item, int) and 0 <= item < len(node):
            node = node[item]
            line = getattr(node, "line", line)
        else:
            break
    return line


def check_json(text, path, kind, line=None):
    """`text` parsed and checked against the schema of `kind`; InputError "FILE:LINE: WHERE: what" otherwise.
    `line`: the line `text` stands on in its file (a journal line; 0: a line not known, a `# quadsel-meta:`
    comment of a file read as columns)."""
    doc = parse(text, path) if line is None else _parse_at(text, path, line)
    return check_doc(doc, path, kind, text=text, line=line)


def _parse_at(text, path, line):
    try:
        return parse(text, path)
    except InputError as exc:
        raise InputError(path, line, exc.message) from None


def check_doc(doc, path, kind, text=None, line=None):
    """`doc` (already parsed) checked against the schema of `kind`."""
    validator = _validator(kind)
    if validator.is_valid(doc):
        return doc
    from jsonschema.exceptions import best_match
    error = best_match(validator.iter_errors(doc))
    items = list(error.absolute_path)
    if line is None and text is not None:
        line = _line_at(text, path, items)
    raise InputError(path, line, f"{where(items)}: {explain(error)} ({KINDS[kind][0]})")


def load_json(path, kind, limit=None):
    """The JSON file at `path` (a regular file within its size limit), parsed strictly and checked whole."""
    text = read_text(path, what=KINDS[kind][1], limit=limit)
    return check_json(text, path, kind)
