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
