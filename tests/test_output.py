"""Output paths (quadsel/output.py): files replaced atomically with their mode kept, symlinks followed,
FIFOs and descriptors written in place, missing folders refused. Everything in tmp_path: never a real device."""

import os
import stat
import subprocess
import sys
import threading

import pytest

from quadsel.errors import QuadselError
from quadsel.output import is_stream, resolve, write_text


@pytest.fixture
def umask_022():
    old = os.umask(0o022)
    yield
    os.umask(old)


def _mode(path):
    return stat.S_IMODE(os.stat(path).st_mode)


def test_new_file_gets_the_umask_mode(tmp_path, umask_022):
    write_text(tmp_path / "new.c", "x\n")
    assert _mode(tmp_path / "new.c") == 0o644
    os.umask(0o077)
    write_text(tmp_path / "private.c", "x\n")
    assert _mode(tmp_path / "private.c") == 0o600


def test_existing_file_is_replaced_and_keeps_its_mode(tmp_path, umask_022):
    path = tmp_path / "rules.txt"
    path.write_text("old\n")
    os.chmod(path, 0o640)
    before = os.stat(path).st_ino
    write_text(path, "new\n")
    assert path.read_text() == "new\n" and _mode(path) == 0o640
    assert os.stat(path).st_ino != before                   # a new file renamed over it: atomic
    assert os.listdir(tmp_path) == ["rules.txt"]            # no temporary file left


def test_symlink_is_followed_and_its_target_replaced(tmp_path):
    target = tmp_path / "real.json"
    target.write_text("old")
    os.chmod(target, 0o604)
    link = tmp_path / "link.json"
    link.symlink_to("real.json")
    chain = tmp_path / "chain.json"
    chain.symlink_to(link)
    write_text(chain, "new")
    assert chain.is_symlink() and link.is_symlink()
    assert target.read_text() == "new" and _mode(target) == 0o604


def test_dangling_symlink_creates_its_target(tmp_path):
    link = tmp_path / "out.c"
    link.symlink_to(tmp_path / "made.c")
    write_text(link, "int x;\n")
    assert link.is_symlink() and (tmp_path / "made.c").read_text() == "int x;\n"


def _through_fifo(fifo, path, text):
    """What a reader of `fifo` receives while `text` is written to `path`."""
    received = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_text()))
    reader.start()
    write_text(path, text)
    reader.join(timeout=10)
    return received


def test_fifo_is_written_in_place(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    assert _through_fifo(fifo, fifo, "through the pipe\n") == ["through the pipe\n"]
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)             # still a FIFO, not replaced by a file
    assert is_stream(fifo) and sorted(os.listdir(tmp_path)) == ["pipe"]


def test_symlink_to_a_fifo_writes_the_fifo(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    link = tmp_path / "link"
    link.symlink_to(fifo)
    assert _through_fifo(fifo, link, "via the link\n") == ["via the link\n"] and link.is_symlink()


@pytest.mark.parametrize("name", ["/dev/stdout", "/dev/fd/1", "/proc/self/fd/1"])
def test_descriptor_paths_are_the_descriptor_itself(name):
    assert resolve(name) == ("fd", 1)


def test_dev_stdout_writes_to_the_redirected_file_without_replacing_it(tmp_path):
    """`-o /dev/stdout >> log`: appended at the descriptor's offset; the file is neither truncated nor replaced."""
    log = tmp_path / "log.txt"
    log.write_text("before\n")
    inode = os.stat(log).st_ino
    code = "from quadsel.output import write_text; write_text('/dev/stdout', 'one\\n'); write_text('/dev/stdout', 'two\\n')"
    with open(log, "a") as handle:
        subprocess.run([sys.executable, "-c", code], stdout=handle, check=True,
                       env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
    assert log.read_text() == "before\none\ntwo\n" and os.stat(log).st_ino == inode


def test_dev_stdout_into_a_pipe():
    code = "from quadsel.output import write_text; write_text('/dev/stdout', 'piped\\n')"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
    assert done.returncode == 0 and done.stdout == "piped\n", done.stderr


@pytest.mark.parametrize("relative, words", [
    ("no/such/dir/out.c", "does not exist (quadsel does not create folders)"),
    ("a_file/out.c", "a_file"),
    (".", "is a directory"),
    ("sub", "is a directory"),
])
def test_unusable_paths_fail_and_create_nothing(tmp_path, relative, words):
    (tmp_path / "a_file").write_text("keep")
    (tmp_path / "sub").mkdir()
    before = sorted(os.listdir(tmp_path))
    with pytest.raises(QuadselError) as caught:
        write_text(tmp_path / relative, "x")
    assert words in str(caught.value) and "\n" not in str(caught.value)
    assert sorted(os.listdir(tmp_path)) == before and (tmp_path / "a_file").read_text() == "keep"


def test_symlink_loop_fails(tmp_path):
    (tmp_path / "a").symlink_to("b")
    (tmp_path / "b").symlink_to("a")
    with pytest.raises(QuadselError, match="too many levels of symbolic links"):
        write_text(tmp_path / "a", "x")


def test_newline_in_a_path_stays_one_line(tmp_path):
    with pytest.raises(QuadselError) as caught:
        write_text(tmp_path / "no\ndir" / "x", "x")
    assert "\n" not in str(caught.value)


def test_permission_checks_refuse_before_writing(tmp_path, monkeypatch):
    """The same checks as an ordinary user meets them (root passes every os.access check)."""
    kept = tmp_path / "kept.c"
    kept.write_text("keep")
    monkeypatch.setattr(os, "access", lambda path, mode: False)
    with pytest.raises(QuadselError, match="no permission to create files in"):
        write_text(tmp_path / "new.c", "x")
    monkeypatch.setattr(os, "access", lambda path, mode: os.path.isdir(path))
    with pytest.raises(QuadselError, match="the file is not writable"):
        write_text(kept, "x")
    assert sorted(os.listdir(tmp_path)) == ["kept.c"] and kept.read_text() == "keep"


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root to drop to another user")
def test_unwritable_folder_and_file_fail_for_an_ordinary_user(tmp_path):
    """Root may write anywhere: run the writer as `nobody` in a folder it may not write."""
    import tempfile
    folder = tempfile.mkdtemp(prefix="quadsel-ro-")
    try:
        os.chmod(folder, 0o755)
        locked = os.path.join(folder, "locked.c")
        with open(locked, "w") as handle:
            handle.write("keep")
        os.chmod(locked, 0o644)
        code = ("import sys\nfrom quadsel.output import write_text\nfrom quadsel.errors import QuadselError\n"
                "try:\n    write_text(sys.argv[1], 'x')\nexcept QuadselError as exc:\n    print(exc)\n")
        for path, words in ((os.path.join(folder, "new.c"), "no permission to create files"),
                            (locked, "not writable")):
            try:
                done = subprocess.run([sys.executable, "-c", code, path], capture_output=True, text=True, user=65534,
                                      env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
            except PermissionError:
                pytest.skip("user nobody cannot run this Python")
            assert words in done.stdout, done.stderr
        assert sorted(os.listdir(folder)) == ["locked.c"] and open(locked).read() == "keep"
    finally:
        import shutil
        shutil.rmtree(folder)
