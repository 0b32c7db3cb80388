/*
 * Neighbour listeners: what a kernel's rtnetlink socket of the neighbour
 * group gives, from the emulated fabric's neighbour tables. Each change of
 * the host's table (model/neigh_events.h) becomes one RTM_NEWNEIGH or
 * RTM_DELNEIGH datagram per Ethernet port of the host on the changed L2
 * segment, with the port's interface index; an RTM_GETNEIGH request is
 * answered, after the events that came before it, with the entry or with
 * the kernel's ENOENT. A listener more than the ring behind gets ENOBUFS
 * once, then what the ring still holds.
 */
#include <emu/fabric/member.h>
#include <emu/frontend/ops.h>
#include <emu/model/model.h>

#include <linux/neighbour.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include <cstring>

namespace uct_ib_emu {

namespace {

/* Datagrams a listener holds before it loses events: a socket buffer */
constexpr size_t MAX_QUEUED = 4 * NEIGH_EVENTS;

const uint8_t v4_mapped_prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

struct rtattr *put_attr(std::vector<uint8_t> *msg, uint16_t type,
                        const void *data, size_t len)
{
    size_t        off = msg->size();
    struct rtattr *rta;

    msg->resize(off + RTA_SPACE(len), 0);
    rta           = reinterpret_cast<struct rtattr*>(msg->data() + off);
    rta->rta_type = type;
    rta->rta_len  = static_cast<unsigned short>(RTA_LENGTH(len));
    memcpy(RTA_DATA(rta), data, len);
    return rta;
}

/* One neighbour message, as the kernel words it */
std::vector<uint8_t> neigh_msg(uint16_t type, uint32_t seq, uint32_t ifindex,
                               const uint8_t *gid, uint16_t state,
                               const uint8_t *mac)
{
    std::vector<uint8_t> msg(NLMSG_SPACE(sizeof(struct ndmsg)), 0);
    const bool           v4 = !memcmp(gid, v4_mapped_prefix,
                                      sizeof(v4_mapped_prefix));
    struct nlmsghdr      *nlh;
    struct ndmsg         *nd;

    put_attr(&msg, NDA_DST, v4 ? gid + 12 : gid, v4 ? 4 : 16);
    if (mac != nullptr) {
        put_attr(&msg, NDA_LLADDR, mac, 6);
    }

    nlh              = reinterpret_cast<struct nlmsghdr*>(msg.data());
    nlh->nlmsg_len   = static_cast<uint32_t>(msg.size());
    nlh->nlmsg_type  = type;
    nlh->nlmsg_seq   = seq;
    nd               = static_cast<struct ndmsg*>(NLMSG_DATA(nlh));
    nd->ndm_family   = v4 ? AF_INET : AF_INET6;
    nd->ndm_ifindex  = static_cast<int>(ifindex);
    nd->ndm_state    = state;
    nd->ndm_type     = RTN_UNICAST;
    return msg;
}

std::vector<uint8_t> error_msg(uint32_t seq, int err,
                               const struct nlmsghdr *request)
{
    std::vector<uint8_t> msg(NLMSG_SPACE(sizeof(struct nlmsgerr)), 0);
    auto                 *nlh = reinterpret_cast<struct nlmsghdr*>(msg.data());
    auto                 *e   = static_cast<struct nlmsgerr*>(NLMSG_DATA(nlh));

    nlh->nlmsg_len  = static_cast<uint32_t>(msg.size());
    nlh->nlmsg_type = NLMSG_ERROR;
    nlh->nlmsg_seq  = seq;
    e->error        = -err;
    e->msg          = *request;
    return msg;
}

/* The host's own Ethernet ports on a segment */
template <typename F>
void for_each_port_on(emu_state &s, const char *segment, F fn)
{
    for (const auto &dev : s.devices) {
        for (const port &p : dev->ports) {
            if (p.is_eth() && (p.fabric == segment)) {
                fn(p);
            }
        }
    }
}

/* Move the events the listener has not taken into its queue */
void pull_events(emu_state &s, neigh_listener *l)
{
    std::vector<neigh_event> events;
    bool                     complete;

    complete = (s.fabric != nullptr) ?
               s.fabric->neigh_events_read(&l->pos, &events) :
               neigh_event_read(s.neigh_events.get(), &l->pos, &events);
    if (!complete) {
        l->lost = true;
    }

    for (const neigh_event &e : events) {
        if (l->queue.size() >= MAX_QUEUED) {
            l->lost = true; /* a socket buffer that overran */
            break;
        }
        for_each_port_on(s, e.segment, [&](const port &p) {
            switch (e.kind) {
            case NEIGH_EVENT_NEW:
                l->queue.push_back(neigh_msg(RTM_NEWNEIGH, 0, p.ifindex, e.gid,
                                             NUD_REACHABLE, e.mac));
                break;
            case NEIGH_EVENT_DEL:
                l->queue.push_back(neigh_msg(RTM_DELNEIGH, 0, p.ifindex, e.gid,
                                             NUD_FAILED, e.mac));
                break;
            case NEIGH_EVENT_FAILED:
                l->queue.push_back(neigh_msg(RTM_NEWNEIGH, 0, p.ifindex, e.gid,
                                             NUD_FAILED, nullptr));
                break;
            }
        });
    }
}

uint64_t newest_event(emu_state &s)
{
    return (s.fabric != nullptr) ? s.fabric->neigh_events_newest() :
                                   neigh_event_newest(s.neigh_events.get());
}

neigh_listener *find_listener(emu_state &s, int fd)
{
    auto it = s.neigh_listeners.find(fd);

    return (it == s.neigh_listeners.end()) ? nullptr : &it->second;
}

/* The answer to an RTM_GETNEIGH of one address on one interface */
std::vector<uint8_t> answer(emu_state &s, const struct nlmsghdr *nlh)
{
    const auto    *nd  = static_cast<const struct ndmsg*>(NLMSG_DATA(nlh));
    int           left = static_cast<int>(nlh->nlmsg_len) -
                         static_cast<int>(NLMSG_LENGTH(sizeof(*nd)));
    auto          *rta = reinterpret_cast<const struct rtattr*>(
                                 reinterpret_cast<const char*>(nd) +
                                 NLMSG_ALIGN(sizeof(*nd)));
    union ibv_gid gid  = {};
    bool          dst  = false;
    uct_ib_emu_mac_t mac;

    for (; RTA_OK(rta, left); rta = RTA_NEXT(rta, left)) {
        if ((rta->rta_type != NDA_DST) ||
            (RTA_PAYLOAD(rta) != ((nd->ndm_family == AF_INET) ? 4u : 16u))) {
            continue;
        }
        if (nd->ndm_family == AF_INET) {
            memcpy(gid.raw, v4_mapped_prefix, sizeof(v4_mapped_prefix));
            memcpy(gid.raw + 12, RTA_DATA(rta), 4);
        } else {
            memcpy(gid.raw, RTA_DATA(rta), 16);
        }
        dst = true;
    }
    if (!dst || (nd->ndm_ifindex <= 0)) {
        return error_msg(nlh->nlmsg_seq, EINVAL, nlh);
    }

    /* the table as it is now; while a writer is in the middle of a change
     * whose event may already have been taken, no answer: the requester
     * confirms nothing (as a kernel whose neighbour is being updated) */
    if ((s.fabric != nullptr) && !s.fabric->sync_locked(s)) {
        return error_msg(nlh->nlmsg_seq, EAGAIN, nlh);
    }
    for (const auto &dev : s.devices) {
        for (const port &p : dev->ports) {
            if (!p.is_eth() || (p.ifindex != uint32_t(nd->ndm_ifindex))) {
                continue;
            }
            if (!neigh_resolve(s, p, gid, &mac)) {
                return error_msg(nlh->nlmsg_seq, ENOENT, nlh);
            }
            return neigh_msg(RTM_NEWNEIGH, nlh->nlmsg_seq, p.ifindex, gid.raw,
                             NUD_REACHABLE, mac.data());
        }
    }
    return error_msg(nlh->nlmsg_seq, ENODEV, nlh);
}

} // namespace

int emu_neigh_monitor_open(struct ibv_context *ibctx)
{
    emu_state &s = state();
    guard g(s.lock);
    context *ctx = find_context(s, ibctx);
    int     fd;

    if (ctx == nullptr) {
        errno = EINVAL;
        return -1;
    }

    fd                    = s.next_neigh_listener++;
    neigh_listener &l     = s.neigh_listeners[fd];
    l.ctx                 = ctx;
    l.pos                 = newest_event(s);
    return fd;
}

int emu_neigh_monitor_request(int fd, const void *msg, size_t len)
{
    emu_state &s = state();
    guard g(s.lock);
    neigh_listener *l  = find_listener(s, fd);
    auto           *nlh = static_cast<const struct nlmsghdr*>(msg);

    if (l == nullptr) {
        errno = EBADF;
        return -1;
    }
    if ((len < NLMSG_LENGTH(sizeof(struct ndmsg))) || (nlh->nlmsg_len > len) ||
        (nlh->nlmsg_len < NLMSG_LENGTH(sizeof(struct ndmsg)))) {
        errno = EINVAL;
        return -1;
    }
    if ((nlh->nlmsg_type != RTM_GETNEIGH) || !(nlh->nlmsg_flags & NLM_F_REQUEST) ||
        (nlh->nlmsg_flags & NLM_F_DUMP)) {
        errno = EOPNOTSUPP; /* this device's kernel answers single gets only */
        return -1;
    }

    pull_events(s, l); /* the answer comes after what happened before it */
    l->queue.push_back(answer(s, nlh));
    return 0;
}

int emu_neigh_monitor_recv(int fd, void *buf, size_t len)
{
    emu_state &s = state();
    guard g(s.lock);
    neigh_listener *l = find_listener(s, fd);

    if (l == nullptr) {
        errno = EBADF;
        return -1;
    }

    pull_events(s, l);
    if (l->lost) {
        l->lost = false;
        errno   = ENOBUFS;
        return -1;
    }
    if (l->queue.empty()) {
        errno = EAGAIN;
        return -1;
    }

    /* a datagram longer than the buffer is cut, as recv() cuts it */
    const std::vector<uint8_t> &msg = l->queue.front();
    size_t                     n    = std::min(len, msg.size());
    memcpy(buf, msg.data(), n);
    l->queue.pop_front();
    return static_cast<int>(n);
}

int emu_neigh_monitor_close(int fd)
{
    emu_state &s = state();
    guard g(s.lock);

    if (s.neigh_listeners.erase(fd) == 0) {
        errno = EBADF;
        return -1;
    }
    return 0;
}

} // namespace uct_ib_emu
