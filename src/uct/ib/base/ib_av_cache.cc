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

std::string mac_str(const uint8_t *mac)
{
    char buf[18];

    snprintf(buf, sizeof(buf), "%02x:%02x:%02x:%02x:%02x:%02x", mac[0],
             mac[1], mac[2], mac[3], mac[4], mac[5]);
    return buf;
}

} // namespace

uct_ib_av_cache::key::key(const uint8_t *gid, uint8_t port, uint8_t index,
                          uint8_t tc, uint32_t fl)
{
    static_assert(sizeof(key) == 24, "no padding the constructor misses");
    memcpy(dgid, gid, sizeof(dgid));
    port_num   = port;
    gid_index  = index;
    tclass     = tc;
    reserved   = 0;
    flow_label = fl;
}

uct_ib_av_cache::uct_ib_av_cache(const uct_ib_device &dev) : m_dev(dev)
{
    std::lock_guard<std::mutex> guard(m_lock);

    m_fd = uct_ib_glue->neigh_monitor_open(dev.context());
    if (m_fd < 0) {
        m_fd = -1;
        fall_back_locked(0, "cannot listen to neighbour events", errno);
    }
}

uct_ib_av_cache::~uct_ib_av_cache()
{
    if ((m_fd >= 0) && (uct_ib_glue->neigh_monitor_close(m_fd) != 0)) {
        ucs_warn("%s: closing the neighbour listener failed: %m", m_dev.name());
    }
}

uct_ib_av_cache_stats_t uct_ib_av_cache::stats() const
{
    std::lock_guard<std::mutex> guard(m_lock);
    uct_ib_av_cache_stats_t     stats = m_stats;

    stats.entries   = m_entries.size();
    stats.transient = m_transient;
    return stats;
}

ucs_status_t uct_ib_av_cache::resolve(struct ibv_pd *pd,
                                      const struct ibv_ah_attr &attr,
                                      struct mlx5_wqe_av *av,
                                      ucs_log_level_t fail_level)
{
    std::lock_guard<std::mutex> guard(m_lock);

    ++m_stats.lookups;
    return resolve_locked(pd, attr, av, fail_level);
}

uint32_t uct_ib_av_cache::ifindex_of(uint8_t port_num, unsigned gid_index) const
{
    const struct ibv_gid_entry *entry = m_dev.gid_entry(port_num, gid_index);

    return (entry != nullptr) ? entry->ndev_ifindex : 0;
}

ucs_status_t uct_ib_av_cache::resolve_locked(struct ibv_pd *pd,
                                             const struct ibv_ah_attr &attr,
                                             struct mlx5_wqe_av *av,
                                             ucs_log_level_t fail_level)
{
    const key           k(attr.grh.dgid.raw, attr.port_num,
                          attr.grh.sgid_index, attr.grh.traffic_class,
                          attr.grh.flow_label);
    uct_ib_transient_ah ah(m_dev, attr.port_num);
    struct ibv_ah_attr  ah_attr = attr;
    struct mlx5_wqe_av  *ah_av  = nullptr;
    uint32_t            ifindex;
    ucs_status_t        status;

    ucs_assert(attr.is_global);
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

    const uct_ib_neigh_addr dst = uct_ib_neigh_addr_of_gid(attr.grh.dgid);
    ifindex = ifindex_of(attr.port_num, attr.grh.sgid_index);
    if (m_transient || (ifindex == 0) || (m_entries.size() >= MAX_ENTRIES) ||
        !confirm_locked(attr.port_num, ifindex, dst, av->rmac)) {
        ++m_stats.uncached;
        return UCS_OK;
    }

    m_entries.emplace(k, entry{*av, ifindex});
    ucs_trace("%s: cached the AV of %s: mac %s", m_dev.port_name(attr.port_num).c_str(),
              uct_ib_neigh_addr_str(dst).c_str(), mac_str(av->rmac).c_str());
    return UCS_OK;
}

void uct_ib_av_cache::drain_locked(uint8_t port_num)
{
    std::vector<uct_ib_neigh_msg> msgs;
    char                          buf[RECV_BUF];
    int                           len;

    while (m_fd >= 0) {
        len = uct_ib_glue->neigh_monitor_recv(m_fd, buf, sizeof(buf));
        if (len < 0) {
            if (errno != EAGAIN) {
                fall_back_locked(port_num, (errno == ENOBUFS) ?
                                 "neighbour events were lost" :
                                 "reading neighbour events failed", errno);
            }
            return;
        }

        msgs.clear();
        if (!uct_ib_neigh_parse(buf, static_cast<size_t>(len), &msgs)) {
            fall_back_locked(port_num, "a neighbour message was malformed",
                             EPROTO);
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
    auto                it  = m_entries.lower_bound(key(gid.raw, 0, 0, 0, 0));

    while ((it != m_entries.end()) &&
           !memcmp(it->first.dgid, gid.raw, sizeof(gid.raw))) {
        if (it->second.ifindex != ifindex) {
            ++it;
            continue;
        }
        if ((keep_mac != nullptr) &&
            !memcmp(it->second.av.rmac, keep_mac, sizeof(it->second.av.rmac))) {
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

    m_seq      = (m_seq == UINT32_MAX) ? 1 : m_seq + 1;
    len        = uct_ib_neigh_build_get(m_seq, ifindex, dst, req, sizeof(req));
    ucs_assert(len != 0);
    if (uct_ib_glue->neigh_monitor_request(m_fd, req, len) != 0) {
        fall_back_locked(port_num, "asking the neighbour table failed", errno);
        return false;
    }

    /* the kernel answers a request before the send returns */
    m_wait_seq = m_seq;
    m_answered = false;
    drain_locked(port_num);
    m_wait_seq = 0;

    return !m_transient && m_answered && m_answer.resolved() &&
           (m_answer.ifindex == ifindex) &&
           !memcmp(m_answer.lladdr, mac, sizeof(m_answer.lladdr));
}

void uct_ib_av_cache::fall_back_locked(uint8_t port_num, const char *what,
                                       int err)
{
    std::string where;

    if (port_num != 0) {
        where = m_dev.port_name(port_num);
    } else {
        for (const uct_ib_port &port : m_dev.ports()) {
            where += (where.empty() ? "" : ",") + m_dev.port_name(port.port_num);
        }
    }

    if (m_fd >= 0) {
        if (uct_ib_glue->neigh_monitor_close(m_fd) != 0) {
            ucs_warn("%s: closing the neighbour listener failed: %m",
                     m_dev.name());
        }
        m_fd = -1;
    }
    if (m_transient) {
        return;
    }

    m_transient = true;
    m_entries.clear();
    errno = err;
    ucs_warn("%s: %s (%m): the AH cache is flushed, every connect now "
             "resolves its destination through a transient AH", where.c_str(),
             what);
}
