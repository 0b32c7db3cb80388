/*
 * Operating a cross-process emulated fabric from outside
 * (docs/architecture.md, section 8): what `ucx_emu` and the tests do to a
 * live fabric without joining it. Every call names the fabric (per user, as
 * UCX_IB_EMU_FABRIC does), logs one error naming what was wrong, and returns
 * its status.
 */
#ifndef UCT_IB_EMU_API_FABRIC_CTL_H_
#define UCT_IB_EMU_API_FABRIC_CTL_H_

#include <emu/api/emu.h>

#include <string>
#include <vector>


struct uct_ib_emu_fabric_port_t {
    std::string                        device;
    uint8_t                            port;
    uint8_t                            link_layer;
    enum ibv_port_state                state;
    enum ibv_mtu                       active_mtu;
    std::string                        segment;
    uint16_t                           lid;
    uint8_t                            lmc; /* 2^lmc LIDs from lid */
    uct_ib_emu_mac_t                   mac;
    bool                               drop_roce_v1;
    bool                               drop_roce_v2;
    std::vector<uct_ib_emu_gid_spec_t> gids;
};

struct uct_ib_emu_fabric_neigh_t {
    std::string      segment;
    uct_ib_emu_gid_t gid;
    uct_ib_emu_mac_t mac;
};

/* A QP of a host as its INIT2RTR programmed it: the address it sends to */
struct uct_ib_emu_fabric_conn_t {
    uint64_t         seq;        /* the host's nth connection */
    std::string      device;
    uint8_t          port;
    uint32_t         qpn;
    uint32_t         remote_qpn;
    bool             devx;       /* created through DevX (else verbs) */
    bool             grh;
    uint16_t         rlid;
    uct_ib_emu_mac_t rmac;       /* Ethernet ports */
    uct_ib_emu_gid_t rgid;
};

struct uct_ib_emu_fabric_host_t {
    std::string                            name;
    bool                                   alive;       /* owned by a live
                                                           process */
    int                                    pid;
    unsigned                               incarnation;
    bool                                   isolated;
    uint64_t                               qps_alive;
    uint64_t                               packets_sent;
    uint64_t                               packets_delivered;
    uint64_t                               retries;
    uint64_t                               rnr_naks;
    uint64_t                               err_cqes;
    std::vector<uint64_t>                  drops;  /* by uct_ib_emu_drop_t */
    std::vector<uct_ib_emu_fabric_port_t>  ports;
    std::vector<uct_ib_emu_fabric_neigh_t> neigh;
    std::vector<uct_ib_emu_fabric_conn_t>  conns; /* the latest, oldest
                                                     first */
};

struct uct_ib_emu_fabric_info_t {
    std::string                           name;
    std::string                           shm_name; /* its segment */
    unsigned                              version;
    bool                                  persistent;
    std::vector<uct_ib_emu_fabric_host_t> hosts;
};

/* A fabric with @a hosts hosts (1..16), kept until destroyed even when no
 * process is joined. UCS_ERR_ALREADY_EXISTS if it exists (with members,
 * or another host count). */
ucs_status_t uct_ib_emu_fabric_create(const std::string &fabric,
                                      unsigned hosts);

/* Remove the fabric. UCS_ERR_BUSY while a host is owned by a live process,
 * unless @a force (its members keep running on a fabric nobody can join). */
ucs_status_t uct_ib_emu_fabric_destroy(const std::string &fabric, bool force);

/* The path of the fabric's shared-memory segment, whether it exists or not */
std::string uct_ib_emu_fabric_shm_path(const std::string &fabric);

/* Whether the fabric's segment exists */
bool uct_ib_emu_fabric_exists(const std::string &fabric);

ucs_status_t uct_ib_emu_fabric_info(const std::string &fabric,
                                    uct_ib_emu_fabric_info_t *info);

/* A port's MAC moves (with update_neigh, every host's neighbour entries of
 * its GIDs follow, as after a gratuitous ARP); a MAC another port of the
 * same L2 segment has is refused (UCS_ERR_ALREADY_EXISTS) unless
 * allow_duplicate */
ucs_status_t uct_ib_emu_fabric_set_mac(const std::string &fabric,
                                       const std::string &host,
                                       const std::string &device, uint8_t port,
                                       const uct_ib_emu_mac_t &mac,
                                       bool update_neigh,
                                       bool allow_duplicate = false);

/* Which RoCE versions an Ethernet port drops */
ucs_status_t uct_ib_emu_fabric_set_drop(const std::string &fabric,
                                        const std::string &host,
                                        const std::string &device,
                                        uint8_t port, bool drop_roce_v1,
                                        bool drop_roce_v2);

/* Port state: up (ACTIVE) or down (DOWN) */
ucs_status_t uct_ib_emu_fabric_set_port_up(const std::string &fabric,
                                           const std::string &host,
                                           const std::string &device,
                                           uint8_t port, bool up);

/* Host @a host resolves @a gid to @a mac from now on (a stale ARP entry);
 * the entry of every segment that knows the GID changes, or, for a GID no
 * entry has, the segment of the port that owns it */
ucs_status_t uct_ib_emu_fabric_neigh_set(const std::string &fabric,
                                         const std::string &host,
                                         const union ibv_gid &gid,
                                         const uct_ib_emu_mac_t &mac);

/* Kill (or restore) all traffic between a host and the other hosts */
ucs_status_t uct_ib_emu_fabric_isolate(const std::string &fabric,
                                       const std::string &host,
                                       bool isolated);

/* The fabric this process is joined to, or "" (private devices) */
std::string uct_ib_emu_fabric_joined(std::string *host = nullptr);

#endif
