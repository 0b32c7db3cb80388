/*
 * The emulated mlx5 device: a software model of ConnectX ports behind the
 * glue table (docs/emulator.md). api/ is what tests and tools may include
 * of the emulator, and all they may: this header (the exported glue table,
 * topology control, the neighbour table, counters, QP introspection and
 * fault injection), fabric_ctl.h and fabric_test.h (a cross-process fabric
 * from outside), port_stats.h (counters for ucx_info, plain C), syndrome.h
 * and dropin.h (the preload's table). api/ includes only api/; the library
 * itself only ever sees the glue table.
 *
 * The model is strict: it answers with the same outputs and errors as
 * rdma-core and firmware would, and never special-cases its caller.
 *
 * Default topology (uct_ib_emu_default_topology(), installed at load and by
 * uct_ib_emu_reset()); every device is vendor 0x02c9 with DevX enabled,
 * one port, state ACTIVE, max MTU 4096:
 *
 *   mlx5_0  ConnectX-6 Dx (part 4125), Ethernet, L2 segment "eth0",
 *           MAC 02:c9:00:00:00:01, IPv4 198.18.0.1, active MTU 1024
 *   mlx5_1  ConnectX-6 Dx (part 4125), Ethernet, L2 segment "eth0",
 *           MAC 02:c9:00:00:00:02, IPv4 198.18.0.2, active MTU 1024
 *      GID table (256 entries, 4 populated):
 *           0 RoCEv1 fe80::<EUI-64 of the MAC>   1 RoCEv2 the same address
 *           2 RoCEv1 ::ffff:198.18.0.x           3 RoCEv2 the same address
 *      the neighbour table of segment "eth0" maps each of these GIDs to
 *      the port's MAC.
 *   mlx5_2  ConnectX-6 (part 4123), InfiniBand, subnet "ib0", LID 0x11,
 *           SM LID 0x1, port GUID 0x02c9000000000011, active MTU 4096
 *   mlx5_3  ConnectX-6 (part 4123), InfiniBand, subnet "ib0", LID 0x12
 *           with LMC 1 (it answers to LIDs 0x12 and 0x13), SL 1 routed
 *           adaptively (ooo_sl_mask 0x2), SM LID 0x1, port GUID
 *           0x02c9000000000012, active MTU 4096
 *      GID table (128 entries, 1 populated): 0 IB fe80::<port GUID>.
 *
 * Force loopback for RC QPs is off on every default device.
 *
 * QP numbers are unique across all emulated devices, so a QP can be looked up
 * by number alone.
 *
 * The send path of verbs QPs created by mlx5dv_create_qp with send ops (the
 * md's UMR QP) is modelled: indirect mkeys (mlx5dv_create_mkey), the
 * ibv_wr_start / mlx5dv_wr_mr_list / ibv_wr_local_inv / ibv_wr_complete
 * work requests, and their completions through ibv_poll_cq. A work request
 * executes at wr_complete time as a packet the QP sends to itself, so it
 * obeys the delivery rules of docs/emulator.md (see uct_ib_emu_drop_t); a
 * dropped one never completes (the QP keeps retrying it, and everything
 * posted behind it waits) until the QP is moved to ERR, which flushes them.
 * Force loopback is not modelled for verbs QPs: verbs cannot request it.
 *
 * The data path of RC QPs runs on the engine (engine/): it follows the
 * doorbell records of DevX and verbs QPs and SRQs, executes the WQEs of
 * the rings (NOP, SEND, SEND_IMM, RDMA_WRITE, RDMA_WRITE_IMM, RDMA_READ,
 * ATOMIC_CS, ATOMIC_FA and the masked atomics; any other opcode completes
 * with a local QP operation error) under the delivery rules above, with RC
 * retries on the emulator's clock, memory keys checked, and writes CQEs;
 * post_send / post_recv / post_srq_recv / poll_cq and completion channels
 * reach the same rings. The UMR work requests above still run at
 * wr_complete time, outside the engine. Requests and their responses
 * (ACKs, NAKs, read data) both obey the delivery rules. A QP's requester
 * has one WQE in flight at a time and completes its WQEs in order, so a
 * read or atomic beyond the initiator depth (2^log_sra_max), a fenced WQE
 * (MLX5_WQE_CTRL_FENCE) and any WQE behind an outstanding one wait until
 * it completed, and a responder never holds more than one outstanding read
 * or atomic (2^log_rra_max >= 1); the ordering tests pin these rules for a
 * requester that keeps several WQEs in flight. A CQ that
 * overruns moves the QP completing into it to ERR and raises one
 * IBV_EVENT_CQ_ERR on its context (async_fd, get_async_event,
 * ack_async_event).
 *
 * Not modelled: DevX objects other than QPs and RMPs, DevX UD QPs, DC,
 * alternate paths, compressed CQEs.
 */
#ifndef UCT_IB_EMU_API_EMU_H_
#define UCT_IB_EMU_API_EMU_H_

#include <uct/api/tools/ib_glue.h>
#include <emu/api/syndrome.h>

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>


/* The glue table of the emulated device: name "emulated", emulated = 1 */
extern "C" const uct_ib_glue_ops_t uct_ib_emu_glue_ops;


typedef std::array<uint8_t, 6>  uct_ib_emu_mac_t;
typedef std::array<uint8_t, 16> uct_ib_emu_gid_t;


/* ------------------------------------------------------------------------
 * Topology
 */

/* Which RoCE GID types an Ethernet port gets in its derived GID table */
enum {
    UCT_IB_EMU_GID_ROCE_V1 = UCS_BIT(0),
    UCT_IB_EMU_GID_ROCE_V2 = UCS_BIT(1)
};

/* One populated GID table entry */
struct uct_ib_emu_gid_spec_t {
    uint32_t          index;
    uct_ib_emu_gid_t  gid;
    enum ibv_gid_type type;
};

struct uct_ib_emu_port_spec_t {
    uint8_t             link_layer    = IBV_LINK_LAYER_ETHERNET;
    enum ibv_port_state state         = IBV_PORT_ACTIVE;
    enum ibv_mtu        max_mtu       = IBV_MTU_4096;
    enum ibv_mtu        active_mtu    = IBV_MTU_1024;

    /* L2 segment (Ethernet) or subnet (InfiniBand) the port is attached to;
     * ports with the same name can reach each other */
    std::string         fabric;

    /* InfiniBand */
    uint16_t            lid           = 0;
    /* the port answers to 2^lmc LIDs from lid, which is aligned to them */
    uint8_t             lmc           = 0;
    uint16_t            sm_lid        = 0;
    /* the SLs on which the subnet routes adaptively, so that packets may
     * arrive out of order (QUERY_HCA_VPORT_CONTEXT) */
    uint16_t            ooo_sl_mask   = 0;
    uint64_t            subnet_prefix = 0xfe80000000000000ull; /* host order */
    uint64_t            port_guid     = 0;                     /* host order */

    /* Ethernet */
    uct_ib_emu_mac_t    mac           = {};
    uint32_t            ipv4          = 0; /* host order; 0: no IPv4 GIDs */
    unsigned            gid_types     = UCT_IB_EMU_GID_ROCE_V1 |
                                        UCT_IB_EMU_GID_ROCE_V2;
    bool                drop_roce_v1  = false;
    bool                drop_roce_v2  = false;

    /*
     * Explicit GID table; when empty the table is derived: InfiniBand
     * 0 = subnet_prefix:port_guid; Ethernet 0/1 = RoCEv1/v2 on the link-local
     * address from the MAC, 2/3 = RoCEv1/v2 on ::ffff:ipv4, each entry only
     * if its type is in gid_types (a missing type leaves its slots empty).
     */
    std::vector<uct_ib_emu_gid_spec_t> gids;
};

struct uct_ib_emu_device_spec_t {
    std::string  name;
    uint32_t     vendor_part_id              = 4125;
    uint32_t     hw_ver                      = 0;
    std::string  fw_ver                      = "22.39.1002";
    uint64_t     node_guid                   = 0; /* 0: derived */
    bool         devx                        = true;
    bool         roce_enabled                = true; /* Ethernet devices */
    bool         fl_rc_qp_when_roce_enabled  = false;
    bool         fl_rc_qp_when_roce_disabled = false;
    /* log2 of the WQEs a queue may have (verbs max_qp_wr agrees); at most
     * 15, what qpc.log_sq_size and log_rq_size can hold */
    unsigned     log_max_qp_sz               = 15;
    /* A bonded (LAG) Ethernet device: QPs choose their physical port with
     * qpc.lag_tx_port_affinity 1..num_lag_ports; 0 or 1: no LAG */
    unsigned     num_lag_ports               = 0;
    std::vector<uct_ib_emu_port_spec_t> ports;
};

struct uct_ib_emu_topology_t {
    std::vector<uct_ib_emu_device_spec_t> devices;
};

/* The topology documented at the top of this file */
uct_ib_emu_topology_t uct_ib_emu_default_topology();

/**
 * Replace the topology. Clears the neighbour table (then fills it from the
 * new Ethernet ports), the counters and the faults.
 *
 * @return UCS_OK; UCS_ERR_BUSY (logged) while a device context is open or a
 *         device list is not freed; UCS_ERR_INVALID_PARAM (logged) for an
 *         inconsistent topology: no ports, more than 255 ports, mixed link
 *         layers on a device, a duplicate device name, LID or MAC in one
 *         fabric, an active MTU above the maximum, a GID index out of range.
 */
ucs_status_t uct_ib_emu_set_topology(const uct_ib_emu_topology_t &topology);

/* uct_ib_emu_set_topology(uct_ib_emu_default_topology()) */
ucs_status_t uct_ib_emu_reset();


/* ------------------------------------------------------------------------
 * Fabric: neighbour table and per-port behaviour, changeable at any time
 */

/* Each L2 segment (the ports whose spec names the same fabric) has its own
 * neighbour table: a port resolves only GIDs of its own segment. */

/* On @a segment, resolve gid to mac from now on (a new entry or a changed
 * one). Existing AHs keep the MAC they resolved; new AHs and verbs QPs moved
 * to RTR later get the new one. */
void uct_ib_emu_neigh_set(const std::string &segment, const union ibv_gid &gid,
                          const uct_ib_emu_mac_t &mac);

/* Forget gid on @a segment: resolving it fails with EHOSTUNREACH.
 * UCS_ERR_NO_ELEM if the table has no such entry. */
ucs_status_t uct_ib_emu_neigh_del(const std::string &segment,
                                  const union ibv_gid &gid);

/* Change an Ethernet port's MAC (a VF moved, a bond failed over); its GIDs
 * stay, they are the addresses configured on it. With update_neigh the
 * neighbour entries of those GIDs follow (as after a gratuitous ARP).
 * UCS_ERR_NO_ELEM for an unknown device/port, UCS_ERR_INVALID_PARAM for an
 * InfiniBand port or a MAC that is zero or multicast. */
ucs_status_t uct_ib_emu_port_set_mac(const std::string &device, uint8_t port,
                                     const uct_ib_emu_mac_t &mac,
                                     bool update_neigh = true);

/* Whether an Ethernet port drops incoming RoCEv1 / RoCEv2 packets */
ucs_status_t uct_ib_emu_port_set_drop(const std::string &device, uint8_t port,
                                      bool drop_roce_v1, bool drop_roce_v2);


/* ------------------------------------------------------------------------
 * Counters
 */

/* Why a packet was dropped (docs/architecture.md, section 7: delivery) */
enum uct_ib_emu_drop_t {
    UCT_IB_EMU_DROP_NONE,         /* delivered */
    UCT_IB_EMU_DROP_NO_ROUTE,     /* no active port on the fabric has the
                                     destination GID (with the packet's RoCE
                                     version) or LID */
    UCT_IB_EMU_DROP_MAC,          /* the destination MAC is not the port's
                                     current MAC */
    UCT_IB_EMU_DROP_ROCE_V1,      /* the port drops RoCEv1 */
    UCT_IB_EMU_DROP_ROCE_V2,      /* the port drops RoCEv2 */
    UCT_IB_EMU_DROP_NO_QP,        /* the remote QPN does not exist there */
    UCT_IB_EMU_DROP_QP_STATE,     /* the remote QP is not RTR or RTS */
    UCT_IB_EMU_DROP_NOT_LOOPBACK, /* a memory registration work request on a
                                     QP that is not connected to itself */
    UCT_IB_EMU_DROP_MTU,          /* a packet larger than the responder's
                                     path MTU */
    UCT_IB_EMU_DROP_PSN,          /* a request ahead of the responder's
                                     expected PSN (discarded there) */
    UCT_IB_EMU_DROP_HOST_DOWN,    /* no process owns the destination host
                                     (cross-process fabric) */
    UCT_IB_EMU_DROP_ISOLATED,     /* the traffic of the source or the
                                     destination host is killed */
    UCT_IB_EMU_DROP_CONGESTION,   /* the destination host does not drain
                                     its socket: the oldest frames are lost */
    UCT_IB_EMU_DROP_QKEY,         /* a datagram whose Q_Key is not the
                                     destination UD QP's */
    UCT_IB_EMU_DROP_NO_RECV,      /* a datagram that found no receive WQE
                                     (UD has no RNR: it is lost) */
    UCT_IB_EMU_DROP_DC_KEY,       /* a DC request whose access key is not
                                     the DCT's (counted by the DCT) */
    UCT_IB_EMU_DROP_LAST
};

/* A short description: "destination MAC mismatch", ... */
const char *uct_ib_emu_drop_str(uct_ib_emu_drop_t reason);

/* What the device saw wrong in a doorbell the user rang on a UAR page
 * (engine/doorbells.cc) */
enum uct_ib_emu_doorbell_error_t {
    /* the doorbell names a QP that does not use this UAR page */
    UCT_IB_EMU_DOORBELL_FOREIGN_QP,
    /* the UAR was rung before the doorbell record counted the WQE */
    UCT_IB_EMU_DOORBELL_RECORD_BEHIND,
    /* its first 8 bytes are not those of the WQE in the ring */
    UCT_IB_EMU_DOORBELL_NOT_THE_WQE,
    /* a BlueFlame copy that is not the WQE in the ring */
    UCT_IB_EMU_DOORBELL_BF_MISMATCH
};

const char *uct_ib_emu_doorbell_error_str(uct_ib_emu_doorbell_error_t error);

struct uct_ib_emu_counters_t {
    /* Address handles: created and destroyed by create_ah/destroy_ah,
     * reclaimed when their context was closed with them still alive */
    uint64_t ah_created        = 0;
    uint64_t ah_destroyed      = 0;
    uint64_t ah_reclaimed      = 0;
    uint64_t ah_alive          = 0; /* AHs that exist now */

    /* Objects of any kind the caller left behind when closing a context */
    uint64_t objects_reclaimed = 0;

    /* DevX commands that reached the firmware, by opcode; the failed ones
     * (non-zero status, injected faults included) are also in cmds_failed */
    std::map<uint16_t, uint64_t> cmds;
    std::map<uint16_t, uint64_t> cmds_failed;

    /* QPs that exist now (verbs and DevX), by PRM state (qpc.state) */
    std::map<uint8_t, unsigned> qps_by_state;

    /* Packets dropped, by reason */
    std::map<uct_ib_emu_drop_t, uint64_t> drops;

    /* Indirect mkeys that exist now */
    unsigned mkeys_alive = 0;

    /* The engine: request and response packets sent and delivered (a
     * message above the path MTU is several), retransmissions after an ack
     * timeout, RNR NAKs received, CQEs lost to a full CQ, error CQEs by
     * syndrome (MLX5_CQE_SYNDROME_*) */
    uint64_t packets_sent      = 0;
    uint64_t packets_delivered = 0;
    uint64_t retries           = 0;
    uint64_t rnr_naks          = 0;
    uint64_t cq_overruns       = 0;
    std::map<uint8_t, uint64_t> err_cqes;

    /* Accesses to registered memory the user had unmapped (its MR still
     * registered): the pinned page nobody sees takes the write, a read
     * gives zeros, and the process does not fault */
    uint64_t dma_unmapped      = 0;

    /* Doorbells the device saw rung wrong, by what was wrong: each is also
     * an error message, the first of its kind on a device */
    std::map<uct_ib_emu_doorbell_error_t, uint64_t> doorbell_errors;
    uint64_t doorbell_error_count() const; /* all kinds */
    /* The rings it saw (not every ring: those between two passes of the
     * engine go unseen), and the BlueFlame copies it compared */
    uint64_t doorbells_seen    = 0;
    uint64_t bf_copies_checked = 0;

    /* Polls of CQ rings in memory that waited for the engine (see
     * uct_ib_emu_engine_set_poll_wait): pages taken from the program's view
     * of its receiving rings, polls that faulted there and waited, waits a
     * CQE ended, waits that lasted their limit */
    uint64_t poll_wait_taken   = 0;
    uint64_t poll_wait_faults  = 0;
    uint64_t poll_wait_written = 0;
    uint64_t poll_wait_expired = 0;

    uint64_t cmd_count(uint16_t opcode) const;
    uint64_t cmd_failed_count(uint16_t opcode) const;
    unsigned qp_count(uint8_t state) const;
    uint64_t drop_count(uct_ib_emu_drop_t reason) const;
    uint64_t err_cqe_count(uint8_t syndrome) const;
};

/* A snapshot of the counters */
uct_ib_emu_counters_t uct_ib_emu_counters();

/* What the engine counted on one port: its packets sent (requests and
 * responses), the packets delivered to it, its packets dropped by reason,
 * and of its QPs: retransmissions after an ack timeout, RNR NAKs received,
 * error CQEs by syndrome (MLX5_CQE_SYNDROME_*) and CQEs lost to a full CQ */
struct uct_ib_emu_port_counters_t {
    uint64_t                              packets_sent      = 0;
    uint64_t                              packets_delivered = 0;
    uint64_t                              retries           = 0;
    uint64_t                              rnr_naks          = 0;
    uint64_t                              cq_overruns       = 0;
    std::map<uct_ib_emu_drop_t, uint64_t> drops;
    std::map<uint8_t, uint64_t>           err_cqes;

    uint64_t drop_count(uct_ib_emu_drop_t reason) const;
    uint64_t err_cqe_count(uint8_t syndrome) const;
};

/* A snapshot of a port's counters; UCS_ERR_NO_ELEM for an unknown
 * device/port. uct_ib_emu_counters_reset() zeroes them too. */
ucs_status_t uct_ib_emu_port_counters(const std::string &device, uint8_t port,
                                      uct_ib_emu_port_counters_t *counters);

/* A short description of an error CQE's syndrome ("remote access error"),
 * or NULL for one mlx5dv.h does not name */
const char *uct_ib_emu_cqe_syndrome_str(uint8_t syndrome);

/* Zero the event counters (created, destroyed, reclaimed, commands, drops);
 * the live counts (ah_alive, qps_by_state, mkeys_alive) always describe the
 * current state */
void uct_ib_emu_counters_reset();


/* ------------------------------------------------------------------------
 * The engine: the device executes what is posted to its queues (WQEs in the
 * send and receive rings, noticed through the doorbell records) and writes
 * CQEs. By default it runs on a thread while a device context is open; in
 * step mode it runs only when a test asks, and its clock moves only by
 * uct_ib_emu_clock_advance, so every outcome is deterministic.
 */

/* Step mode on (the thread is joined) or off (the thread runs while a
 * context is open). Survives uct_ib_emu_reset(). */
ucs_status_t uct_ib_emu_engine_set_step_mode(bool step_mode);

/* One pass over every queue; whether it did any work */
bool uct_ib_emu_engine_step();

/* Passes until one does no work (timers in the future are not work); the
 * number of passes that did work */
unsigned uct_ib_emu_engine_run();

/* The emulator's clock, in nanoseconds, and a jump forward (step mode) */
uint64_t uct_ib_emu_clock_now();
void uct_ib_emu_clock_advance(uint64_t ns);

/* How much faster than real time the clock runs on the thread; the default
 * is UCX_IB_EMU_CLOCK_SCALE (1), restored by uct_ib_emu_reset().
 * UCS_ERR_INVALID_PARAM unless scale > 0. */
ucs_status_t uct_ib_emu_clock_set_scale(double scale);


/* Whether a program's polls of CQ rings in memory wait for the engine in
 * a page fault (docs/performance.md, "A spinning program beside the
 * engine"): AUTO once the engine sees a spinning program starve it, NEVER,
 * or ALWAYS while the engine thread idles (tests, measurements); and how
 * long one wait lasts at most without a CQE. The defaults are
 * UCX_IB_EMU_POLL_WAIT (auto) and UCX_IB_EMU_POLL_WAIT_MAX (2ms),
 * restored by uct_ib_emu_reset(). Where the kernel refuses userfaultfd, no
 * poll ever waits. */
enum uct_ib_emu_poll_wait_t {
    UCT_IB_EMU_POLL_WAIT_AUTO,
    UCT_IB_EMU_POLL_WAIT_NEVER,
    UCT_IB_EMU_POLL_WAIT_ALWAYS
};

void uct_ib_emu_engine_set_poll_wait(uct_ib_emu_poll_wait_t mode,
                                     uint64_t max_wait_us = 2000);


/* ------------------------------------------------------------------------
 * QP introspection: the decoded context of any QP (DevX or verbs)
 */

/* An address path, field for field as the PRM `ads` structure */
struct uct_ib_emu_ads_t {
    uint8_t          fl;
    uint8_t          free_ar;
    uint16_t         pkey_index;
    uint8_t          grh;
    uint8_t          mlid;
    uint16_t         rlid;
    uint8_t          ack_timeout;
    uint8_t          src_addr_index;
    uint8_t          stat_rate;
    uint8_t          hop_limit;
    uint8_t          tclass;
    uint32_t         flow_label;
    uct_ib_emu_gid_t rgid;
    uint8_t          f_dscp;
    uint8_t          f_ecn;
    uint8_t          f_eth_prio;
    uint8_t          ecn;
    uint8_t          dscp;
    uint16_t         udp_sport;
    uint8_t          dei_cfi;
    uint8_t          eth_prio;
    uint8_t          sl;
    uint8_t          vhca_port_num;
    uct_ib_emu_mac_t rmac;
};

struct uct_ib_emu_qp_info_t {
    std::string      device;
    bool             devx;           /* created by CREATE_QP, not verbs */
    uint32_t         qpn;
    uint8_t          state;          /* PRM qpc.state */
    uint8_t          port;           /* 0 until RST2INIT */
    uint32_t         pdn;
    uint32_t         cqn_snd;
    uint32_t         cqn_rcv;
    uint8_t          log_sq_size;
    uint8_t          log_rq_size;
    uint8_t          log_rq_stride;
    uint8_t          rq_type;
    uint8_t          no_sq;
    uint32_t         srqn;
    uint32_t         uar_page;
    uint32_t         remote_qpn;
    uint8_t          mtu;            /* PRM/IB encoding, 1 = 256 .. 5 = 4096 */
    uint8_t          log_msg_max;
    uint8_t          rre;
    uint8_t          rwe;
    uint8_t          rae;
    uint8_t          atomic_mode;    /* PRM qpc.atomic_mode */
    uint8_t          lag_tx_port_affinity; /* 0: none */
    uint8_t          log_rra_max;
    uint8_t          log_sra_max;
    uint8_t          min_rnr_nak;
    uint8_t          retry_count;
    uint8_t          rnr_retry;
    uint8_t          ack_timeout;    /* primary.ack_timeout, for convenience */
    uint32_t         next_send_psn;
    uint32_t         next_rcv_psn;
    uct_ib_emu_ads_t primary;
};

/* UCS_ERR_NO_ELEM if no QP has this number */
ucs_status_t uct_ib_emu_qp_info(uint32_t qpn, uct_ib_emu_qp_info_t *info);


/* ------------------------------------------------------------------------
 * Memory key introspection
 */

struct uct_ib_emu_klm_t {
    uint32_t lkey;
    uint64_t addr;
    uint32_t length;
};

struct uct_ib_emu_mkey_info_t {
    std::string                   device;
    bool                          indirect;     /* false: an MR's key */
    bool                          bound;        /* indirect: UMR bound it */
    uint32_t                      access;       /* ibv access flags */
    uint32_t                      bound_by_qpn; /* indirect: the UMR's QP */
    uint64_t                      length;       /* indirect: its range */
    std::vector<uct_ib_emu_klm_t> entries;      /* indirect: the layout */
    bool                          ksm;          /* DevX KSM: by address */
    uint64_t                      start_addr;   /* KSM: the range's start */
};

/* The MR or indirect mkey with this key (lkey or rkey); UCS_ERR_NO_ELEM if
 * none exists */
ucs_status_t uct_ib_emu_mkey_info(uint32_t key, uct_ib_emu_mkey_info_t *info);


/* ------------------------------------------------------------------------
 * Fault injection
 */

/**
 * Make the next count calls of a glue operation fail with err, in the
 * operation's convention: PTR returns NULL with errno = err, ERRNO returns
 * err, M1 returns -1 with errno = err, COUNT returns -1 with errno = err,
 * BOOL returns false. The call does nothing else. Arming the same operation
 * again replaces the previous setting; count 0 disarms it.
 *
 * @return UCS_ERR_INVALID_PARAM for an operation that cannot fail (VOID,
 *         NAME), an unknown name, or err <= 0.
 */
ucs_status_t uct_ib_emu_fail_op(uct_ib_glue_op_t op, unsigned count, int err);
ucs_status_t uct_ib_emu_fail_op(const std::string &op_name, unsigned count,
                                int err);

/**
 * Arm glue operations' faults from a text, as uct_ib_emu_fail_op() does:
 * "OP:COUNT:ERRNO[,OP:COUNT:ERRNO...]", OP a glue operation's name, COUNT
 * 1 or more, ERRNO a number or a name ("EIO"). A process whose environment
 * has UCX_IB_EMU_FAIL_OP arms that text when its model starts: the way to
 * make an unmodified program's verbs calls fail on the drop-in front-end
 * (UCX_IB_EMU_FAIL_OP=destroy_ah:1:EIO: its next ibv_destroy_ah() returns
 * EIO). All or nothing: UCS_ERR_INVALID_PARAM, nothing armed and *error
 * saying what was wrong, for a malformed text.
 */
ucs_status_t uct_ib_emu_fail_ops(const std::string &spec,
                                 std::string *error = nullptr);

/**
 * The same with C linkage, for a program that finds the model already loaded
 * (dlopen(UCT_IB_GLUE_EMU_LIBRARY, RTLD_NOLOAD), then dlsym): a test inside
 * a program on the drop-in front-end arms a fault exactly where it wants it.
 * An error is logged, naming what was wrong.
 */
extern "C" ucs_status_t uct_ib_emu_fail_ops_c(const char *spec);

/**
 * Make the next count DevX commands with this opcode fail in the firmware
 * with status and syndrome: the call returns EREMOTEIO (NULL with errno for
 * obj_create) with both in the output mailbox; a destroy command returns the
 * errno the kernel maps the status to. Applies to the commands the kernel
 * issues for umem_reg/umem_dereg (CREATE_UMEM 0xa08, DESTROY_UMEM 0xa0a)
 * too. With @a skip, that many commands with this opcode succeed first (to
 * fail the middle of a sequence). UCS_ERR_INVALID_PARAM if status is 0.
 */
ucs_status_t uct_ib_emu_fail_cmd(uint16_t opcode, unsigned count,
                                 uint8_t status, uint32_t syndrome,
                                 unsigned skip = 0);

/**
 * Make the next count send work requests the device executes (delivered to
 * their QP, not dropped or flushed) complete with status and vendor_err
 * instead of doing their work, signaled or not; their QP then moves to ERR,
 * as after any error completion. UCS_ERR_INVALID_PARAM if status is
 * IBV_WC_SUCCESS.
 */
ucs_status_t uct_ib_emu_fail_wr(unsigned count, enum ibv_wc_status status,
                                uint32_t vendor_err);

/* Disarm every fault */
void uct_ib_emu_clear_faults();

/* Calls, commands and work requests still armed to fail */
unsigned uct_ib_emu_pending_faults();

#endif
