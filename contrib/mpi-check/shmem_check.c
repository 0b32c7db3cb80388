/* OpenSHMEM between 2 PEs: put, get and an atomic add on symmetric memory,
 * each checked byte by byte */
#include <shmem.h>
#include <stdio.h>
#include <string.h>

#define LEN 65536

static unsigned char sym[LEN];
static long counter;

int main(void)
{
    static unsigned char local[LEN];
    int me, npes, peer, errors = 0;
    static int total;

    shmem_init();
    me   = shmem_my_pe();
    npes = shmem_n_pes();
    peer = (me + 1) % npes;

    for (size_t i = 0; i < LEN; ++i) {
        local[i] = (unsigned char)(i * 5 + me);
    }
    shmem_barrier_all();
    shmem_putmem(sym, local, LEN, peer);      /* into the next PE */
    shmem_barrier_all();
    for (size_t i = 0; i < LEN; ++i) {
        int from = (me + npes - 1) % npes;
        errors += (sym[i] != (unsigned char)(i * 5 + from));
    }
    memset(local, 0, LEN);
    shmem_getmem(local, sym, LEN, peer);      /* what the next PE got */
    for (size_t i = 0; i < LEN; ++i) {
        errors += (local[i] != (unsigned char)(i * 5 + me));
    }
    shmem_long_atomic_add(&counter, me + 1, 0);
    shmem_barrier_all();
    if (me == 0) {
        errors += (counter != (long)npes * (npes + 1) / 2);
    }
    shmem_int_atomic_add(&total, errors, 0);
    shmem_barrier_all();
    if (me == 0) {
        printf("shmem_check: %d PEs, put/get %d B and atomic add: %d data errors\n",
               npes, LEN, total);
    }
    shmem_finalize();
    return 0;
}
