/*
 * Neighbour messages as the kernel's rtnetlink gives them (RTM_NEWNEIGH,
 * RTM_DELNEIGH, and the error answer to a request): taken apart here, for
 * the kernel's socket and the emulated device's alike, and the one request
 * the AV cache sends (RTM_GETNEIGH of one address on one interface).
 */
#ifndef UCT_IB_NEIGH_H_
#define UCT_IB_NEIGH_H_

#include <infiniband/verbs.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

/* A neighbour's address as the kernel keys it: the IPv4 address of an
 * IPv4-mapped GID, else the GID as an IPv6 address */
struct uct_ib_neigh_addr {
    uint8_t family; /* AF_INET or AF_INET6 */
    uint8_t len;    /* 4 or 16 */
    uint8_t raw[16];
};

uct_ib_neigh_addr uct_ib_neigh_addr_of_gid(const union ibv_gid &gid);

/* The GID of a neighbour address (IPv4 addresses as IPv4-mapped GIDs) */
union ibv_gid uct_ib_neigh_addr_gid(const uct_ib_neigh_addr &addr);

std::string uct_ib_neigh_addr_str(const uct_ib_neigh_addr &addr);

struct uct_ib_neigh_msg {
    enum kind_t {
        NEW,   /* an entry added or changed, or the answer to a request */
        DEL,   /* an entry removed */
        ERROR  /* a request refused */
    }                 kind;
    uint32_t          seq;       /* 0 for an event */
    int               error;     /* ERROR: the errno (positive) */
    uint32_t          ifindex;
    uct_ib_neigh_addr dst;
    bool              has_lladdr;
    uint8_t           lladdr[6];
    uint16_t          state;     /* NUD_* */

    /* Whether the entry gives a MAC to send to (not failed or unresolved) */
    bool resolved() const;
};

/**
 * The neighbour messages of one datagram, in order; messages of other types
 * (and neighbours of other families or with other link-layer address
 * lengths) are skipped. false if the datagram is malformed: a truncated
 * header or attribute.
 */
bool uct_ib_neigh_parse(const void *buf, size_t len,
                        std::vector<uct_ib_neigh_msg> *msgs);

/**
 * An RTM_GETNEIGH request for @a dst on @a ifindex into @a buf: its length,
 * or 0 if @a len is too small.
 */
size_t uct_ib_neigh_build_get(uint32_t seq, uint32_t ifindex,
                              const uct_ib_neigh_addr &dst, void *buf,
                              size_t len);

#endif
