/* The few Open MPI types and functions a --flavor ompi-tuned decision uses, declared as coll/tuned 5.0.x
 * declares them (types opaque). Lets tests compile the generated file without an Open MPI source tree. */
#ifndef QUADSEL_OMPI_TUNED_STUB_H
#define QUADSEL_OMPI_TUNED_STUB_H

#include <stddef.h>

#ifndef QUADSEL_OMPI_COUNT_T
#define QUADSEL_OMPI_COUNT_T int
#endif

struct ompi_datatype_t;
struct ompi_communicator_t;
struct ompi_op_t;
typedef struct mca_coll_base_module_2_4_0_t mca_coll_base_module_t;

int ompi_comm_size(const struct ompi_communicator_t *comm);
int ompi_datatype_type_size(const struct ompi_datatype_t *type, size_t *size);
int ompi_op_is_commute(const struct ompi_op_t *op);

int ompi_coll_tuned_bcast_intra_do_this(void *buf, QUADSEL_OMPI_COUNT_T count, struct ompi_datatype_t *dtype,
                                        int root, struct ompi_communicator_t *comm, mca_coll_base_module_t *module,
                                        int algorithm, int faninout, int segsize);
int ompi_coll_tuned_reduce_intra_do_this(const void *sbuf, void *rbuf, QUADSEL_OMPI_COUNT_T count,
                                         struct ompi_datatype_t *dtype, struct ompi_op_t *op, int root,
                                         struct ompi_communicator_t *comm, mca_coll_base_module_t *module,
                                         int algorithm, int faninout, int segsize, int max_requests);
int ompi_coll_tuned_allreduce_intra_do_this(const void *sbuf, void *rbuf, QUADSEL_OMPI_COUNT_T count,
                                            struct ompi_datatype_t *dtype, struct ompi_op_t *op,
                                            struct ompi_communicator_t *comm, mca_coll_base_module_t *module,
                                            int algorithm, int faninout, int segsize);

#endif
