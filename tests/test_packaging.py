"""A non-editable install must carry the templates: build the wheel and look inside."""

import subprocess
import sys
import zipfile

from helpers import REPO


def test_wheel_ships_every_template(tmp_path):
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w",
                    str(tmp_path), str(REPO)], check=True, capture_output=True)
    wheel = next(tmp_path.glob("quadsel-*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    templates = sorted(p.name for p in (REPO / "templates").iterdir() if p.suffix in (".j2", ".h", ".c"))
    assert templates
    for name in templates:
        assert f"quadsel/templates/{name}" in names
    assert "quadsel/cli/__init__.py" in names
    schemas = sorted(p.name for p in (REPO / "docs" / "schemas").glob("*.schema.json"))
    assert schemas and all(f"quadsel/schema_files/{name}" in names for name in schemas)   # quadsel/schemas.py


def test_every_subpackage_is_listed_in_pyproject():
    """A package missing from [tool.setuptools] packages is missing from the wheel (quadsel.models once was)."""
    import pytest
    tomllib = pytest.importorskip("tomllib")      # Python 3.11+
    listed = set(tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {"quadsel." + p.parent.name for p in (REPO / "quadsel").glob("*/__init__.py")} | {"quadsel"}
    assert found <= listed, sorted(found - listed)


def test_the_quadsel_command_is_bin_quadsel_with_every_line_inside_a_handler():
    """pip's generated wrapper for [project.scripts] imports re and quadsel outside any handler: a Ctrl-C there was
    a traceback (issue 41). bin/quadsel is installed as it is (script-files) and tries everything."""
    import ast
    import pytest
    tomllib = pytest.importorskip("tomllib")
    project = tomllib.loads((REPO / "pyproject.toml").read_text())
    assert "scripts" not in project["project"]
    assert project["tool"]["setuptools"]["script-files"] == ["bin/quadsel"]
    body = ast.parse((REPO / "bin" / "quadsel").read_text()).body
    assert isinstance(body[0], ast.Try) and all(isinstance(n, (ast.Try, ast.Expr)) for n in body)
    assert [h.type.id for h in body[0].handlers] == ["KeyboardInterrupt"]
