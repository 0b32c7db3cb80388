/*
 * The validated address-vector cache (UCX_IB_AH_CACHE=validated,
 * docs/architecture.md, section 4): the mlx5 AVs of RoCE destinations,
 * kept only while the kernel's neighbour table says the MAC they carry is
 * still the neighbour's.
 *
 * Each entry is keyed by (port, GID index, destination GID, traffic class,
 * hop limit, flow label) and tagged with the neighbour it was resolved
 * through: the destination's IP address on the GID's network interface,
 * confirmed by asking the neighbour table after the AH was made (a
 * destination reached through a router, or one the table does not confirm,
 * is not cached). A listener on the neighbour group (through the glue
 * table) is drained at the start of every lookup, under the lock the lookup
 * holds: an entry whose neighbour was deleted, failed, or now has another
 * MAC is dropped before the lookup can return it. So once an event has been
 * queued to the listener, no later lookup returns the MAC it replaced. The
 * AH of a miss is made outside the lock; the drain before its confirmation
 * and insert catches what changed meanwhile, since events are compared with
 * an entry's MAC, not with an order.
 *
 * If the listener cannot be opened, fails, loses events (ENOBUFS), falls
 * more than 65536 datagrams behind, or gives a malformed message, or the
 * kernel answers no single-neighbour request, the cache is flushed, warns
 * once, and from then on every lookup resolves through a transient AH.
 * With a flow label of 0 the AV's RoCEv2 UDP source port is the one the
 * first AH drew, for every connect to that destination.
 */
#ifndef UCT_IB_AV_CACHE_H_
#define UCT_IB_AV_CACHE_H_

#include "ib_device.h"
#include "ib_neigh.h"

#include <uct/api/tools/ib_ah_cache.h>

#include <ucs/debug/log_def.h>

#include <cstdint>
#include <cstring>
#include <map>
#include <mutex>
#include <vector>


class uct_ib_av_cache {
public:
    /* At most this many entries; a miss beyond it is not cached */
    static constexpr size_t MAX_ENTRIES = 16384;

    /** A cache of @a dev; the listener is opened now (a failure leaves the
     *  cache transient, with one warning). Never fails. */
    explicit uct_ib_av_cache(const uct_ib_device &dev);
    ~uct_ib_av_cache();

    uct_ib_av_cache(const uct_ib_av_cache&)            = delete;
    uct_ib_av_cache &operator=(const uct_ib_av_cache&) = delete;

    /**
     * The AV of @a attr (global, with its port and source GID index set):
     * a copy from the cache, or from a transient AH made now. Errors as
     * uct_ib_transient_ah::create(), logged at @a fail_level.
     */
    [[nodiscard]] ucs_status_t resolve(struct ibv_pd *pd,
                                       const struct ibv_ah_attr &attr,
                                       struct mlx5_wqe_av *av,
                                       ucs_log_level_t fail_level);

    uct_ib_av_cache_stats_t stats() const;

private:
    /* Compared as bytes, destination GID first, so that the entries of one
     * neighbour are adjacent; everything the AV carries that the caller
     * chooses is in it (the hop limit is an interface's knob) */
    struct key {
        uint8_t  dgid[16];
        uint8_t  port_num;
        uint8_t  gid_index;
        uint8_t  tclass;
        uint8_t  hop_limit;
        uint32_t flow_label;

        key(const uint8_t *gid, uint8_t port, uint8_t index, uint8_t tc,
            uint8_t hops, uint32_t fl);
        bool operator<(const key &other) const
        {
            return memcmp(this, &other, sizeof(*this)) < 0;
        }
    };

    struct entry {
        struct mlx5_wqe_av av;
        uint32_t           ifindex; /* of the GID's interface */
    };

    void drain_locked(uint8_t port_num);
    void apply_locked(const uct_ib_neigh_msg &msg);
    void drop_neighbour_locked(uint32_t ifindex, const uct_ib_neigh_addr &dst,
                               const uint8_t *keep_mac);
    bool confirm_locked(uint8_t port_num, uint32_t ifindex,
                        const uct_ib_neigh_addr &dst, const uint8_t *mac);
    /* err 0: no errno to report */
    void fall_back_locked(uint8_t port_num, const char *what, int err);
    void close_listener_locked();
    /* "mlx5_0:1", or every port of the device for port_num 0 */
    std::string where(uint8_t port_num) const;
    uint32_t ifindex_of(uint8_t port_num, unsigned gid_index) const;

    const uct_ib_device      &m_dev;
    mutable std::mutex       m_lock;
    int                      m_fd        = -1;
    bool                     m_transient = false;
    uint32_t                 m_seq       = 0;
    std::map<key, entry>     m_entries;
    uct_ib_av_cache_stats_t  m_stats     = {};

    /* the answer to the request in flight (confirm_locked) */
    uint32_t                 m_wait_seq  = 0;
    bool                     m_answered  = false;
    uct_ib_neigh_msg         m_answer    = {};
};

#endif
