/*
 * quadsel_blob.c: loader and query of quadsel decision blobs (see quadsel_blob.h, docs/formats-tree.md).
 * Every multi-byte field is read byte by byte as little-endian, so the blob needs no alignment and the
 * loader works on any host. Nothing of the blob is used before all of it has been checked.
 */
#include "quadsel_blob.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HEADER_BYTES 64u
#define MAX_FILE_BYTES (1u << 30) /* quadsel_tree_load_file reads at most 1 GiB */

typedef struct {
    uint32_t next;     /* first child, or the method index of a leaf */
    uint16_t comm_cut; /* index into comm_bound, 0 = no communicator cut */
    uint16_t msg_cut;  /* index into msg_bound, 0 = no message cut */
} node_t;

struct quadsel_tree {
    node_t *nodes;
    int *comm_bound;   /* [0] INT_MAX (no size exceeds it), [k] the largest size north of cut k */
    size_t *msg_bound; /* [0] SIZE_MAX, [k] the largest size west of cut k */
    int *alg;
    int *seg;
    char collective[16];
    int id_scheme;
};

static uint32_t get_u16(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8;
}

static uint32_t get_u32(const unsigned char *p)
{
    return get_u16(p) | get_u16(p + 2) << 16;
}

static uint64_t get_u64(const unsigned char *p)
{
    return (uint64_t)get_u32(p) | (uint64_t)get_u32(p + 4) << 32;
}

static int64_t get_i32(const unsigned char *p)
{
    uint32_t u = get_u32(p);
    return u <= 0x7FFFFFFFu ? (int64_t)u : (int64_t)u - 0x100000000;
}

static uint32_t crc32_of(const unsigned char *p, size_t n)
{
    uint32_t crc = 0xFFFFFFFFu;
    size_t i;
    int bit;
    for (i = 0; i < n; i++) {
        crc ^= p[i];
        for (bit = 0; bit < 8; bit++) {
            crc = (crc >> 1) ^ (0xEDB88320u & (uint32_t)(0u - (crc & 1u)));
        }
    }
    return crc ^ 0xFFFFFFFFu;
}

void quadsel_tree_free(quadsel_tree *tree)
{
    if (tree != NULL) {
        free(tree->nodes);
        free(tree->comm_bound);
        free(tree->msg_bound);
        free(tree->alg);
        free(tree->seg);
        free(tree);
    }
}

/* Whether n + 1 elements of `each` bytes can be allocated (32-bit hosts). */
static int fits(uint32_t n, size_t each)
{
    return ((uint64_t)n + 1) * each <= (uint64_t)SIZE_MAX / 2;
}

/* The arrays of a tree of these counts, or NULL. */
static quadsel_tree *allocate(uint32_t n_nodes, uint32_t n_comm, uint32_t n_msg, uint32_t n_methods)
{
    quadsel_tree *tree;
    if (!fits(n_nodes, sizeof(node_t)) || !fits(n_comm, sizeof(int)) || !fits(n_msg, sizeof(size_t)) ||
        !fits(n_methods, sizeof(int))) {
        return NULL;
    }
    tree = calloc(1, sizeof *tree);
    if (tree == NULL) {
        return NULL;
    }
    tree->nodes = malloc((size_t)n_nodes * sizeof(node_t));
    tree->comm_bound = malloc(((size_t)n_comm + 1) * sizeof(int));
    tree->msg_bound = malloc(((size_t)n_msg + 1) * sizeof(size_t));
    tree->alg = malloc((size_t)n_methods * sizeof(int));
    tree->seg = malloc((size_t)n_methods * sizeof(int));
    if (!tree->nodes || !tree->comm_bound || !tree->msg_bound || !tree->alg || !tree->seg) {
        quadsel_tree_free(tree);
        return NULL;
    }
    return tree;
}

/* Thresholds, methods and nodes from the body at p; QUADSEL_BLOB_ESTRUCTURE if any is out of range. */
static int read_body(quadsel_tree *tree, const unsigned char *p, uint32_t node_bytes, uint32_t n_nodes,
                     uint32_t n_comm, uint32_t n_msg, uint32_t n_methods)
{
    uint64_t previous = 0, value;
    uint32_t k, expected = 1;
    tree->msg_bound[0] = SIZE_MAX;
    for (k = 0; k < n_msg; k++, p += 8) {
        value = get_u64(p);
        if (value <= previous) {
            return QUADSEL_BLOB_ESTRUCTURE; /* cuts are increasing and >= 1 */
        }
#if SIZE_MAX < UINT64_MAX
        if (value - 1 > (uint64_t)SIZE_MAX) {
            return QUADSEL_BLOB_ESTRUCTURE; /* a message size this host's size_t cannot hold */
        }
#endif
        tree->msg_bound[k + 1] = (size_t)(value - 1);
        previous = value;
    }
    tree->comm_bound[0] = INT_MAX;
    for (previous = 0, k = 0; k < n_comm; k++, p += 4) {
        int64_t cut = get_i32(p);
        if (cut <= (int64_t)previous) {
            return QUADSEL_BLOB_ESTRUCTURE;
        }
        tree->comm_bound[k + 1] = (int)(cut - 1);
        previous = (uint64_t)cut;
    }
    for (k = 0; k < n_methods; k++, p += 8) {
        int64_t seg = get_i32(p + 4);
        if (seg < 0) {
            return QUADSEL_BLOB_ESTRUCTURE;
        }
        tree->alg[k] = (int)get_i32(p);
        tree->seg[k] = (int)seg;
    }
    for (k = 0; k < n_nodes; k++, p += node_bytes) {
        node_t *node = &tree->nodes[k];
        node->next = node_bytes == 4 ? get_u16(p) : get_u32(p);
        node->comm_cut = (uint16_t)(node_bytes == 4 ? p[2] : get_u16(p + 4));
        node->msg_cut = (uint16_t)(node_bytes == 4 ? p[3] : get_u16(p + 6));
        if (node->comm_cut > n_comm || node->msg_cut > n_msg) {
            return QUADSEL_BLOB_ESTRUCTURE;
        }
        if (node->comm_cut == 0 && node->msg_cut == 0) {
            if (node->next >= n_methods) {
                return QUADSEL_BLOB_ESTRUCTURE;
            }
            continue;
        }
        /* breadth-first: the children of an internal node come after it and right after the previous one's */
        if (node->next <= k || node->next != expected ||
            n_nodes - expected < (node->comm_cut ? 2u : 1u) * (node->msg_cut ? 2u : 1u)) {
            return QUADSEL_BLOB_ESTRUCTURE;
        }
        expected += (node->comm_cut ? 2u : 1u) * (node->msg_cut ? 2u : 1u);
    }
    return expected == n_nodes ? QUADSEL_BLOB_OK : QUADSEL_BLOB_ESTRUCTURE;
}

int quadsel_tree_load(quadsel_tree **out, const void *data, size_t size)
{
    const unsigned char *p = data;
    uint32_t version, node_bytes, n_nodes, n_comm, n_msg, n_methods, id_scheme, file_bytes, k;
    uint64_t need;
    quadsel_tree *tree;
    int status;

    if (out == NULL) {
        return QUADSEL_BLOB_ESTRUCTURE;
    }
    *out = NULL;
    if (p == NULL || size < HEADER_BYTES + 4) {
        return QUADSEL_BLOB_ETRUNCATED;
    }
    if (memcmp(p, "QSELTREE", 8) != 0) {
        return QUADSEL_BLOB_EMAGIC;
    }
    version = get_u16(p + 8);
    node_bytes = get_u16(p + 10);
    if (version != QUADSEL_BLOB_VERSION || (node_bytes != 4 && node_bytes != 8) || get_u32(p + 12) != HEADER_BYTES) {
        return QUADSEL_BLOB_EVERSION;
    }
    n_nodes = get_u32(p + 16);
    n_comm = get_u32(p + 20);
    n_msg = get_u32(p + 24);
    n_methods = get_u32(p + 28);
    id_scheme = get_u32(p + 32);
    file_bytes = get_u32(p + 36);
    if (file_bytes > size) {
        return QUADSEL_BLOB_ETRUNCATED;
    }
    need = HEADER_BYTES + 8 * (uint64_t)n_msg + 4 * (uint64_t)n_comm + 8 * (uint64_t)n_methods +
           (uint64_t)node_bytes * n_nodes + 4;
    if (file_bytes != size || need != file_bytes) {
        return QUADSEL_BLOB_ESIZE;
    }
    if (crc32_of(p, size - 4) != get_u32(p + size - 4)) {
        return QUADSEL_BLOB_ECHECKSUM;
    }
    if (n_nodes == 0 || n_methods == 0 || id_scheme > QUADSEL_IDS_INTELMPI ||
        n_comm > (node_bytes == 4 ? 0xFFu : 0xFFFFu) || n_msg > (node_bytes == 4 ? 0xFFu : 0xFFFFu)) {
        return QUADSEL_BLOB_ESTRUCTURE;
    }
    /* collective: 1 to 15 of [a-z0-9_], then NUL padding and the reserved bytes, all 0 */
    for (k = 40; k < 56 && ((p[k] >= 'a' && p[k] <= 'z') || (p[k] >= '0' && p[k] <= '9') || p[k] == '_'); k++) {
    }
    if (k == 40 || k == 56) {
        return QUADSEL_BLOB_ESTRUCTURE;
    }
    for (; k < HEADER_BYTES; k++) {
        if (p[k] != 0) {
            return QUADSEL_BLOB_ESTRUCTURE;
        }
    }
    tree = allocate(n_nodes, n_comm, n_msg, n_methods);
    if (tree == NULL) {
        return QUADSEL_BLOB_ENOMEM;
    }
    status = read_body(tree, p + HEADER_BYTES, node_bytes, n_nodes, n_comm, n_msg, n_methods);
    if (status != QUADSEL_BLOB_OK) {
        quadsel_tree_free(tree);
        return status;
    }
    memcpy(tree->collective, p + 40, 16);
    tree->id_scheme = (int)id_scheme;
    *out = tree;
    return QUADSEL_BLOB_OK;
}

int quadsel_tree_load_file(quadsel_tree **out, const char *path)
{
    FILE *file;
    unsigned char *data = NULL, *grown;
    size_t size = 0, capacity = 0, got;
    int status;

    if (out != NULL) {
        *out = NULL;
    }
    file = path != NULL ? fopen(path, "rb") : NULL;
    if (file == NULL) {
        return QUADSEL_BLOB_EIO;
    }
    do {
        if (size == capacity) {
            capacity = capacity ? 2 * capacity : 4096;
            grown = capacity <= MAX_FILE_BYTES ? realloc(data, capacity) : NULL;
            if (grown == NULL) {
                free(data);
                fclose(file);
                return capacity <= MAX_FILE_BYTES ? QUADSEL_BLOB_ENOMEM : QUADSEL_BLOB_ESIZE;
            }
            data = grown;
        }
        got = fread(data + size, 1, capacity - size, file);
        size += got;
    } while (got > 0);
    status = ferror(file) ? QUADSEL_BLOB_EIO : quadsel_tree_load(out, data, size);
    fclose(file);
    free(data);
    return status;
}

int quadsel_tree_decide(const quadsel_tree *tree, int comm_size, size_t msg_size, int *segsize)
{
    const node_t *nodes = tree->nodes;
    const int *comm_bound = tree->comm_bound;
    const size_t *msg_bound = tree->msg_bound;
    size_t node = 0;
    unsigned comm_cut = nodes[0].comm_cut, msg_cut = nodes[0].msg_cut;
    while (comm_cut | msg_cut) {
        unsigned south = comm_size > comm_bound[comm_cut];
        unsigned east = msg_size > msg_bound[msg_cut];
        node = nodes[node].next + (south << (msg_cut != 0)) + east;
        comm_cut = nodes[node].comm_cut;
        msg_cut = nodes[node].msg_cut;
    }
    if (segsize != NULL) {
        *segsize = tree->seg[nodes[node].next];
    }
    return tree->alg[nodes[node].next];
}

const char *quadsel_tree_collective(const quadsel_tree *tree)
{
    return tree->collective;
}

int quadsel_tree_id_scheme(const quadsel_tree *tree)
{
    return tree->id_scheme;
}

const char *quadsel_blob_strerror(int code)
{
    switch (code) {
    case QUADSEL_BLOB_OK: return "ok";
    case QUADSEL_BLOB_ETRUNCATED: return "truncated blob";
    case QUADSEL_BLOB_EMAGIC: return "not a quadsel blob";
    case QUADSEL_BLOB_EVERSION: return "unsupported blob version or node layout";
    case QUADSEL_BLOB_ESIZE: return "blob size does not match its counts";
    case QUADSEL_BLOB_ECHECKSUM: return "blob checksum mismatch (corrupt)";
    case QUADSEL_BLOB_ESTRUCTURE: return "blob structure out of range (corrupt)";
    case QUADSEL_BLOB_ENOMEM: return "out of memory";
    case QUADSEL_BLOB_EIO: return "cannot read the blob file";
    default: return "unknown error";
    }
}
