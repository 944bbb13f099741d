"""Write MPI_T control variables of the loaded MPI library through ctypes (mpi4py does not wrap MPI_T).

Handles (MPI_T_cvar_handle, MPI_T_enum) are pointers in both Open MPI's and MPICH's ABI, so they are
kept in c_void_p. MPI_Datatype is a pointer in Open MPI but an int in MPICH: it is only ever an output
here, read into a zeroed 64-bit slot and never interpreted. Every variable we write is an MPI_INT.
"""

import ctypes
import os

from ..errors import QuadselError

MPI_THREAD_SINGLE = 0
_LIB_NAMES = ("libmpi.so", "libmpi_abi.so", "libmpi.dylib")


class MPITError(QuadselError):
    """MPI_T is missing or refused a call; callers may fall back to environment variables."""


def find_libmpi():
    """Path of the libmpi that this process has loaded (mpi4py dlopens it RTLD_LOCAL, so look in maps)."""
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                path = line.split()[-1] if len(line.split()) >= 6 else ""
                if os.path.basename(path).startswith(_LIB_NAMES):
                    return path
    except OSError:
        pass
    return None


class MPIT:
    """The MPI_T control-variable interface of one loaded libmpi."""

    def __init__(self, path=None, thread_level=None):
        if os.environ.get("QUADSEL_MEASURE_NO_MPIT"):  # lets tests exercise the environment fallback
            raise MPITError("MPI_T disabled by QUADSEL_MEASURE_NO_MPIT")
        path = path or find_libmpi()
        if not path:
            raise MPITError("cannot find the loaded libmpi for MPI_T")
        try:
            self.lib = ctypes.CDLL(path)
            self.lib.MPI_T_init_thread
        except (OSError, AttributeError) as exc:
            raise MPITError(f"no MPI_T in {path}: {exc}") from None
        self.path = path
        provided = ctypes.c_int()
        # Ask for the level MPI already runs at: Open MPI 5 lowers MPI_Query_thread() to whatever
        # MPI_T_init_thread asked for (seen here: MULTIPLE became SINGLE after asking for SINGLE).
        required = MPI_THREAD_SINGLE if thread_level is None else int(thread_level)
        self._check(self.lib.MPI_T_init_thread(required, ctypes.byref(provided)), "MPI_T_init_thread")
        self._handles = {}

    def _check(self, code, call):
        if code != 0:
            raise MPITError(f"{call} failed with MPI error {code}")

    def index(self, name):
        """The cvar index of `name`, or None when the library has no such variable."""
        idx = ctypes.c_int(-1)
        if self.lib.MPI_T_cvar_get_index(name.encode(), ctypes.byref(idx)) != 0:
            return None
        return idx.value

    def has(self, name):
        return self.index(name) is not None

    def info(self, name):
        """(description, enum handle or None) of a cvar."""
        idx = self.index(name)
        if idx is None:
            raise MPITError(f"MPI_T has no control variable {name}")
        c = ctypes
        name_buf, name_len = c.create_string_buffer(256), c.c_int(256)
        desc_buf, desc_len = c.create_string_buffer(16384), c.c_int(16384)
        verbosity, bind, scope = c.c_int(), c.c_int(), c.c_int()
        datatype, enumtype = c.c_uint64(0), c.c_void_p()
        self._check(self.lib.MPI_T_cvar_get_info(
            idx, name_buf, c.byref(name_len), c.byref(verbosity), c.byref(datatype), c.byref(enumtype),
            desc_buf, c.byref(desc_len), c.byref(bind), c.byref(scope)), f"MPI_T_cvar_get_info({name})")
        return desc_buf.value.decode(errors="replace"), (enumtype.value or None)

    def enum_items(self, name):
        """[(value, item name)] of an enumerated cvar (Open MPI's algorithm lists); [] when not an enum."""
        _, enumtype = self.info(name)
        if not enumtype:
            return []
        c = ctypes
        count, buf, buf_len = c.c_int(), c.create_string_buffer(256), c.c_int(256)
        self._check(self.lib.MPI_T_enum_get_info(c.c_void_p(enumtype), c.byref(count), buf, c.byref(buf_len)),
                    "MPI_T_enum_get_info")
        items = []
        for i in range(count.value):
            value, item, item_len = c.c_int(), c.create_string_buffer(256), c.c_int(256)
            self._check(self.lib.MPI_T_enum_get_item(c.c_void_p(enumtype), i, c.byref(value), item,
                                                     c.byref(item_len)), "MPI_T_enum_get_item")
            items.append((value.value, item.value.decode()))
        return items

    def _handle(self, name):
        if name not in self._handles:
            idx = self.index(name)
            if idx is None:
                raise MPITError(f"MPI_T has no control variable {name}")
            handle, count = ctypes.c_void_p(), ctypes.c_int()
            self._check(self.lib.MPI_T_cvar_handle_alloc(idx, None, ctypes.byref(handle), ctypes.byref(count)),
                        f"MPI_T_cvar_handle_alloc({name})")
            if count.value != 1:
                raise MPITError(f"{name} has {count.value} elements, expected 1")
            self._handles[name] = handle
        return self._handles[name]

    def read_int(self, name):
        value = ctypes.c_int64(0)  # a wider slot than the int it holds: harmless if a library writes more
        self._check(self.lib.MPI_T_cvar_read(self._handle(name), ctypes.byref(value)), f"MPI_T_cvar_read({name})")
        return ctypes.c_int32(value.value & 0xFFFFFFFF).value

    def write_int(self, name, value):
        slot = ctypes.c_int(int(value))
        self._check(self.lib.MPI_T_cvar_write(self._handle(name), ctypes.byref(slot)), f"MPI_T_cvar_write({name})")

    def close(self):
        for handle in self._handles.values():
            self.lib.MPI_T_cvar_handle_free(ctypes.byref(handle))
        self._handles.clear()
        self.lib.MPI_T_finalize()
