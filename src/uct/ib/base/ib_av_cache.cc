/* The validated AV cache; see ib_av_cache.h for the ordering it keeps. */
#include "ib_av_cache.h"
#include "ib_ah.h"

#include <ucs/debug/assert.h>

#include <cerrno>
#include <cstring>

namespace {

/* One datagram of the listener: neighbour messages are about 80 bytes, the
 * kernel sends one per datagram */
constexpr size_t RECV_BUF = 8192;

/* Datagrams one drain reads at most: more queued than this means the
 * events come faster than connects read them (the listener falls behind) */
constexpr unsigned MAX_DRAIN = 65536;

std::string mac_str(const uint8_t *mac)
{
    char buf[18];

    snprintf(buf, sizeof(buf), "%02x:%02x:%02x:%02x:%02x:%02x", mac[0],
             mac[1], mac[2], mac[3], mac[4], mac[5]);
    return buf;
}

} // namespace

uct_ib_av_cache::key::key(const uint8_t *gid, uint8_t port, uint8_t index,
                          uint8_t tc, uint8_t hops, uint32_t fl)
{
    static_assert(sizeof(key) == 24, "no padding the constructor misses");
    memcpy(dgid, gid, sizeof(dgid));
    port_num   = port;
    gid_index  = index;
    tclass     = tc;
    hop_limit  = hops;
    flow_label = fl;
}

uct_ib_av_cache::uct_ib_av_cache(const uct_ib_device &dev) : m_dev(dev)
{
    std::lock_guard<std::mutex> guard(m_lock);

    m_fd = uct_ib_glue->neigh_monitor_open(dev.context());
    if (m_fd < 0) {
        m_fd = -1;
        fall_back_locked(0, "cannot listen to neighbour events: "
                         "socket(NETLINK_ROUTE)", errno);
    }
}

uct_ib_av_cache::~uct_ib_av_cache()
{
    close_listener_locked();
}

std::string uct_ib_av_cache::where(uint8_t port_num) const
{
    std::string ports;

    if (port_num != 0) {
        return m_dev.port_name(port_num);
    }
    for (const uct_ib_port &port : m_dev.ports()) {
        ports += (ports.empty() ? "" : ",") + m_dev.port_name(port.port_num);
    }
    return ports;
}

void uct_ib_av_cache::close_listener_locked()
{
    if ((m_fd >= 0) && (uct_ib_glue->neigh_monitor_close(m_fd) != 0)) {
        ucs_warn("%s: close() of the neighbour listener failed: %m",
                 where(0).c_str());
    }
    m_fd = -1;
}

uct_ib_av_cache_stats_t uct_ib_av_cache::stats() const
{
    std::lock_guard<std::mutex> guard(m_lock);
    uct_ib_av_cache_stats_t     stats = m_stats;

    stats.entries   = m_entries.size();
    stats.transient = m_transient;
    return stats;
}

uint32_t uct_ib_av_cache::ifindex_of(uint8_t port_num, unsigned gid_index) const
{
    const struct ibv_gid_entry *entry = m_dev.gid_entry(port_num, gid_index);

    return (entry != nullptr) ? entry->ndev_ifindex : 0;
}

/*
 * The lock covers the drain and the lookup, and then the drain, the
 * confirmation and the insert; the AH is made between the two, unlocked (on
 * hardware its create may wait for ARP). What changes meanwhile is caught as
 * everywhere else: the entry is compared with each event by its MAC.
 */
ucs_status_t uct_ib_av_cache::resolve(struct ibv_pd *pd,
                                      const struct ibv_ah_attr &attr,
                                      struct mlx5_wqe_av *av,
                                      ucs_log_level_t fail_level)
{
    const key           k(attr.grh.dgid.raw, attr.port_num,
                          attr.grh.sgid_index, attr.grh.traffic_class,
                          attr.grh.hop_limit, attr.grh.flow_label);
    uct_ib_transient_ah ah(m_dev, attr.port_num);
    struct ibv_ah_attr  ah_attr = attr;
    struct mlx5_wqe_av  *ah_av  = nullptr;
    ucs_status_t        status;

    ucs_assert(attr.is_global);
    {
        std::lock_guard<std::mutex> guard(m_lock);

        ++m_stats.lookups;
        drain_locked(attr.port_num); /* before the lookup: see the header */
        if (!m_transient) {
            auto it = m_entries.find(k);
            if (it != m_entries.end()) {
                ++m_stats.hits;
                *av = it->second.av;
                return UCS_OK;
            }
        }
        ++m_stats.ah_creates;
    }

    status = ah.create(pd, &ah_attr, fail_level);
    if (status != UCS_OK) {
        return status;
    }
    status = ah.av(&ah_av);
    if (status != UCS_OK) {
        return status;
    }
    *av = *ah_av;
    ah.destroy();

    std::lock_guard<std::mutex> guard(m_lock);
    const uct_ib_neigh_addr     dst     = uct_ib_neigh_addr_of_gid(attr.grh.dgid);
    const uint32_t              ifindex = ifindex_of(attr.port_num,
                                                     attr.grh.sgid_index);

    if (m_transient || (ifindex == 0) || (m_entries.size() >= MAX_ENTRIES) ||
        !confirm_locked(attr.port_num, ifindex, dst, av->rmac)) {
        ++m_stats.uncached;
        return UCS_OK;
    }

    m_entries[k] = entry{*av, ifindex};
    ucs_trace("%s: cached the AV of %s: mac %s",
              m_dev.port_name(attr.port_num).c_str(),
              uct_ib_neigh_addr_str(dst).c_str(), mac_str(av->rmac).c_str());
    return UCS_OK;
}

void uct_ib_av_cache::drain_locked(uint8_t port_num)
{
    std::vector<uct_ib_neigh_msg> msgs;
    char                          buf[RECV_BUF];
    int                           len;

    for (unsigned reads = 0; m_fd >= 0; ++reads) {
        if (reads == MAX_DRAIN) {
            fall_back_locked(port_num, "neighbour events come faster than "
                             "connects read them", 0);
            return;
        }

        len = uct_ib_glue->neigh_monitor_recv(m_fd, buf, sizeof(buf));
        if (len < 0) {
            if (errno != EAGAIN) {
                fall_back_locked(port_num, (errno == ENOBUFS) ?
                                 "neighbour events were lost: recv()" :
                                 "reading neighbour events failed: recv()",
                                 errno);
            }
            return;
        }

        msgs.clear();
        if ((len == 0) ||
            !uct_ib_neigh_parse(buf, static_cast<size_t>(len), &msgs)) {
            fall_back_locked(port_num, "a neighbour message was malformed", 0);
            return;
        }
        for (const uct_ib_neigh_msg &msg : msgs) {
            apply_locked(msg);
        }
    }
}

void uct_ib_av_cache::apply_locked(const uct_ib_neigh_msg &msg)
{
    ++m_stats.events;
    if ((m_wait_seq != 0) && (msg.seq == m_wait_seq)) {
        m_answered = true;
        m_answer   = msg;
    }
    if (msg.kind == uct_ib_neigh_msg::ERROR) {
        return;
    }

    /* a neighbour that is gone or failed loses every entry; one that
     * changed keeps only entries with its current MAC */
    drop_neighbour_locked(msg.ifindex, msg.dst,
                          msg.resolved() ? msg.lladdr : nullptr);
}

void uct_ib_av_cache::drop_neighbour_locked(uint32_t ifindex,
                                            const uct_ib_neigh_addr &dst,
                                            const uint8_t *keep_mac)
{
    const union ibv_gid gid = uct_ib_neigh_addr_gid(dst);
    auto                it  = m_entries.lower_bound(key(gid.raw, 0, 0, 0, 0,
                                                        0));

    while ((it != m_entries.end()) &&
           !memcmp(it->first.dgid, gid.raw, sizeof(gid.raw))) {
        if ((it->second.ifindex != ifindex) ||
            ((keep_mac != nullptr) &&
             !memcmp(it->second.av.rmac, keep_mac, sizeof(it->second.av.rmac)))) {
            ++it;
            continue;
        }
        ucs_debug("%s: dropped the cached AV of %s (mac %s): its neighbour %s",
                  m_dev.port_name(it->first.port_num).c_str(),
                  uct_ib_neigh_addr_str(dst).c_str(),
                  mac_str(it->second.av.rmac).c_str(),
                  (keep_mac != nullptr) ? ("moved to " + mac_str(keep_mac)).c_str() :
                                          "is gone");
        ++m_stats.invalidated;
        it = m_entries.erase(it);
    }
}

bool uct_ib_av_cache::confirm_locked(uint8_t port_num, uint32_t ifindex,
                                     const uct_ib_neigh_addr &dst,
                                     const uint8_t *mac)
{
    char   req[128];
    size_t len;

    m_seq = (m_seq == UINT32_MAX) ? 1 : m_seq + 1;
    len   = uct_ib_neigh_build_get(m_seq, ifindex, dst, req, sizeof(req));
    ucs_assert(len != 0);
    if (uct_ib_glue->neigh_monitor_request(m_fd, req, len) != 0) {
        /* a request the socket did not take confirms nothing */
        ucs_debug("%s: sendto(RTM_GETNEIGH %s) failed: %m",
                  m_dev.port_name(port_num).c_str(),
                  uct_ib_neigh_addr_str(dst).c_str());
        return false;
    }

    /* the kernel answers a request before the send returns */
    m_wait_seq = m_seq;
    m_answered = false;
    drain_locked(port_num);
    m_wait_seq = 0;

    if (m_answered && (m_answer.kind == uct_ib_neigh_msg::ERROR) &&
        (m_answer.error == EOPNOTSUPP)) {
        fall_back_locked(port_num, "the kernel answers no RTM_GETNEIGH of "
                         "one neighbour (Linux 5.0 or later does)",
                         EOPNOTSUPP);
        return false;
    }

    return !m_transient && m_answered && m_answer.resolved() &&
           (m_answer.ifindex == ifindex) &&
           !memcmp(m_answer.lladdr, mac, sizeof(m_answer.lladdr));
}

void uct_ib_av_cache::fall_back_locked(uint8_t port_num, const char *what,
                                       int err)
{
    close_listener_locked();
    if (m_transient) {
        return;
    }

    m_transient = true;
    m_entries.clear();
    if (err != 0) {
        errno = err;
        ucs_warn("%s: %s failed: %m: the AH cache is flushed, every connect "
                 "now resolves its destination through a transient AH",
                 where(port_num).c_str(), what);
    } else {
        ucs_warn("%s: %s: the AH cache is flushed, every connect now "
                 "resolves its destination through a transient AH",
                 where(port_num).c_str(), what);
    }
}
