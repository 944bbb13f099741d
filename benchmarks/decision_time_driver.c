/*
 * Driver of benchmarks/decision_time.py: times every decision form in one process on the same query streams.
 * The script prepends the declarations and the form table (FORMS, N_FORMS); each form is in its own
 * translation unit, so every decision is a real call. Modes:
 *   check BLOB            stdin "comm msg" lines -> one line per query: "alg seg" of every form
 *   time BLOB Q CALLS R C0 C1 M0 M1   R rounds: every form x stream, forms in a rotating order;
 *                         prints "round form stream ns_per_call"
 *   one BLOB Q CALLS FORM STREAM C0 C1 M0 M1   CALLS decisions of one form (for callgrind)
 * Streams over comm in [C0, C1], msg in [M0, M1]: 0 uniform (the paper's Table 3), 1 log-uniform message
 * sizes, 2 repeated (16 distinct queries of stream 0, over and over: what one application does).
 */
#define _POSIX_C_SOURCE 199309L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "quadsel_blob.h"

/* FORMS */

#define N_STREAMS 3
static quadsel_tree *blob;
static unsigned long long lcg = 12345;

static unsigned long long next_random(void)
{
    lcg = lcg * 6364136223846793005ULL + 1442695040888963407ULL;
    return lcg >> 33;
}

static int call(int form, int comm, size_t msg, int *seg)
{
    return FORMS[form].fn ? FORMS[form].fn(comm, msg, seg) : quadsel_tree_decide(blob, comm, msg, seg);
}

static void make_streams(int *comm[], size_t *msg[], long q, long c0, long c1, double m0, double m1)
{
    long i, s;
    for (s = 0; s < N_STREAMS; s++) {
        comm[s] = malloc(sizeof(int) * (size_t)q);
        msg[s] = malloc(sizeof(size_t) * (size_t)q);
    }
    for (i = 0; i < q; i++) {
        double u = (double)next_random() / 2147483648.0;
        comm[0][i] = (int)(c0 + (long)(next_random() % (unsigned long long)(c1 - c0 + 1)));
        msg[0][i] = (size_t)(m0 + (double)(next_random() % (unsigned long long)(m1 - m0 + 1)));
        comm[1][i] = comm[0][i];
        msg[1][i] = (size_t)(m0 * pow(m1 / m0, u));
        comm[2][i] = comm[0][i % 16];
        msg[2][i] = msg[0][i % 16];
    }
}

/* ns per decision of `form` over `calls` decisions cycling through the q queries of one stream */
static double time_form(int form, const int *comm, const size_t *msg, long q, long calls, long *sink)
{
    struct timespec a, b;
    long i, sum = 0;
    int seg = 0;
    unsigned long mask = (unsigned long)q - 1;
    decide_fn fn = FORMS[form].fn;
    clock_gettime(CLOCK_MONOTONIC, &a);
    if (fn != NULL) {
        for (i = 0; i < calls; i++) {
            sum += fn(comm[i & mask], msg[i & mask], &seg) + seg;
        }
    } else {
        for (i = 0; i < calls; i++) {
            sum += quadsel_tree_decide(blob, comm[i & mask], msg[i & mask], &seg) + seg;
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &b);
    *sink += sum;
    return ((double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec)) / (double)calls;
}

int main(int argc, char **argv)
{
    int *comm[N_STREAMS];
    size_t *msg[N_STREAMS];
    long q, calls, rounds, r, sink = 0;
    int f, s, seg, status;
    if (argc < 3 || (status = quadsel_tree_load_file(&blob, argv[2])) != QUADSEL_BLOB_OK) {
        fprintf(stderr, "usage: driver check|time|one BLOB ...\n");
        return 2;
    }
    if (strcmp(argv[1], "check") == 0) {
        long c;
        unsigned long long m;
        while (scanf("%ld %llu", &c, &m) == 2) {
            for (f = 0; f < N_FORMS; f++) {
                int alg = call(f, (int)c, (size_t)m, &seg);
                printf("%s%d %d", f ? " " : "", alg, seg);
            }
            printf("\n");
        }
        return 0;
    }
    q = atol(argv[3]);
    calls = atol(argv[4]);
    if (strcmp(argv[1], "time") == 0 && argc == 10) {
        rounds = atol(argv[5]);
        make_streams(comm, msg, q, atol(argv[6]), atol(argv[7]), atof(argv[8]), atof(argv[9]));
        for (r = 0; r < rounds; r++) {
            for (f = 0; f < N_FORMS; f++) {
                int form = (int)((f + r) % N_FORMS);
                for (s = 0; s < N_STREAMS; s++) {
                    printf("%ld %s %d %.4f\n", r, FORMS[form].name, s, time_form(form, comm[s], msg[s], q, calls, &sink));
                }
            }
        }
    } else if (strcmp(argv[1], "one") == 0 && argc == 11) {
        make_streams(comm, msg, q, atol(argv[7]), atol(argv[8]), atof(argv[9]), atof(argv[10]));
        time_form(atoi(argv[5]), comm[atoi(argv[6])], msg[atoi(argv[6])], q, calls, &sink);
    } else {
        fprintf(stderr, "bad arguments\n");
        return 2;
    }
    fprintf(stderr, "checksum %ld\n", sink);
    quadsel_tree_free(blob);
    return 0;
}
