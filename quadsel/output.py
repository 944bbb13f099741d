"""Write output files without destroying what is at the output path (docs/conventions.md, "Output paths").

- `-`, `/dev/stdout`, `/dev/fd/N`, `/proc/self/fd/N`: that open descriptor, written in place.
- a symbolic link is followed; what it points to is written by the rules below.
- a regular file, or a new name in an existing folder: written to a temporary file in the same folder and
  renamed over it (atomic: readers see the old or the new file, never half of one); an existing file keeps
  its mode (and owner and group where permitted), a new one gets 0666 minus the umask.
- anything else that exists (a FIFO, a character or block device): opened and written directly.
- a directory, a missing folder (never created) or a place we may not write: QuadselError, nothing written.
"""

import os
import re
import stat
import sys
import tempfile

from .errors import QuadselError, one_line
from .inputs import inputs_read

STDOUT = "-"
# Open descriptors named as paths: write to the descriptor itself, never replace the file behind it.
_DESCRIPTOR = re.compile(r"^/(?:dev/fd|proc/(?:self|thread-self|\d+)(?:/task/\d+)?/fd)/(\d+)$")
_STD = {"/dev/stdin": 0, "/dev/stdout": 1, "/dev/stderr": 2}
_MAX_LINKS = 40   # as the kernel's ELOOP limit


def _fail(path, why):
    return QuadselError(f"cannot write {one_line(path)}: {why}")


def _descriptor(path):
    """The descriptor number a /dev/fd/N-like path names (for this process), else None."""
    if path in _STD:
        return _STD[path]
    match = _DESCRIPTOR.match(path)
    if not match:
        return None
    pid = re.match(r"^/proc/(\d+)/", path)
    if pid and int(pid.group(1)) != os.getpid():
        return None   # another process's descriptor: opened like any other path below
    return int(match.group(1))


def resolve(path):
    """("stdout" | "fd" | "file" | "new" | "special", target) for an output path; QuadselError if unusable.

    Symbolic links are followed by hand, one hop at a time, so that a link to a descriptor path
    (/dev/stdout -> /proc/self/fd/1 -> a pipe) is recognised as one instead of being resolved to nothing.
    """
    path = os.fspath(path)
    if path == STDOUT:
        return "stdout", 1
    if not path:
        raise QuadselError("empty output path")
    current = os.path.abspath(path)
    for _ in range(_MAX_LINKS):
        fd = _descriptor(current)
        if fd is not None:
            return "fd", fd
        folder, name = os.path.split(current)
        if not name:
            raise _fail(path, "is a directory")
        folder = os.path.realpath(folder)
        current = os.path.join(folder, name)
        fd = _descriptor(current)
        if fd is not None:
            return "fd", fd
        try:
            info = os.lstat(current)
        except FileNotFoundError:
            if not os.path.isdir(folder):
                why = "is not a directory" if os.path.exists(folder) else "does not exist"
                raise _fail(path, f"folder {one_line(folder)} {why} (quadsel does not create folders)") from None
            return "new", current
        except OSError as exc:
            raise _fail(path, exc.strerror or str(exc)) from None
        if stat.S_ISLNK(info.st_mode):
            try:
                current = os.path.join(folder, os.readlink(current))
            except OSError as exc:
                raise _fail(path, exc.strerror or str(exc)) from None
            continue
        if stat.S_ISDIR(info.st_mode):
            raise _fail(path, "is a directory")
        return ("file" if stat.S_ISREG(info.st_mode) else "special"), current
    raise _fail(path, "too many levels of symbolic links")


def is_stream(path):
    """True when `path` cannot be replaced or read back (stdout, a descriptor, a FIFO, a device)."""
    return resolve(path)[0] in ("stdout", "fd", "special")


def check(path, inputs=()):
    """Fail now (QuadselError) if `path` cannot be written, before any long work is done; also when it is one of
    the `inputs` (`build m.csv -o m.csv` would replace the measurements with the tree) or any file the running
    command has read (quadsel.inputs records each: a tree, `--mpich-base`, `--verified`, a trace, the `.meta.json`
    beside a CSV). Every write of this module goes through it: the one guard of every output."""
    kind, target = resolve(path)
    if kind in ("file", "new"):
        folder = os.path.dirname(target)
        if not os.access(folder, os.W_OK | os.X_OK):
            raise _fail(path, f"no permission to create files in {one_line(folder)}")
        if kind == "file" and not os.access(target, os.W_OK):
            raise _fail(path, "the file is not writable")
    if kind == "file":
        try:
            info = os.stat(target)
            read = inputs_read().get((info.st_dev, info.st_ino))
        except OSError:
            read = None
        for source in list(inputs) + ([read] if read is not None else []):
            try:
                same = os.path.samefile(target, source)
            except (OSError, ValueError):
                same = False
            if same:
                raise _fail(path, f"it is the input {one_line(source)}; give another output file")
    return kind, target


def make_folder(path, create=True):
    """A folder to write into (--figures DIR): made if missing, its parent never (like mkdir, not mkdir -p).
    create=False only checks that it could be (before any output is written)."""
    path = os.fspath(path)
    if os.path.isdir(path):
        return False
    parent = os.path.dirname(os.path.abspath(path))
    if os.path.exists(path) or not os.path.isdir(parent):
        why = "is not a folder" if os.path.exists(path) else f"its folder {one_line(parent)} does not exist"
        raise _fail(path, f"{why} (quadsel creates only the last folder of the path)")
    if not create:
        return False
    try:
        os.mkdir(path)
    except OSError as exc:
        raise _fail(path, exc.strerror or str(exc)) from None
    return True


def lock_exclusive(handle):
    """An exclusive lock (flock) on an open file for as long as it stays open, released when the process dies
    (kill -9 included). False when another process holds it; True when taken, or on a file system without locks
    (nothing to guard with). A run's own outputs are guarded so: measure's CSV, tune's folder."""
    import fcntl
    try:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    except OSError:
        pass
    return True


def write_text(path, text, exclusive=False):
    """Write `text` (UTF-8) to `path` by the rules of this module; `exclusive`: fail if the file exists (even
    when another process creates it while this one writes: the file appears whole, or not at all)."""
    write_bytes(path, text.encode("utf-8"), exclusive)


def write_bytes(path, data, exclusive=False):
    kind, target = check(path)
    if exclusive and kind not in ("new", "stdout", "fd"):
        raise _fail(path, "it already exists and is not replaced")
    if kind == "stdout" or (kind == "fd" and target == _stdout_fd()):
        stream = getattr(sys.stdout, "buffer", None)
        if stream is None:
            sys.stdout.write(data.decode("utf-8"))
        else:
            sys.stdout.flush()
            stream.write(data)
        sys.stdout.flush()
    elif kind == "fd":
        _write_all(target, data, path)
    elif kind == "special":
        try:
            fd = os.open(target, os.O_WRONLY | getattr(os, "O_CLOEXEC", 0))
        except OSError as exc:
            raise _fail(path, exc.strerror or str(exc)) from None
        try:
            _write_all(fd, data, path)
        finally:
            os.close(fd)
    else:
        tmp = _stage(target, data, path)
        _commit(tmp, target, path, exclusive)


def write_together(files, folder=None):
    """Write several outputs as one: every regular file is staged beside its target first, and only when all
    are staged are they renamed into place; on any failure (a full disk) nothing is left behind, not even
    `folder`, which is made here when missing (its parent never). `files`: [(path, bytes)]."""
    made = make_folder(folder) if folder is not None else False
    staged, streams = [], []
    try:
        for path, data in files:
            kind, target = check(path)
            if kind in ("file", "new"):
                staged.append((_stage(target, data, path), target, path))
            else:
                streams.append((path, data))
    except BaseException:
        for tmp, _, _ in staged:
            _unlink(tmp)
        if made:
            os.rmdir(folder)
        raise
    for tmp, target, path in staged:
        _commit(tmp, target, path)
    for path, data in streams:
        write_bytes(path, data)


def _stdout_fd():
    try:
        return sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):   # replaced by a test runner's capture
        return None


def _write_all(fd, data, path):
    view = memoryview(data)
    try:
        while view:
            view = view[os.write(fd, view):]
    except BrokenPipeError:
        raise
    except OSError as exc:
        raise _fail(path, exc.strerror or str(exc)) from None


def new_file_mode():
    """0666 minus the umask: the mode open(2) gives a new file."""
    mask = os.umask(0o022)
    os.umask(mask)
    return 0o666 & ~mask


def _unlink(path):
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def _stage(target, data, path):
    """A temporary file beside `target` holding `data`, synced, with the mode (and owner) the result gets."""
    folder, name = os.path.split(target)
    try:
        old = os.stat(target)
    except FileNotFoundError:
        old = None
    try:
        fd, tmp = tempfile.mkstemp(prefix="." + name[:64] + ".", suffix=".tmp", dir=folder)
    except OSError as exc:
        raise _fail(path, exc.strerror or str(exc)) from None
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
            if old is None:
                os.fchmod(handle.fileno(), new_file_mode())
            else:
                _keep_owner(handle.fileno(), old)
                os.fchmod(handle.fileno(), stat.S_IMODE(old.st_mode))
    except BaseException as exc:
        _unlink(tmp)
        if isinstance(exc, OSError) and not isinstance(exc, BrokenPipeError):
            raise _fail(path, exc.strerror or str(exc)) from None
        raise
    return tmp


def _commit(tmp, target, path, exclusive=False):
    """Rename the staged file over `target` (atomic); `exclusive`: link it instead, which fails when `target`
    exists by now (two builds racing for one default file name: one wins, the other is told)."""
    try:
        if exclusive:
            try:
                os.link(tmp, target)
            except FileExistsError:
                raise _fail(path, "it already exists and is not replaced") from None
            _unlink(tmp)
        else:
            os.replace(tmp, target)
    except BaseException as exc:
        _unlink(tmp)
        if isinstance(exc, OSError) and not isinstance(exc, BrokenPipeError):
            raise _fail(path, exc.strerror or str(exc)) from None
        raise


def _keep_owner(fd, old):
    """The replaced file's owner and group, where we may set them (root; a group we belong to)."""
    if not hasattr(os, "fchown"):
        return
    for uid, gid in ((old.st_uid, old.st_gid), (-1, old.st_gid)):
        try:
            os.fchown(fd, uid, gid)
            return
        except OSError:
            continue
