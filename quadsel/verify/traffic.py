"""Open MPI's message traffic per collective call, read through MPI_T performance variables.

The pml/monitoring component (loaded with OMPI_MCA_pml_monitoring_enable=1) counts, per peer, the
messages and bytes this process sends, collectives' internal messages included. The difference before
and after one collective call is the call's traffic pattern: who sends how many messages of how many bytes
to whom. It is deterministic and differs between algorithms (a linear bcast is root -> everyone, binomial a
tree, pipeline/chain with a segment size many small messages), so it identifies the algorithm that ran.
"""

import ctypes

from ..measure.mpit import MPIT, MPITError

MONITORING_ENV = {"OMPI_MCA_pml_monitoring_enable": "1"}
PVARS = ("pml_monitoring_messages_count", "pml_monitoring_messages_size")


class Traffic:
    """Per-peer message counts and bytes this process has sent (peers = MPI_COMM_WORLD ranks).

    pml/monitoring binds its variables to MPI_COMM_WORLD only (reading them through a smaller
    communicator fails), so calls on sub-communicators are read through the world's counters too.
    """

    def __init__(self, mpit=None):
        from mpi4py import MPI
        comm = MPI.COMM_WORLD
        self.mpit = mpit or MPIT()
        lib = self.mpit.lib
        self.lib = lib
        self.session = ctypes.c_void_p()
        self._check(lib.MPI_T_pvar_session_create(ctypes.byref(self.session)), "MPI_T_pvar_session_create")
        self.comm_handle = ctypes.c_void_p(MPI._handleof(comm))
        self.handles = []
        for name in PVARS:
            index = self._index(name)
            handle, count = ctypes.c_void_p(), ctypes.c_int()
            self._check(lib.MPI_T_pvar_handle_alloc(self.session, index, ctypes.byref(self.comm_handle),
                                                    ctypes.byref(handle), ctypes.byref(count)),
                        f"MPI_T_pvar_handle_alloc({name})")
            lib.MPI_T_pvar_start(self.session, handle)   # continuous variables refuse start: harmless
            self.handles.append((handle, count.value))

    @staticmethod
    def _check(code, call):
        if code != 0:
            raise MPITError(f"{call} failed with MPI error {code}")

    def _index(self, name):
        lib, count = self.lib, ctypes.c_int()
        self._check(lib.MPI_T_pvar_get_num(ctypes.byref(count)), "MPI_T_pvar_get_num")
        for i in range(count.value):
            buf, length = ctypes.create_string_buffer(256), ctypes.c_int(256)
            verbosity, var_class, bind = ctypes.c_int(), ctypes.c_int(), ctypes.c_int()
            readonly, continuous, atomic = ctypes.c_int(), ctypes.c_int(), ctypes.c_int()
            datatype, enumtype = ctypes.c_uint64(0), ctypes.c_void_p()
            desc, desc_len = ctypes.create_string_buffer(1024), ctypes.c_int(1024)
            if lib.MPI_T_pvar_get_info(i, buf, ctypes.byref(length), ctypes.byref(verbosity), ctypes.byref(var_class),
                                       ctypes.byref(datatype), ctypes.byref(enumtype), desc, ctypes.byref(desc_len),
                                       ctypes.byref(bind), ctypes.byref(readonly), ctypes.byref(continuous),
                                       ctypes.byref(atomic)) == 0 and buf.value.decode() == name:
                return i
        raise MPITError(f"no MPI_T performance variable {name}: set OMPI_MCA_pml_monitoring_enable=1")

    def read(self):
        """((messages to peer 0, 1, ...), (bytes to peer 0, 1, ...)) sent so far."""
        out = []
        for handle, count in self.handles:
            buf = (ctypes.c_uint64 * max(count, 1))()
            self._check(self.lib.MPI_T_pvar_read(self.session, handle, ctypes.cast(buf, ctypes.c_void_p)), "MPI_T_pvar_read")
            out.append(tuple(int(v) for v in buf[:count]))
        return tuple(out)

    def close(self):
        for handle, _ in self.handles:
            self.lib.MPI_T_pvar_handle_free(self.session, ctypes.byref(handle))
        self.lib.MPI_T_pvar_session_free(ctypes.byref(self.session))


def gather_pattern(comm, before, after):
    """The traffic between two reads on every rank, gathered on rank 0: ((rank, peer, msgs, bytes), ...).

    Peers are ranks of MPI_COMM_WORLD (what pml/monitoring records); the caller reads `before` after a
    barrier (earlier traffic stays out) and `after` before anything else is sent.
    """
    mine = [(peer, after[0][peer] - before[0][peer], after[1][peer] - before[1][peer])
            for peer in range(len(after[0])) if after[0][peer] != before[0][peer]]
    from ..measure import exchange
    rows = exchange.gather(comm, mine)     # not the forced collective's own gather: it may fail here
    if comm.Get_rank() != 0:
        return None
    return tuple((rank, peer, msgs, size) for rank, row in enumerate(rows) for peer, msgs, size in row)
