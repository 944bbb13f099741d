"""The agent script's ssh-like argument handling, run for real (sh), in its dry-run mode: the command runs here
and the host it would enter is printed on stderr, so these tests need no root. Entering a host for real is in
test_netns_cluster.py."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from quadsel.testbed import remote_command, write_agent
from quadsel.testbed.netns import Host

pytestmark = pytest.mark.skipif(shutil.which("sh") is None, reason="needs a POSIX sh")

HOSTS = [Host(1, "node1", "198.18.0.1", "test-ns-h1", Path("/nonexistent/boot_id.1")),
         Host(2, "node2", "198.18.0.2", "test-ns-h2", Path("/nonexistent/boot_id.2"))]


@pytest.fixture(scope="module")
def agent(tmp_path_factory):
    return str(write_agent(tmp_path_factory.mktemp("agent") / "agent", "test-ns", HOSTS))


def dry(agent, *args, stdin=None):
    env = dict(os.environ, QUADSEL_AGENT_DRY_RUN="1")
    return subprocess.run([agent, *args], capture_output=True, env=env, input=stdin, timeout=30)


def test_is_one_executable_file(agent):
    assert os.access(agent, os.X_OK) and Path(agent).read_text().startswith("#!/bin/sh\n")


@pytest.mark.parametrize("options", [
    [], ["-x"], ["-q", "-x"], ["-qx"], ["-o", "BatchMode=yes"], ["-oBatchMode=yes"], ["-p", "22"], ["-p22"],
    ["-l", "root"], ["-xl", "root"], ["-x", "-o", "StrictHostKeyChecking=no", "-p", "2222", "-i", "/k", "-T"],
    ["-o", "-x"],   # -o's value may itself look like an option
    ["--"], ["-x", "--"],
    ["-Z"],         # an option ssh does not know is skipped too
])
@pytest.mark.parametrize("host, expect", [("198.18.0.2", "node2"), ("node1", "node1"), ("root@node2", "node2")])
def test_leading_ssh_options_are_skipped(agent, options, host, expect):
    result = dry(agent, *options, host, "echo", "ran")
    assert result.returncode == 0, result.stderr
    assert result.stdout == b"ran\n"
    ns = {"node1": "test-ns-h1", "node2": "test-ns-h2"}[expect]
    assert result.stderr.decode().split() == [ns, expect]


def test_words_are_joined_and_given_to_a_shell_as_ssh_does(agent):
    # what launchers rely on: PRRTE sends `VAR=x;export VAR;prted "a;b"`, quoted for the remote shell
    result = dry(agent, "-x", "node1", "A=1;export A;", "printf", "'[%s]'", '"$A"', '"x;y"', "'p  q'")
    assert result.stdout == b"[1][x;y][p  q]"
    # unquoted words are split again by that shell, as over ssh
    assert dry(agent, "node1", "printf", "'[%s]'", "a  b").stdout == b"[a][b]"


# any words, quoted with remote_command, arrive unchanged: spaces, quotes, $, backslashes, newlines, globs
WORDS = st.lists(st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=12),
                 max_size=6)


@settings(max_examples=60, deadline=None)
@given(words=WORDS, options=st.sampled_from([[], ["-x"], ["-q", "-x", "-o", "BatchMode=yes", "-p", "22"]]))
def test_remote_command_preserves_every_word(agent, words, options):
    result = dry(agent, *options, "198.18.0.1", remote_command(["printf", "%s\\0", *words]))
    assert result.returncode == 0, result.stderr
    out = result.stdout.split(b"\0")
    assert out.pop() == b""
    assert [w.decode("utf-8", "surrogateescape") for w in out] == (words or [""])


def test_dash_n_reads_no_stdin(agent):
    assert dry(agent, "node1", "cat", stdin=b"data").stdout == b"data"
    assert dry(agent, "-n", "node1", "cat", stdin=b"data").stdout == b""


@pytest.mark.parametrize("args, message", [
    ([], b"usage:"),
    (["-x"], b"usage:"),
    (["198.18.0.9", "true"], b"198.18.0.9 is not a host of the namespace cluster test-ns"),
    (["node1"], b"no command for node1"),
    (["-p"], b"option -p needs a value"),
])
def test_refusals_exit_255_like_ssh(agent, args, message):
    result = dry(agent, *args)
    assert result.returncode == 255
    assert message in result.stderr


def test_the_exit_status_of_the_command_is_the_agents(agent):
    assert dry(agent, "node2", "exit 7").returncode == 7
