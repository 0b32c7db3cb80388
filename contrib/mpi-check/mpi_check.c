/* ping-pong with data checks, and one-sided put/get and atomics (osc),
 * between 2 ranks */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int check(const unsigned char *b, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; ++i) {
        if (b[i] != (unsigned char)(i * 7 + seed)) {
            return 0;
        }
    }
    return 1;
}

/* rank 0 adds 1..100 to a counter in rank 1's window with
 * MPI_Fetch_and_op, each fetch checked, then swaps it with
 * MPI_Compare_and_swap (a compare that fails, then one that succeeds);
 * the errors seen */
static int atomics(int rank)
{
    const int64_t sum = 100 * 101 / 2;
    int64_t *counter, value, result, compare;
    int errors = 0;
    MPI_Win win;

    MPI_Win_allocate(sizeof(*counter), sizeof(*counter), MPI_INFO_NULL,
                     MPI_COMM_WORLD, &counter, &win);
    *counter = 0;
    MPI_Win_fence(0, win);
    if (rank == 0) {
        MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
        for (int64_t i = 1, expected = 0; i <= 100; expected += i, ++i) {
            MPI_Fetch_and_op(&i, &result, MPI_INT64_T, 1, 0, MPI_SUM, win);
            MPI_Win_flush(1, win);
            errors += (result != expected);
        }
        value   = -1;
        compare = 0; /* not the counter: no swap */
        MPI_Compare_and_swap(&value, &compare, &result, MPI_INT64_T, 1, 0, win);
        MPI_Win_flush(1, win);
        errors += (result != sum);
        compare = sum;
        MPI_Compare_and_swap(&value, &compare, &result, MPI_INT64_T, 1, 0, win);
        MPI_Win_unlock(1, win);
        errors += (result != sum);
    }
    MPI_Win_fence(0, win);
    if (rank == 1) {
        errors += (*counter != -1);
    }
    MPI_Win_free(&win);
    return errors;
}

int main(int argc, char **argv)
{
    int rank, size, errors = 0;
    size_t max = (argc > 1) ? strtoul(argv[1], NULL, 0) : (1 << 20);
    unsigned char *buf, *win_buf;
    MPI_Win win;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    buf = malloc(max);
    for (size_t n = 1; n <= max; n *= 4) {
        for (int iter = 0; iter < 20; ++iter) {
            unsigned seed = (unsigned)(n + iter);
            if (rank == 0) {
                for (size_t i = 0; i < n; ++i) buf[i] = (unsigned char)(i * 7 + seed);
                MPI_Send(buf, (int)n, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
                memset(buf, 0, n);
                MPI_Recv(buf, (int)n, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                errors += !check(buf, n, seed + 1);
            } else if (rank == 1) {
                MPI_Recv(buf, (int)n, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                errors += !check(buf, n, seed);
                for (size_t i = 0; i < n; ++i) buf[i] = (unsigned char)(i * 7 + seed + 1);
                MPI_Send(buf, (int)n, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
            }
        }
    }
    /* one-sided: rank 0 puts into rank 1's window, then gets it back */
    MPI_Win_allocate(65536, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win_buf, &win);
    memset(win_buf, 0, 65536);
    MPI_Win_fence(0, win);
    if (rank == 0) {
        for (size_t i = 0; i < 65536; ++i) buf[i] = (unsigned char)(i * 7 + 3);
        MPI_Put(buf, 65536, MPI_BYTE, 1, 0, 65536, MPI_BYTE, win);
    }
    MPI_Win_fence(0, win);
    if (rank == 1) errors += !check(win_buf, 65536, 3);
    if (rank == 0) {
        memset(buf, 0, 65536);
        MPI_Get(buf, 65536, MPI_BYTE, 1, 0, 65536, MPI_BYTE, win);
    }
    MPI_Win_fence(0, win);
    if (rank == 0) errors += !check(buf, 65536, 3);
    MPI_Win_free(&win);
    errors += atomics(rank);
    MPI_Allreduce(MPI_IN_PLACE, &errors, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) printf("mpi_check: %d ranks, ping-pong 1 B..%zu B x20, put/get 64 KiB, 100 fetch-and-add and 2 compare-and-swap: %d data errors\n", size, max, errors);
    free(buf);
    MPI_Finalize();
    return errors ? 1 : 0;
}
