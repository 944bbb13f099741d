"""Facts about the MPI libraries quadsel measures and writes for (FORMATS.md; Open MPI 5.0.x, MPICH 4.x/5.0)."""

# enum COLLTYPE of ompi/mca/coll/base/coll_base_functions.h: the classic rules file's collective ids.
OMPI_COLLECTIVE_IDS = {
    "allgather": 0, "allgatherv": 1, "allreduce": 2, "alltoall": 3, "alltoallv": 4, "alltoallw": 5,
    "barrier": 6, "bcast": 7, "exscan": 8, "gather": 9, "gatherv": 10, "reduce": 11, "reduce_scatter": 12,
    "reduce_scatter_block": 13, "scan": 14, "scatter": 15, "scatterv": 16,
}

# coll_tuned_<coll>_algorithm ids of Open MPI 5.0.x (0 = the fixed decision; main adds reduce 8 knomial).
OMPI_ALGORITHMS = {
    "bcast": {1: "basic_linear", 2: "chain", 3: "pipeline", 4: "split_binary_tree", 5: "binary_tree",
              6: "binomial", 7: "knomial", 8: "scatter_allgather", 9: "scatter_allgather_ring"},
    "reduce": {1: "linear", 2: "chain", 3: "pipeline", 4: "binary", 5: "binomial", 6: "in-order_binary",
               7: "rabenseifner"},
    "allreduce": {1: "basic_linear", 2: "nonoverlapping", 3: "recursive_doubling", 4: "ring",
                  5: "segmented_ring", 6: "rabenseifner"},
}

# MPICH algorithm names: the values of MPIR_CVAR_<COLL>_INTRA_ALGORITHM besides `auto`.
MPICH_ALGORITHMS = {
    "bcast": ["binomial", "nb", "smp", "scatter_recursive_doubling_allgather", "scatter_ring_allgather",
              "pipelined_tree", "tree"],
    "reduce": ["binomial", "nb", "smp", "reduce_scatter_gather"],
    "allreduce": ["nb", "smp", "recursive_doubling", "recursive_multiplying", "reduce_scatter_allgather", "tree",
                  "recexch", "ring", "k_reduce_scatter_allgather", "ccl"],
}
