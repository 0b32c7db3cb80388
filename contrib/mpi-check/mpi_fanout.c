/*
 * Every rank with every other: MPI_Alltoall of 4 KiB blocks and a ring of
 * 64 KiB MPI_Sendrecv, 20 rounds each, every byte checked. With 3 ranks
 * and one DCI per rank (UCX_DC_MLX5_NUM_DCI=1), a DCI reaches the DCTs of
 * two other hosts in turn (contrib/mpi-check.sh, "ompi-dc_x-fanout").
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define BLOCK  4096
#define RING   65536
#define ROUNDS 20

static unsigned char pattern(int from, int to, int round, int i)
{
    return (unsigned char)(from * 31 + to * 7 + round * 3 + i);
}

int main(int argc, char **argv)
{
    int rank, size, errors = 0, total = 0;
    unsigned char *sbuf, *rbuf;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    sbuf = malloc((size_t)size * BLOCK + RING);
    rbuf = malloc((size_t)size * BLOCK + RING);
    if ((sbuf == NULL) || (rbuf == NULL)) {
        MPI_Abort(MPI_COMM_WORLD, 1);
    }

    for (int r = 0; r < ROUNDS; ++r) {
        int next = (rank + 1) % size, prev = (rank + size - 1) % size;

        for (int d = 0; d < size; ++d) {
            for (int i = 0; i < BLOCK; ++i) {
                sbuf[d * BLOCK + i] = pattern(rank, d, r, i);
            }
        }
        MPI_Alltoall(sbuf, BLOCK, MPI_BYTE, rbuf, BLOCK, MPI_BYTE,
                     MPI_COMM_WORLD);
        for (int s = 0; s < size; ++s) {
            for (int i = 0; i < BLOCK; ++i) {
                errors += rbuf[s * BLOCK + i] != pattern(s, rank, r, i);
            }
        }

        for (int i = 0; i < RING; ++i) {
            sbuf[i] = pattern(rank, next, r, i);
        }
        MPI_Sendrecv(sbuf, RING, MPI_BYTE, next, r, rbuf, RING, MPI_BYTE,
                     prev, r, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int i = 0; i < RING; ++i) {
            errors += rbuf[i] != pattern(prev, rank, r, i);
        }
    }

    MPI_Reduce(&errors, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("mpi_fanout: %d ranks, all-to-all of %d B and a ring of %d B, "
               "%d rounds: %d data errors\n", size, BLOCK, RING, ROUNDS,
               total);
    }
    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return (total == 0) ? 0 : 1;
}
