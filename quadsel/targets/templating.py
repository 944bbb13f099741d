"""The Jinja2 environment of the emitters; templates ship inside the package as quadsel.templates."""

import importlib.resources
from pathlib import Path

import jinja2


def _template_dir():
    """quadsel/templates in an installed wheel, else templates/ of the source tree this package is in.

    Looked up beside this file rather than through the import system, so that a second work tree on
    PYTHONPATH uses its own templates even when another checkout is installed in editable mode.
    """
    package = Path(__file__).resolve().parent.parent
    for folder in (package / "templates", package.parent / "templates"):
        if (folder / "c_decision.c.j2").is_file():
            return str(folder)
    return str(importlib.resources.files("quadsel.templates"))


_ENV = jinja2.Environment(loader=jinja2.FileSystemLoader(_template_dir()), trim_blocks=True,
                          lstrip_blocks=True, keep_trailing_newline=True, undefined=jinja2.StrictUndefined,
                          autoescape=False)


def render(template, **context):
    return _ENV.get_template(template).render(**context)


def template_text(name):
    """A template file as it is (the static C sources shipped beside the Jinja templates)."""
    return (Path(_template_dir()) / name).read_text(encoding="utf-8")
