"""measure/launch.run launches again, once, when mpiexec failed before starting any rank (LAUNCHER_FLAKE)."""

import os
import stat

import pytest

from quadsel.measure import launch

NOTICE = "The PMIx server's listener thread failed to start. We cannot\ncontinue."


def _fake_launcher(tmp_path, failures, message=NOTICE, status=213):
    """An executable that fails `failures` times (with `message` on stderr and `status`), then prints 'ran'."""
    count = tmp_path / "count"
    count.write_text("0")
    script = tmp_path / "mpiexec"
    script.write_text(f"""#!/bin/sh
n=$(cat {count}); echo $((n + 1)) > {count}
if [ "$n" -lt {failures} ]; then
  printf -- '----\\n%s\\n----\\n' "{message}" >&2
  exit {status}
fi
echo ran
""")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script, count


@pytest.mark.parametrize("capture", [True, False])
def test_a_launcher_flake_is_launched_again_once(tmp_path, capsys, capture):
    script, count = _fake_launcher(tmp_path, failures=1)
    result = launch.run([str(script)], dict(os.environ), timeout=30, capture=capture)
    status = result.returncode if capture else result
    assert status == 0 and count.read_text().strip() == "2"
    if capture:
        assert result.stdout == "ran\n"
    assert "could not start its PMIx server (nothing ran); launching again" in capsys.readouterr().err


@pytest.mark.parametrize("capture", [True, False])
def test_a_second_flake_is_reported_not_retried_forever(tmp_path, capture):
    script, count = _fake_launcher(tmp_path, failures=5)
    result = launch.run([str(script)], dict(os.environ), timeout=30, capture=capture)
    assert (result.returncode if capture else result) == 213 and count.read_text().strip() == "2"


@pytest.mark.parametrize("capture", [True, False])
def test_other_failures_are_not_launched_again(tmp_path, capture):
    script, count = _fake_launcher(tmp_path, failures=1, message="rank 0 aborted", status=1)
    result = launch.run([str(script)], dict(os.environ), timeout=30, capture=capture)
    assert (result.returncode if capture else result) == 1 and count.read_text().strip() == "1"
