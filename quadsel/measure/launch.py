"""Self-launching: `quadsel measure --np N` outside an MPI job re-executes itself as
`mpiexec -n N sys.executable -m quadsel measure <same options>`.
"""

import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time

from ..errors import QuadselError, missing_extra

_EXCEPTION = re.compile(r"^[A-Za-z_][\w.]*(Error|Exception|Interrupt)\b.*:")   # a Python traceback's last line
DASHES = re.compile(r"^-{20,}\s*$")     # Open MPI frames its notices with lines of dashes
LAUNCHER_NOTE = re.compile(r"^\[[^\]\s]+:\d+\] ")    # and writes its diagnostics as `[host:pid] ...`


def failure_reason(lines):
    """Why a job failed, in one line, from what it said (its last lines last): a rank's Python exception (the last
    line of its traceback), else its last line that is not a frame of dashes; None when it said nothing."""
    said = [line.strip() for line in reversed(lines) if line.strip() and not DASHES.match(line)]
    return next((line for line in said if _EXCEPTION.match(line)), said[0] if said else None)
from ..libraries import CLASSES, get as get_library

# Set in every rank by the launchers we know: Open MPI/PRRTE, PMIx (also srun --mpi=pmix), Hydra and
# srun --mpi=pmi2 (PMI_*). Not Slurm's own SLURM_* variables: a batch script has them outside any job step.
_JOB_VARIABLES = ("OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE", "PMI_FD")


# Set in the ranks quadsel launches itself: the launching process reports an interruption, they stay quiet.
LAUNCHED = "QUADSEL_LAUNCHED"


def inside_mpi_job(environ=None):
    environ = os.environ if environ is None else environ
    return any(v in environ for v in _JOB_VARIABLES)


def job_rank(environ=None):
    """This process's rank in the MPI job from the launcher's variables (0 when unknown)."""
    environ = os.environ if environ is None else environ
    for name in ("OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"):
        if environ.get(name, "").isdigit():
            return int(environ[name])
    return 0


def find_mpiexec(explicit=None):
    """--mpiexec, else the mpiexec beside this Python (a venv's MPI wheel), else the first on PATH."""
    if explicit:
        found = shutil.which(explicit)
        if not found:
            raise QuadselError(f"mpiexec not found: {explicit}")
        return found
    beside = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    if os.access(beside, os.X_OK):
        return beside
    found = shutil.which("mpiexec") or shutil.which("mpirun")
    if not found:
        raise QuadselError("no mpiexec found: install the [mpi] extra, put mpiexec on PATH or pass --mpiexec")
    return found


def mpiexec_flavor(mpiexec):
    """The library whose launcher `mpiexec` is, by `mpiexec --version` (its class's `launcher_marks`): 'openmpi',
    'mpich' (Hydra) or 'unknown'."""
    try:
        text = subprocess.run([mpiexec, "--version"], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return next((cls.name for cls in CLASSES if any(mark in text for mark in cls.launcher_marks)), "unknown")


JOB_MODULE = "quadsel.pipeline.measure_job"     # what a measurement's ranks run


def launch_command(mpiexec, flavor, np, child_args, cpus=None, prefix=(), module=JOB_MODULE):
    """mpiexec ... -n NP python -m MODULE CHILD_ARGS (a measurement's ranks: pipeline/measure_job.py and the spec file).
    `prefix`: the user's mpiexec options (--mpiexec-args), before -n; with hosts in them the ranks are not all here,
    and Open MPI's --oversubscribe is theirs to give."""
    cmd = [mpiexec] + list(prefix)
    if not prefix:
        cmd += get_library(flavor).oversubscribe(np, cpus or os.cpu_count() or 1)
    return cmd + ["-n", str(np)] + python_module(sys.executable, module) + list(child_args)


# `python -m MODULE` puts the working folder first on sys.path: a user's inspect.py (or json.py, ...) there
# would be imported by every rank instead of the standard library's. The ranks run this instead (`-P` and
# PYTHONSAFEPATH are Python 3.11+; `-I` would drop PYTHONPATH too): the implicit working-folder entry is
# removed before anything else is imported, and the folder this quadsel was imported from stays reachable
# (first only when it is the working folder itself: a source checkout run from its root).
_BOOT = """import os, sys
if sys.path and sys.path[0] == "":
    del sys.path[0]
root = {root!r}
if not any(os.path.abspath(p) == root for p in sys.path):
    sys.path.insert(0, root) if root == os.getcwd() else sys.path.append(root)
import runpy
runpy.run_module({module!r}, run_name="__main__", alter_sys=True)
"""


def python_module(python, module):
    """[python, "-c", ...]: `python -m module` (arguments follow) without the working folder on sys.path."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return [python, "-c", _BOOT.format(root=os.path.dirname(root), module=module)]


# The variables that load the library's selection files (Intel MPI's I_MPI_ADJUST strings are one). A launch measures the library's default, so a sourced
# tuned.env (or a site's rules) must not stand in for it: they are left out of measure's and verify's launches, with
# one note (docs/conventions.md, "The library's default"); verify passes the file it checks itself.
SELECTION_VARIABLES = re.compile("(" + "|".join(cls.selection_variables for cls in CLASSES) + ")", re.ASCII)
_noted = set()


def selection_variables(environ=None):
    """The names of the library selection variables set in `environ` (sorted)."""
    environ = os.environ if environ is None else environ
    return sorted(name for name in environ if SELECTION_VARIABLES.fullmatch(name))


def launch_env(flavor, extra=None, command="", keep_selection=False):
    """The environment of a launch: this one's, less the library's selection variables unless keep_selection (trace:
    it shows what the library does in the user's environment), plus `extra`."""
    env = dict(os.environ)
    dropped = [] if keep_selection else selection_variables(env)
    for name in dropped:
        del env[name]
    if dropped and tuple(dropped) not in _noted:
        _noted.add(tuple(dropped))
        print(f"note: left out of the launches' environment: {', '.join(dropped)} (quadsel measures and verifies "
              "against the library's own default; give verify the rules file as its argument)", file=sys.stderr)
    for name, value in get_library(flavor).root_environment().items():   # containers and CI run as root
        env.setdefault(name, value)
    if command:
        env["QUADSEL_MEASURE_COMMAND"] = command
    env[LAUNCHED] = "1"
    env.update(extra or {})
    return env


def library_without_init():
    """MPI_Get_library_version() of the MPI that mpi4py would load, without starting MPI."""
    try:
        import mpi4py
        if "mpi4py.MPI" not in sys.modules:
            mpi4py.rc.initialize = False
            mpi4py.rc.finalize = False
        from mpi4py import MPI
        return MPI.Get_library_version()
    except Exception as exc:  # ImportError, or mpi4py failing to find a libmpi
        if isinstance(exc, ImportError) and "mpi4py" in str(exc):
            raise missing_extra("talking to MPI", "mpi4py and an MPI library", "mpi") from None
        raise QuadselError(f"cannot load mpi4py / an MPI library ({exc}): pip install 'quadsel[mpi]' "
                           f"(or 'quadsel[mpich]' in its own environment)") from None


# Open MPI's mpiexec now and then fails before starting any rank with this notice (exit 213; PMIx's listener
# could not start; seen a few times in this project's test runs on a 2-core VM): nothing ran, so the launch
# is made again.
LAUNCHER_FLAKE = b"The PMIx server's listener thread failed to start"
LAUNCH_ATTEMPTS = 2


def run(cmd, env, timeout=None, capture=False, on_line=None):
    """Run one launch (again, once, when the launcher failed before starting any rank: LAUNCHER_FLAKE);
    returns its exit status, or (capture=True) the CompletedProcess with its output. on_line(text): each line of
    the job's stderr; the ones it returns True for are not passed on to ours."""
    for attempt in range(1, LAUNCH_ATTEMPTS + 1):
        result, flaked = _run_once(cmd, env, timeout, capture, on_line)
        if not flaked or attempt == LAUNCH_ATTEMPTS:
            return result
        sys.stderr.write(f"note: {os.path.basename(cmd[0])} could not start its PMIx server (nothing ran); "
                         "launching again\n")
        time.sleep(1.0)


def _run_once(cmd, env, timeout, capture, on_line=None):
    """One launch: (its exit status or CompletedProcess, whether it failed with LAUNCHER_FLAKE).

    The launcher runs in a process group of its own, so a terminal's Ctrl-C reaches only us: we then stop the job with
    SIGTERM (on which mpiexec ends its ranks quietly, where SIGINT makes Open MPI's print an abort
    notice), wait for it, and re-raise KeyboardInterrupt. Killing the launcher outright, as
    subprocess.run does, would leave its ranks running as orphans. A hang-up or SIGTERM of ours does the same.
    """
    pipe = subprocess.PIPE if capture else None
    try:
        child = subprocess.Popen(cmd, env=dict(env, **{LAUNCHER_PID: f"{os.getpid()}@{_this_host()}"}),
                                 stdin=subprocess.DEVNULL,
                                 stdout=pipe, stderr=pipe if capture else subprocess.PIPE, text=capture or None,
                                 preexec_fn=_own_group_dying_with_us)
    except OSError as exc:
        raise QuadselError(f"cannot start {cmd[0]}: {exc.strerror}") from None
    forwarder = out = err = None
    seen = []
    if not capture:   # the forwarder alone reads the job's stderr
        forwarder = threading.Thread(target=forward_stderr, args=(child.stderr, _stderr_bytes(), seen, on_line),
                                     daemon=True)
        forwarder.start()
    with _signals_interrupt():
        try:
            if forwarder is None:
                out, err = child.communicate(timeout=timeout)
            else:
                child.wait(timeout=timeout)
        except BaseException:    # Ctrl-C (one Python wrapped too), the timeout: the job must not outlive the wait
            _stop(child)
            raise
        finally:
            if forwarder is not None:
                forwarder.join(timeout=5)
    flaked = child.returncode != 0 and (LAUNCHER_FLAKE.decode() in (err or "") if capture else bool(seen))
    if capture:
        return subprocess.CompletedProcess(cmd, child.returncode, out, err), flaked
    return child.returncode, flaked


# Set in the job's environment: the ranks end themselves when this process is gone (kill -9 included).
LAUNCHER_PID = "QUADSEL_LAUNCHER_PID"
_PR_SET_PDEATHSIG = 1


def _own_group_dying_with_us():
    """In the launcher's child: a process group of its own (a terminal's Ctrl-C reaches only us), and SIGTERM
    when we die, however we die (Linux), on which mpiexec ends its ranks."""
    os.setpgrp()
    try:
        import ctypes
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)
    except (OSError, AttributeError):
        pass   # not Linux: the ranks' own watch (exit_with_launcher) still ends them


def _this_host():
    """Host name and boot id (timing.clock_domain without its imports): which pids this process can see."""
    import socket
    try:
        with open("/proc/sys/kernel/random/boot_id") as handle:
            boot = handle.read().strip()
    except OSError:
        boot = ""
    return f"{socket.gethostname()}/{boot}"


def exit_with_launcher(poll=1.0):
    """In a rank of a job quadsel launched: end this process when the launching quadsel is gone (it was killed
    with -9): its rows are kept, and the output's lock is released for the rerun."""
    pid, _, host = os.environ.get(LAUNCHER_PID, "").partition("@")
    if not pid.isdigit() or (host and host != _this_host()):
        return     # a rank on another host (Hydra forwards the whole environment): that pid is not ours to watch

    def watch():
        while True:
            time.sleep(poll)
            try:
                os.kill(int(pid), 0)
            except ProcessLookupError:
                os._exit(143)
            except OSError:
                return
    threading.Thread(target=watch, name="quadsel-launcher-watch", daemon=True).start()


def _stderr_bytes():
    return getattr(sys.stderr, "buffer", None) or sys.stderr


_DASHES = re.compile(DASHES.pattern.encode())      # the same patterns, on the job's bytes
# Open MPI's launcher diagnostics, `[host:pid] PMIX ERROR: PMIX_ERR_UNREACH in file ...`: after quadsel's `Error:`
# line they only say that the ranks ended (seen in 2 of 6 runs whose ranks all left on a full disk).
_LAUNCHER_NOTE = re.compile(LAUNCHER_NOTE.pattern.encode())


def forward_stderr(source, sink, seen=None, on_line=None):
    """The job's stderr, passed on as it comes (progress bars redraw), except Open MPI's framed notices (between
    lines of dashes, and its `[host:pid] ...` diagnostics, and blank lines) once quadsel has said what went wrong in
    its own `Error:` line: the one line is enough -- also when the launcher's notice came before that line's end
    (a line shown in part, `head`, still counts from its start). NUL
    bytes are dropped (prterun writes one after its last notice when a rank calls MPI_Abort: a stray line on the
    terminal). `seen` (a list): True is appended when a line holds LAUNCHER_FLAKE. on_line(text): every whole line,
    decoded; one it returns True for is not passed on."""
    said, framed, pending, head = False, False, b"", b""    # head: the part of the current line shown already
    while True:
        chunk = os.read(source.fileno(), 65536)
        if not chunk:
            break
        pending += chunk.replace(b"\0", b"")
        lines = pending.split(b"\n")
        pending = lines.pop()
        shown = []
        for line in lines:
            whole, head = head + line, b""
            if seen is not None and LAUNCHER_FLAKE in whole:
                seen.append(True)
            said_now = said or whole.rsplit(b"\r", 1)[-1].startswith(b"Error: ")
            if said_now and _DASHES.match(line):    # a frame, or one the launcher wrote into our line unfinished
                framed = not framed
                if whole != line:
                    shown.append(b"\n")             # ends the line shown in part
                said = said_now
                continue
            if framed or (said and (_LAUNCHER_NOTE.match(line) or not whole.strip())):
                continue
            said = said_now
            if on_line is not None and on_line(line.rsplit(b"\r", 1)[-1].decode("utf-8", "replace")):
                continue
            shown.append(line + b"\n")
        if pending and not framed and not _DASHES.match(pending) and not pending.startswith(b"-"):
            shown.append(pending)   # a progress line redrawn with \r: shown now, not at its newline
            head, pending = head + pending, b""
        _write(sink, b"".join(shown))
    if pending and not framed:
        _write(sink, pending)


def _write(sink, data):
    if not data:
        return
    try:
        try:
            sink.write(data)
        except TypeError:   # a text stream (a test runner's capture)
            sink.write(data.decode("utf-8", "replace"))
        sink.flush()
    except (OSError, ValueError):
        pass


def _stop(child, grace=10.0):
    """End the launched job: SIGTERM, then SIGKILL if it is still there after `grace` seconds."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        if child.poll() is not None:
            return
        try:
            child.send_signal(sig)
            if child.stdout is None:
                child.wait(timeout=grace)   # stderr is read by the forwarder
            else:
                child.communicate(timeout=grace)
        except (subprocess.TimeoutExpired, KeyboardInterrupt):   # Ctrl-C again: stop waiting politely
            continue
        except (OSError, ValueError):
            return


@contextlib.contextmanager
def _signals_interrupt():
    """While a job runs, a hang-up or SIGTERM of ours stops it like a Ctrl-C (main thread only)."""
    def interrupt(signum, frame):
        raise KeyboardInterrupt
    saved = {}
    if threading.current_thread() is threading.main_thread():
        for name in ("SIGTERM", "SIGHUP"):
            sig = getattr(signal, name, None)
            if sig is not None:
                saved[sig] = signal.signal(sig, interrupt)
    try:
        yield
    finally:
        for sig, handler in saved.items():
            signal.signal(sig, handler)
