"""What ran inside the library during one collective call, seen through LD_PRELOAD interposition.

Two real probes, each a small shared object compiled here with the system C compiler and preloaded into the
ranks of the follow check's launches (quadsel.verify.follow):

  functions  Open MPI: every exported coll/base algorithm function (`ompi_coll_base_<coll>_intra_<alg>`, listed
             with `nm -D` from the loaded libmpi) is wrapped by a stub that counts the call and jumps to the
             real function (registers and stack untouched). libmpi calls them through its PLT or through
             function pointers it takes from the dynamic symbol table, so the stubs see every call, coll/tuned's
             forced, fixed and rules-file decisions alike. The counts name the algorithm that ran even where two
             algorithms send the same messages (2 ranks).
  sends      MPICH: its internal point-to-point functions are hidden, but with the UCX network module
             (MPICH_CH4_NETMOD=ucx) and MPIR_CVAR_NOLOCAL=1 (no shared-memory shortcut between the ranks of
             one host) every message MPICH sends leaves through libucp's exported ucp_tag_send_nbx /
             ucp_tag_send_sync_nbx. The wrapper records each message's endpoint and size; the rank maps
             endpoints to peers by one calibrating exchange. The fingerprint is, per rank and peer, the size
             of every message and its tag class: the fixed tag of MPICH's blocking collectives
             (MPIR_<COLL>_TAG, below MPIR_FIRST_NBC_TAG) or "nbc", a tag of a non-blocking schedule (the `nb`
             algorithms, which send the default's messages through MPICH's schedule engine). It tells
             algorithms apart wherever their messages or their engine differ (most need 3+ ranks).

`environment(library, workdir)` builds the probe and returns the launch's extra environment, or
(None, reason) when it cannot (no C compiler, no nm, no such symbols): the follow check then runs with its
other fingerprints only and says so.
"""

import ctypes
import os
import re
import shutil
import subprocess

SHIM_ENV = "QUADSEL_PROBE_SO"        # path of the preloaded shim, read by the ranks
TARGET_ENV = "QUADSEL_PROBE_LIB"     # the library whose functions the stubs resolve to (dlopen RTLD_NOLOAD)
# coll/base's algorithm functions, and coll/han's own algorithms (not its per-call dispatcher `*_dynamic`, nor its
# set-up of sub-communicators): a fingerprint names them without the prefix, coll/han's as `han_<coll>_<alg>`
FUNCTIONS_PATTERN = r"ompi_coll_base_\w+_intra_\w+|mca_coll_han_[a-z]+_(intra|intra_simple|reproducible)"
FUNCTION_PREFIXES = (("ompi_coll_base_", ""), ("mca_coll_han_", "han_"))
MULTINODE_MARK = "han_"
SEND_CAP = 1 << 16                   # messages recorded per rank between two reads
# MPICH src/include/mpir_tags.h: blocking collectives' tags are 1..30, MPIR_FIRST_HCOLL_TAG 31 (+255), and
# MPIR_FIRST_NBC_TAG = 287 the first tag of a communicator's non-blocking schedules (it counts up from there).
# ch4/ucx puts the MPI tag in the low bits of the UCX tag (context id and source rank above it).
MPICH_FIRST_NBC_TAG = 287
MPICH_TAG_MASK = 0xFFFFF

_RESOLVE = r"""
#define HIDDEN __attribute__((visibility("hidden")))
HIDDEN void *quadsel_probe_real[N];
HIDDEN uint64_t quadsel_probe_counts[N];
int quadsel_probe_n = N;
uint64_t *quadsel_probe_counters(void) { return quadsel_probe_counts; }
HIDDEN void quadsel_probe_resolve(long i) {
  void *h = dlopen(getenv("QUADSEL_PROBE_LIB"), RTLD_NOLOAD | RTLD_LAZY);
  void *f = h ? dlsym(h, quadsel_probe_names[i]) : NULL;
  if (!f) { fprintf(stderr, "quadsel probe: cannot resolve %s\n", quadsel_probe_names[i]); abort(); }
  __atomic_store_n(&quadsel_probe_real[i], f, __ATOMIC_RELEASE);
}
/* first call of a stub (its index in %r10): resolve the real function, every argument register saved (the
   integer ones, %rax, and %xmm0-7), then jump to it with the caller's stack untouched */
__asm__(".text\n"
"quadsel_probe_slow:\n"
"  push %rdi\n  push %rsi\n  push %rdx\n  push %rcx\n  push %r8\n  push %r9\n  push %rax\n  push %r11\n"
"  sub $136, %rsp\n"
"  movdqu %xmm0, 0(%rsp)\n  movdqu %xmm1, 16(%rsp)\n  movdqu %xmm2, 32(%rsp)\n  movdqu %xmm3, 48(%rsp)\n"
"  movdqu %xmm4, 64(%rsp)\n  movdqu %xmm5, 80(%rsp)\n  movdqu %xmm6, 96(%rsp)\n  movdqu %xmm7, 112(%rsp)\n"
"  mov %r10, %rdi\n  call quadsel_probe_resolve\n"
"  movdqu 0(%rsp), %xmm0\n  movdqu 16(%rsp), %xmm1\n  movdqu 32(%rsp), %xmm2\n  movdqu 48(%rsp), %xmm3\n"
"  movdqu 64(%rsp), %xmm4\n  movdqu 80(%rsp), %xmm5\n  movdqu 96(%rsp), %xmm6\n  movdqu 112(%rsp), %xmm7\n"
"  add $136, %rsp\n"
"  pop %r11\n  pop %rax\n  pop %r9\n  pop %r8\n  pop %rcx\n  pop %rdx\n  pop %rsi\n  pop %rdi\n"
"  jmp *(%r11)\n");
"""

_STUB = ('__asm__(".globl {name}\\n.type {name}, @function\\n{name}:\\n"\n'
         '"  lock incq quadsel_probe_counts+{offset}(%rip)\\n  lea quadsel_probe_real+{offset}(%rip), %r11\\n"\n'
         '"  cmpq $0, (%r11)\\n  je 1f\\n  jmp *(%r11)\\n1: mov ${index}, %r10\\n  jmp quadsel_probe_slow\\n");\n')

_SENDS = r"""
#define CAP %(cap)d
void *quadsel_send_ep[CAP];
uint64_t quadsel_send_bytes[CAP];
uint64_t quadsel_send_tag[CAP];
uint64_t quadsel_send_n;
typedef void *(*send_fn)(void *, const void *, size_t, uint64_t, const void *);
static void *real(const char *name) {
  void *h = dlopen(getenv("QUADSEL_PROBE_LIB"), RTLD_NOLOAD | RTLD_LAZY);
  void *f = h ? dlsym(h, name) : NULL;
  if (!f) { fprintf(stderr, "quadsel probe: cannot resolve %%s\n", name); abort(); }
  return f;
}
static void note(void *ep, size_t count, uint64_t tag) {
  uint64_t i = __atomic_fetch_add(&quadsel_send_n, 1, __ATOMIC_RELAXED);
  if (i < CAP) { quadsel_send_ep[i] = ep; quadsel_send_bytes[i] = count; quadsel_send_tag[i] = tag; }
}
#define WRAP(NAME) \
void *NAME(void *ep, const void *buf, size_t count, uint64_t tag, const void *param) { \
  static send_fn f; if (!f) f = (send_fn)real(#NAME); note(ep, count, tag); return f(ep, buf, count, tag, param); }
WRAP(ucp_tag_send_nbx)
WRAP(ucp_tag_send_sync_nbx)
"""

_HEADER = "#define _GNU_SOURCE\n#include <dlfcn.h>\n#include <stdint.h>\n#include <stddef.h>\n#include <stdio.h>\n" \
          "#include <stdlib.h>\n"

MPICH_ENV = {"MPICH_CH4_NETMOD": "ucx", "MPIR_CVAR_NOLOCAL": "1"}


def exported_functions(path, pattern=FUNCTIONS_PATTERN):
    """Names of the functions `path` exports that match `pattern` (`nm -D --defined-only`)."""
    nm = shutil.which("nm")
    if not nm:
        return None
    done = subprocess.run([nm, "-D", "--defined-only", path], capture_output=True, text=True, timeout=60)
    if done.returncode != 0:
        return None
    names = []
    for line in done.stdout.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] == "T" and re.fullmatch(pattern, parts[2]):
            names.append(parts[2])
    return sorted(set(names))


def functions_source(names):
    """C source of the counting stubs (x86-64 only: the stubs are assembly)."""
    table = "const char *const quadsel_probe_names[N] = {" + ", ".join(f'"{n}"' for n in names) + "};\n"
    stubs = "".join(_STUB.format(name=n, offset=8 * i, index=i) for i, n in enumerate(names))
    return _HEADER + f"#define N {len(names)}\n" + table + _RESOLVE + stubs


def sends_source():
    return _HEADER + _SENDS % {"cap": SEND_CAP}


def _compile(source, workdir, name):
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        return None, "no C compiler"
    c_path, so_path = os.path.join(workdir, name + ".c"), os.path.join(workdir, name + ".so")
    with open(c_path, "w") as handle:
        handle.write(source)
    done = subprocess.run([cc, "-shared", "-fPIC", "-O1", "-o", so_path, c_path, "-ldl"],
                          capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        return None, "the probe does not compile: " + " | ".join(done.stderr.strip().splitlines()[-2:])
    return so_path, None


_LOADED = r"""
import sys
if sys.path and sys.path[0] == "":   # not the working folder's json.py or os.py (measure/launch.python_module)
    del sys.path[0]
import json, os, mpi4py
mpi4py.rc.initialize = False
from mpi4py import MPI
found = {}
for line in open("/proc/self/maps"):
    path = line.split()[-1] if len(line.split()) >= 6 else ""
    for prefix in ("libmpi.so", "libmpi_abi.so", "libucp.so"):
        if os.path.basename(path).startswith(prefix):
            found.setdefault(prefix.split(".")[0], path)
print(json.dumps(found))
"""


def loaded_libraries(python):
    """{"libmpi": path, "libucp": path} of the shared objects mpi4py loads in `python` (the ranks' Python: it may
    be another library's venv than this process's)."""
    import json
    import sys
    try:
        done = subprocess.run([python or sys.executable, "-c", _LOADED], capture_output=True, text=True, timeout=120)
        return json.loads(done.stdout.strip().splitlines()[-1]) if done.returncode == 0 else {}
    except (OSError, subprocess.SubprocessError, ValueError, IndexError):
        return {}


def environment(library, workdir, python=None):
    """({extra environment of the launches}, None) with the probe built, or (None, why not). python: the ranks'.
    The library's class says what its probe counts (`probe`): the algorithm functions that ran (Open MPI), or the
    messages its network module sent (MPICH over UCX)."""
    import platform
    from ..libraries import get as get_library
    if platform.machine() not in ("x86_64", "AMD64"):
        return None, f"the probe's stubs are x86-64 assembly (this is {platform.machine()})"
    kind = get_library(library).probe
    loaded = loaded_libraries(python) if kind else {}
    if kind == "functions":
        target = loaded.get("libmpi")
        names = exported_functions(target) if target else None
        if not names:
            return None, f"no exported coll/base algorithm functions in {target or 'the loaded libmpi'}"
        so_path, why = _compile(functions_source(names), workdir, "quadsel-probe-functions")
        extra = {}
    elif kind == "sends":
        target = loaded.get("libucp")
        if not target:
            return None, "this MPICH does not load libucp (no UCX network module)"
        so_path, why = _compile(sends_source(), workdir, "quadsel-probe-sends")
        extra = dict(MPICH_ENV)
    else:
        return None, f"no probe for {library}"
    if so_path is None:
        return None, why
    preload = " ".join(p for p in (so_path, os.environ.get("LD_PRELOAD")) if p)
    return dict(extra, LD_PRELOAD=preload, **{SHIM_ENV: so_path, TARGET_ENV: target}), None


class Probe:
    """Inside a rank: the preloaded shim's counters; `snapshot()` before and `since(snapshot)` after a call."""

    def __init__(self, world):
        self.lib = ctypes.CDLL(os.environ[SHIM_ENV])   # already loaded (LD_PRELOAD): the same instance
        self.kind = "functions" if hasattr(self.lib, "quadsel_probe_counters") else "sends"
        if self.kind == "functions":
            n = ctypes.c_int.in_dll(self.lib, "quadsel_probe_n").value
            names = (ctypes.c_char_p * n).in_dll(self.lib, "quadsel_probe_names")
            self.names = [short_name(names[i].decode()) for i in range(n)]
            self.lib.quadsel_probe_counters.restype = ctypes.POINTER(ctypes.c_uint64)
            self.counts = self.lib.quadsel_probe_counters()
        else:
            self.sent = ctypes.c_uint64.in_dll(self.lib, "quadsel_send_n")
            self.eps = (ctypes.c_void_p * SEND_CAP).in_dll(self.lib, "quadsel_send_ep")
            self.bytes = (ctypes.c_uint64 * SEND_CAP).in_dll(self.lib, "quadsel_send_bytes")
            self.tags = (ctypes.c_uint64 * SEND_CAP).in_dll(self.lib, "quadsel_send_tag")
            self.peer_of = self._calibrate(world)

    def _calibrate(self, world):
        """{endpoint: world rank}: one 1-byte message to every other rank, each through its endpoint."""
        import numpy as np
        rank, size = world.Get_rank(), world.Get_size()
        peers = {}
        one, got = np.zeros(1, dtype=np.uint8), np.zeros(1, dtype=np.uint8)
        for shift in range(1, size):
            before = self.sent.value
            world.Sendrecv(one, (rank + shift) % size, 77, got, (rank - shift) % size, 77)
            new = [self.eps[i] for i in range(before, min(self.sent.value, SEND_CAP))]
            if len(new) == 1:
                peers[new[0]] = (rank + shift) % size
        world.Barrier()
        return peers

    def snapshot(self):
        if self.kind == "functions":
            return [self.counts[i] for i in range(len(self.names))]
        self.sent.value = 0     # nothing else runs in this rank between snapshot and since
        return 0

    def since(self, before):
        """This rank's part of the fingerprint: functions called [(name, calls)], or messages sent
        [(peer, [size/tag class, ...])] (peer: a world rank, "?" an endpoint the calibration did not see)."""
        if self.kind == "functions":
            return [(self.names[i], self.counts[i] - before[i]) for i in range(len(self.names))
                    if self.counts[i] != before[i]]
        n = self.sent.value
        if n > SEND_CAP:
            return [("overflow", [n])]
        by_peer = {}
        for i in range(n):
            by_peer.setdefault(self.peer_of.get(self.eps[i], "?"), []).append(
                f"{int(self.bytes[i])}/{tag_class(self.tags[i])}")
        return sorted((str(p), sorted(s)) for p, s in by_peer.items())


def short_name(function):
    """A counted function's name in a fingerprint: `bcast_intra_binomial`, `han_bcast_intra`."""
    for prefix, short in FUNCTION_PREFIXES:
        if function.startswith(prefix):
            return short + function[len(prefix):]
    return function


def multinode_part(fingerprint):
    """[[rank, [[name, calls], ...]], ...] of the multi-node component's (coll/han's) algorithm functions in a
    fingerprint with the function probe's part ([base, [[rank, part], ...]]); [] when none ran or there is no probe
    part. Its steps inside and across nodes (coll/base functions on its sub-communicators, their set-up on the first
    call) are left out: they follow coll/tuned's rules file in the deployment."""
    try:
        ranks = fingerprint[1]
        out = [[rank, [[str(name), calls] for name, calls in part if str(name).startswith(MULTINODE_MARK)]]
               for rank, part in ranks]
    except (TypeError, IndexError, ValueError):
        return []
    return out if any(part for _, part in out) else []


def own_part(fingerprint, collective):
    """[[rank, [[name, calls], ...]], ...] of the collective's own coll/base functions (`<collective>_intra_*`) in a
    fingerprint with the function probe's part, or the fingerprint itself when it has none. On a communicator
    coll/han takes, an algorithm's nested calls (allreduce's nonoverlapping: a reduce, then a bcast) reach coll/han
    in the file launch and coll/tuned in the forced one, whose arms run where coll/han may not: the algorithm that
    ran is told by its own functions (issue 40's 2 x 2 "not followed" allreduce at 256 KiB)."""
    try:
        ranks = fingerprint[1]
        return [[rank, [[str(name), calls] for name, calls in part if str(name).startswith(f"{collective}_intra_")]]
                for rank, part in ranks]
    except (TypeError, IndexError, ValueError):
        return fingerprint


def tag_class(ucx_tag):
    """A message's MPI tag as the fingerprint keeps it: a blocking collective's fixed tag, or "nbc" for a tag of
    a non-blocking schedule (its value counts the communicator's earlier schedules: not kept)."""
    tag = int(ucx_tag) & MPICH_TAG_MASK
    return "nbc" if tag >= MPICH_FIRST_NBC_TAG else str(tag)
