/*
 * The benchmark's baseline (-b): address handles kept per destination, the
 * way the library resolved a RoCE destination before connects used a
 * transient AH. It lives only in the benchmark, never in the library.
 *
 * What the old connect path did at every connect, this does too: find the
 * AH by its whole ibv_ah_attr (a hash table keyed by the destination GID and
 * LID, every field compared) and read its address vector through
 * mlx5dv_init_obj into a copy. The old cache also took a lock around the
 * lookup; one thread runs here, so it is left out, which can only make the
 * baseline cheaper.
 *
 * The instruction probe counts this class's functions as part of the
 * baseline's connect path (bench_probe.h), by name: in the old library the
 * lookup was library code.
 */
#ifndef UCX_CONNECT_BENCH_BASELINE_AH_CACHE_H_
#define UCX_CONNECT_BENCH_BASELINE_AH_CACHE_H_

#include <uct/api/tools/ib_glue.h>

#include <string>
#include <vector>

namespace bench {

class baseline_ah_cache {
public:
    /* AHs on @a pd; @a name (the device and port) is for messages */
    baseline_ah_cache(struct ibv_pd *pd, std::string name);
    ~baseline_ah_cache();

    baseline_ah_cache(const baseline_ah_cache&)            = delete;
    baseline_ah_cache &operator=(const baseline_ah_cache&) = delete;

    /*
     * Copy the address vector of the AH for @a attr to @a av, creating the
     * AH the first time @a attr is asked for. False, with the failure on
     * stderr, if the AH cannot be created or read.
     */
    bool get_av(const struct ibv_ah_attr &attr, struct mlx5_wqe_av *av);

    /* Whether a function (as callgrind names it) is this class's code */
    static bool is_own_function(const std::string &name);

private:
    struct slot {
        struct ibv_ah_attr attr;
        struct ibv_ah      *ah;  /* NULL: free */
    };

    static uint64_t hash(const struct ibv_ah_attr &attr);
    static bool equal(const struct ibv_ah_attr &a, const struct ibv_ah_attr &b);

    slot *find(const struct ibv_ah_attr &attr);
    void insert(const struct ibv_ah_attr &attr, struct ibv_ah *ah);
    void grow();

    struct ibv_pd     *m_pd;
    std::string       m_name;
    std::vector<slot> m_slots; /* open addressing, a power of two */
    size_t            m_count = 0;
};

} // namespace bench

#endif
