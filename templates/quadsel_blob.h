/*
 * quadsel_blob.h: load a quadsel decision blob (`quadsel codegen TREE -t blob`) and query it.
 *
 * The blob is the quadtree's compact node table (docs/formats-tree.md, "Loadable blob"): a library reads it
 * at start-up instead of compiling generated C. quadsel_tree_load checks the whole blob before use (magic,
 * version, sizes, checksum, thresholds increasing, every child index in range and the breadth-first layout,
 * every method index in range) and rejects a corrupt one; a loaded tree answers exactly what the tree file
 * answers in `quadsel query`. C99, no dependencies beyond the C library.
 */
#ifndef QUADSEL_BLOB_H
#define QUADSEL_BLOB_H

#include <stddef.h>

#define QUADSEL_BLOB_VERSION 1

/* what quadsel_tree_load returns */
#define QUADSEL_BLOB_OK 0
#define QUADSEL_BLOB_ETRUNCATED (-1)  /* shorter than its header or than its header says */
#define QUADSEL_BLOB_EMAGIC (-2)      /* not a quadsel blob */
#define QUADSEL_BLOB_EVERSION (-3)    /* a version or node layout this loader does not know */
#define QUADSEL_BLOB_ESIZE (-4)       /* counts and file size disagree */
#define QUADSEL_BLOB_ECHECKSUM (-5)   /* CRC-32 mismatch: the bytes were changed */
#define QUADSEL_BLOB_ESTRUCTURE (-6)  /* thresholds, child or method indices out of range or out of order */
#define QUADSEL_BLOB_ENOMEM (-7)
#define QUADSEL_BLOB_EIO (-8)         /* quadsel_tree_load_file: the file cannot be read */

/* what the returned algorithm ids are (quadsel_tree_id_scheme) */
#define QUADSEL_IDS_QUADSEL 0  /* the input's numeric names (another library's own ids), or quadsel's 1..n */
#define QUADSEL_IDS_OPENMPI 1  /* Open MPI coll/tuned algorithm ids */
#define QUADSEL_IDS_MPICH 2    /* values of MPICH's MPIR_CVAR_<COLL>_INTRA_ALGORITHM */
#define QUADSEL_IDS_INTELMPI 3 /* Intel MPI I_MPI_ADJUST_<COLL> preset ids */

typedef struct quadsel_tree quadsel_tree;

/* Check `size` bytes at `data` and, if they are a valid blob, set *tree to a new tree (free it with
 * quadsel_tree_free). Returns QUADSEL_BLOB_OK or a negative QUADSEL_BLOB_E* code (then *tree is NULL). */
int quadsel_tree_load(quadsel_tree **tree, const void *data, size_t size);

/* quadsel_tree_load on the contents of a file. */
int quadsel_tree_load_file(quadsel_tree **tree, const char *path);

void quadsel_tree_free(quadsel_tree *tree);

/* The algorithm id chosen for (comm_size, msg_size); the segment size (bytes, 0 = none) through segsize
 * unless it is NULL. Sizes outside the measured range take the nearest boundary (paper section 3.2). */
int quadsel_tree_decide(const quadsel_tree *tree, int comm_size, size_t msg_size, int *segsize);

/* The collective the tree decides ("bcast", ...) and its QUADSEL_IDS_* scheme. */
const char *quadsel_tree_collective(const quadsel_tree *tree);
int quadsel_tree_id_scheme(const quadsel_tree *tree);

/* One line of text for a QUADSEL_BLOB_* code. */
const char *quadsel_blob_strerror(int code);

#endif
