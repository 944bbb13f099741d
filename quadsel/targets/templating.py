"""The Jinja2 environment of the emitters; templates ship inside the package as quadsel.templates."""

import importlib.resources
from pathlib import Path

import jinja2


def _template_dir():
    try:
        return str(importlib.resources.files("quadsel.templates"))
    except ModuleNotFoundError:   # running from a source tree that is not installed
        return str(Path(__file__).resolve().parent.parent / "templates")


_ENV = jinja2.Environment(loader=jinja2.FileSystemLoader(_template_dir()), trim_blocks=True,
                          lstrip_blocks=True, keep_trailing_newline=True, undefined=jinja2.StrictUndefined,
                          autoescape=False)


def render(template, **context):
    return _ENV.get_template(template).render(**context)
