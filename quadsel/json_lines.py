"""JSON with line numbers: rules-file readers name file:line, which json.loads cannot tell them."""

import bisect
import json
import re

from .errors import InputError


class JObject:
    """A JSON object with its keys in file order, each with its line (duplicate keys kept)."""

    def __init__(self, line):
        self.line = line
        self.items = []            # [(key, line, value)]

    def get(self, key, default=None):
        for k, _, v in self.items:
            if k == key:
                return v
        return default

    def line_of(self, key):
        for k, line, _ in self.items:
            if k == key:
                return line
        return self.line

    def keys(self):
        return [k for k, _, _ in self.items]


class JArray(list):
    def __init__(self, line):
        super().__init__()
        self.line = line


def _not_json(word):
    """NaN and Infinity: Python's json reads them, JSON (and the libraries' parsers) does not."""
    raise ValueError(f"{word} is not a JSON value")


_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?")
_SPACE = re.compile(r"[ \t\n\r]*")


def parse_json_lines(text, path):
    """Parse JSON keeping every object's key order and line numbers (JObject / JArray / plain scalars)."""
    try:
        json.loads(text, parse_constant=_not_json)
    except ValueError as exc:
        raise InputError(path, getattr(exc, "lineno", None), f"not valid JSON: {getattr(exc, 'msg', exc)}") from None
    except RecursionError:
        raise InputError(path, None, "JSON nested too deeply") from None
    newlines = [i for i, c in enumerate(text) if c == "\n"]
    line_at = lambda pos: bisect.bisect_right(newlines, pos - 1) + 1

    def value(pos):
        pos = _SPACE.match(text, pos).end()
        c = text[pos]
        if c == "{":
            obj, pos = JObject(line_at(pos)), _SPACE.match(text, pos + 1).end()
            if text[pos] == "}":
                return obj, pos + 1
            while True:
                pos = _SPACE.match(text, pos).end()
                key_line = line_at(pos)
                key, pos = json.decoder.scanstring(text, pos + 1)
                pos = _SPACE.match(text, pos).end() + 1          # the ':'
                item, pos = value(pos)
                obj.items.append((key, key_line, item))
                pos = _SPACE.match(text, pos).end()
                if text[pos] == "}":
                    return obj, pos + 1
                pos += 1                                          # the ','
        if c == "[":
            arr, pos = JArray(line_at(pos)), _SPACE.match(text, pos + 1).end()
            if text[pos] == "]":
                return arr, pos + 1
            while True:
                item, pos = value(pos)
                arr.append(item)
                pos = _SPACE.match(text, pos).end()
                if text[pos] == "]":
                    return arr, pos + 1
                pos += 1
        if c == '"':
            return json.decoder.scanstring(text, pos + 1)
        for word, result in (("true", True), ("false", False), ("null", None)):
            if text.startswith(word, pos):
                return result, pos + len(word)
        match = _NUMBER.match(text, pos)
        number = match.group(0)
        return (float(number) if match.group(1) or match.group(2) else int(number)), match.end()

    try:
        return value(0)[0]
    except RecursionError:
        raise InputError(path, None, "JSON nested too deeply") from None
