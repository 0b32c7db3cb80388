/* OpenSHMEM between 2 PEs, each result checked: a ping-pong of puts and
 * flags from 1 B to LEN, a put and a get of LEN bytes, an atomic add, 100
 * fetch-and-adds whose returned values must be distinct and complete, and
 * compare-and-swaps of which exactly one per round must win */
#include <shmem.h>
#include <stdio.h>
#include <string.h>

#define LEN     65536
#define ROUNDS  20
#define FETCHES 100

static unsigned char sym[LEN];
static unsigned char ball[LEN];
static long          ball_seq;
static long          counter;
static long          fetched;
static long          swapped;
static unsigned char seen[FETCHES * 2];  /* on PE 0: each fetched value */
static int           total;

static unsigned char pattern(size_t i, int seq)
{
    return (unsigned char)(i * 7 + seq);
}

/* PE 0 sends a ball of every size, PE 1 checks it and returns it */
static int ping_pong(int me)
{
    static unsigned char local[LEN];
    int errors = 0, seq = 0;

    for (size_t size = 1; size <= LEN; size *= 4) {
        for (int r = 0; r < ROUNDS; ++r, ++seq) {
            int mine = (me == 0) ? (seq % 2 == 0) : (seq % 2 == 1);

            if (mine) {
                for (size_t i = 0; i < size; ++i) {
                    local[i] = pattern(i, seq);
                }
                shmem_putmem(ball, local, size, 1 - me);
                shmem_fence();
                shmem_long_p(&ball_seq, seq + 1, 1 - me);
            } else {
                shmem_long_wait_until(&ball_seq, SHMEM_CMP_EQ, seq + 1);
                for (size_t i = 0; i < size; ++i) {
                    errors += (ball[i] != pattern(i, seq));
                }
            }
        }
    }
    return errors;
}

int main(void)
{
    static unsigned char local[LEN];
    int me, npes, peer, from, errors = 0, wins;

    shmem_init();
    me   = shmem_my_pe();
    npes = shmem_n_pes();
    peer = (me + 1) % npes;
    from = (me + npes - 1) % npes;

    if (npes == 2) {
        errors += ping_pong(me);
    }
    shmem_barrier_all();

    for (size_t i = 0; i < LEN; ++i) {
        local[i] = (unsigned char)(i * 5 + me);
    }
    shmem_putmem(sym, local, LEN, peer);      /* into the next PE */
    shmem_barrier_all();
    for (size_t i = 0; i < LEN; ++i) {
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

    /* every PE fetch-adds 1 on PE 0 FETCHES times: the old values seen by
     * all PEs together are 0 .. npes*FETCHES-1, each once */
    for (int i = 0; i < FETCHES; ++i) {
        long old = shmem_long_atomic_fetch_add(&fetched, 1, 0);

        if ((old < 0) || (old >= (long)sizeof(seen))) {
            ++errors;
            continue;
        }
        shmem_char_p((char*)&seen[old], 1, 0);
    }
    shmem_barrier_all();
    if (me == 0) {
        errors += (fetched != (long)npes * FETCHES);
        for (int i = 0; (npes <= 2) && (i < npes * FETCHES); ++i) {
            errors += (seen[i] != 1);
        }
    }

    /* each round every PE tries to swap round -> round + 1 on PE 0: one wins */
    for (long round = 0; round < 10; ++round) {
        long old = shmem_long_atomic_compare_swap(&swapped, round, round + 1, 0);

        wins = (old == round);
        shmem_int_atomic_add(&total, 1000 * wins, 0);
        shmem_barrier_all();
    }
    if (me == 0) {
        errors += (swapped != 10) + (total != 10 * 1000);
        total = 0;
    }
    shmem_barrier_all();

    shmem_int_atomic_add(&total, errors, 0);
    shmem_barrier_all();
    if (me == 0) {
        printf("shmem_check: %d PEs, ping-pong 1 B..%d B x%d, put/get %d B, "
               "atomic add, %d fetch-adds, 10 compare-swap rounds: "
               "%d data errors\n", npes, LEN, ROUNDS, LEN, npes * FETCHES,
               total);
    }
    shmem_finalize();
    return 0;
}
