#include "ib_neigh.h"

#include <arpa/inet.h>
#include <linux/neighbour.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include <cstring>

namespace {

const uint8_t v4_mapped_prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

struct rtattr *first_attr(struct nlmsghdr *nlh)
{
    return reinterpret_cast<struct rtattr*>(
            reinterpret_cast<char*>(NLMSG_DATA(nlh)) +
            NLMSG_ALIGN(sizeof(struct ndmsg)));
}

bool parse_neigh(struct nlmsghdr *nlh, uct_ib_neigh_msg *msg)
{
    struct ndmsg  *nd;
    struct rtattr *rta;
    int           left;
    bool          have_dst = false;

    if (nlh->nlmsg_len < NLMSG_LENGTH(sizeof(struct ndmsg))) {
        return false;
    }

    nd            = static_cast<struct ndmsg*>(NLMSG_DATA(nlh));
    *msg          = {};
    msg->kind     = (nlh->nlmsg_type == RTM_DELNEIGH) ? uct_ib_neigh_msg::DEL :
                                                        uct_ib_neigh_msg::NEW;
    msg->seq      = nlh->nlmsg_seq;
    msg->ifindex  = static_cast<uint32_t>(nd->ndm_ifindex);
    msg->state    = nd->ndm_state;
    left          = static_cast<int>(nlh->nlmsg_len) -
                    static_cast<int>(NLMSG_LENGTH(sizeof(struct ndmsg)));
    if ((nd->ndm_family != AF_INET) && (nd->ndm_family != AF_INET6)) {
        return true; /* not an IP neighbour: skipped by the caller */
    }

    for (rta = first_attr(nlh); RTA_OK(rta, left); rta = RTA_NEXT(rta, left)) {
        size_t payload = RTA_PAYLOAD(rta);

        if (rta->rta_type == NDA_DST) {
            if (payload != ((nd->ndm_family == AF_INET) ? 4u : 16u)) {
                return false;
            }
            msg->dst.family = nd->ndm_family;
            msg->dst.len    = static_cast<uint8_t>(payload);
            memcpy(msg->dst.raw, RTA_DATA(rta), payload);
            have_dst = true;
        } else if ((rta->rta_type == NDA_LLADDR) &&
                   (payload == sizeof(msg->lladdr))) {
            memcpy(msg->lladdr, RTA_DATA(rta), sizeof(msg->lladdr));
            msg->has_lladdr = true;
        }
    }
    return have_dst && (left <= 0); /* nothing cut short after the last */
}

} // namespace

bool uct_ib_neigh_msg::resolved() const
{
    return (kind == NEW) && has_lladdr &&
           !(state & (NUD_FAILED | NUD_INCOMPLETE));
}

uct_ib_neigh_addr uct_ib_neigh_addr_of_gid(const union ibv_gid &gid)
{
    uct_ib_neigh_addr addr = {};

    if (!memcmp(gid.raw, v4_mapped_prefix, sizeof(v4_mapped_prefix))) {
        addr.family = AF_INET;
        addr.len    = 4;
        memcpy(addr.raw, gid.raw + 12, 4);
    } else {
        addr.family = AF_INET6;
        addr.len    = 16;
        memcpy(addr.raw, gid.raw, 16);
    }
    return addr;
}

union ibv_gid uct_ib_neigh_addr_gid(const uct_ib_neigh_addr &addr)
{
    union ibv_gid gid = {};

    if (addr.family == AF_INET) {
        memcpy(gid.raw, v4_mapped_prefix, sizeof(v4_mapped_prefix));
        memcpy(gid.raw + 12, addr.raw, 4);
    } else {
        memcpy(gid.raw, addr.raw, 16);
    }
    return gid;
}

std::string uct_ib_neigh_addr_str(const uct_ib_neigh_addr &addr)
{
    char buf[INET6_ADDRSTRLEN];

    if (inet_ntop(addr.family, addr.raw, buf, sizeof(buf)) == nullptr) {
        return "?";
    }
    return buf;
}

bool uct_ib_neigh_parse(const void *buf, size_t len,
                        std::vector<uct_ib_neigh_msg> *msgs)
{
    /* NLMSG_NEXT needs a mutable header; nothing is written through it */
    struct nlmsghdr *nlh = static_cast<struct nlmsghdr*>(const_cast<void*>(buf));
    int             left = static_cast<int>(len);
    uct_ib_neigh_msg msg;

    for (; NLMSG_OK(nlh, left); nlh = NLMSG_NEXT(nlh, left)) {
        switch (nlh->nlmsg_type) {
        case RTM_NEWNEIGH:
        case RTM_DELNEIGH:
            if (!parse_neigh(nlh, &msg)) {
                return false;
            }
            if (msg.dst.len != 0) {
                msgs->push_back(msg);
            }
            break;
        case NLMSG_ERROR: {
            const struct nlmsgerr *err;

            if (nlh->nlmsg_len < NLMSG_LENGTH(sizeof(struct nlmsgerr))) {
                return false;
            }
            err = static_cast<const struct nlmsgerr*>(NLMSG_DATA(nlh));
            if (err->error != 0) { /* 0 is an acknowledgement */
                msg       = {};
                msg.kind  = uct_ib_neigh_msg::ERROR;
                msg.seq   = nlh->nlmsg_seq;
                msg.error = -err->error;
                msgs->push_back(msg);
            }
            break;
        }
        default:
            break; /* NLMSG_DONE, NLMSG_NOOP and others say nothing here */
        }
    }

    /* what is left must be padding, not a message cut short */
    return left < static_cast<int>(sizeof(struct nlmsghdr));
}

size_t uct_ib_neigh_build_get(uint32_t seq, uint32_t ifindex,
                              const uct_ib_neigh_addr &dst, void *buf,
                              size_t len)
{
    size_t          total = NLMSG_SPACE(sizeof(struct ndmsg)) +
                            RTA_SPACE(dst.len);
    struct nlmsghdr *nlh  = static_cast<struct nlmsghdr*>(buf);
    struct ndmsg    *nd;
    struct rtattr   *rta;

    if (len < total) {
        return 0;
    }

    memset(buf, 0, total);
    nlh->nlmsg_len   = static_cast<uint32_t>(total);
    nlh->nlmsg_type  = RTM_GETNEIGH;
    nlh->nlmsg_flags = NLM_F_REQUEST;
    nlh->nlmsg_seq   = seq;
    nd               = static_cast<struct ndmsg*>(NLMSG_DATA(nlh));
    nd->ndm_family   = dst.family;
    nd->ndm_ifindex  = static_cast<int>(ifindex);
    rta              = first_attr(nlh);
    rta->rta_type    = NDA_DST;
    rta->rta_len     = static_cast<unsigned short>(RTA_LENGTH(dst.len));
    memcpy(RTA_DATA(rta), dst.raw, dst.len);
    return total;
}
