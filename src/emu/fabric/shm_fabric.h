/*
 * The shared registry of a cross-process emulated fabric
 * (docs/architecture.md, section 8): one POSIX shared-memory segment per
 * fabric and user, holding the hosts, their devices and ports, each host's
 * neighbour table, the fabric-wide allocators and the packet counters that
 * `ucx_emu show` prints.
 *
 * Who owns what:
 *  - a host is owned by the process bound to its abstract Unix socket (the
 *    socket its packets arrive on); the kernel releases the name when the
 *    process dies, however it dies, so "bound" is "alive" and a killed
 *    host can be taken over at once;
 *  - changes to the registry are made under the fabric lock, another
 *    abstract socket name held while bound, so a crash never leaves it
 *    taken;
 *  - readers never lock: every change is made between two increments of
 *    `seq` (odd while writing), and a reader copies what it needs and
 *    retries when `seq` moved (a sequence lock);
 *  - each host's counters are written only by the process that owns it.
 *
 * Abstract socket names leave nothing in the file system; the segment is
 * unlinked by the last member to leave (unless `ucx_emu create` made it, in
 * which case `ucx_emu destroy` does), and a segment whose members are all
 * dead is recycled by the next process that joins.
 */
#ifndef UCT_IB_EMU_FABRIC_SHM_FABRIC_H_
#define UCT_IB_EMU_FABRIC_SHM_FABRIC_H_

#include <emu/api/emu.h>
#include <emu/model/neigh_events.h>

#include <ucs/type/status.h>

#include <sys/socket.h>
#include <sys/un.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>


namespace uct_ib_emu {
namespace fab {

constexpr uint32_t MAGIC          = 0x46454d55; /* "UMEF" */
constexpr uint32_t LAYOUT_VERSION = 5;
constexpr unsigned MAX_HOSTS      = 16;
constexpr unsigned DEFAULT_HOSTS  = 4;
constexpr unsigned DEVS_PER_HOST  = 4;
constexpr unsigned GIDS_PER_PORT  = 4;
constexpr unsigned NEIGH_PER_HOST = 256;
constexpr unsigned CONNS_PER_HOST = 32;
constexpr unsigned NAME_LEN       = 32;
constexpr unsigned MAX_DROPS      = 16;
constexpr size_t   MAX_FABRIC_NAME = 48;

/* QP numbers and memory key indices carry the host: (host + 1) << 18 */
constexpr unsigned HOST_SHIFT     = 18;
constexpr uint32_t LOCAL_MASK     = (1u << HOST_SHIFT) - 1;

static_assert(UCT_IB_EMU_DROP_LAST <= MAX_DROPS, "drop reasons");

struct gid_rec {
    uint8_t  raw[16];
    uint32_t index;
    uint8_t  type;   /* enum ibv_gid_type */
    uint8_t  valid;
};

struct port_rec {
    uint8_t  link_layer;
    uint8_t  state;      /* enum ibv_port_state */
    uint8_t  max_mtu;
    uint8_t  active_mtu;
    uint8_t  drop_roce_v1;
    uint8_t  drop_roce_v2;
    uint8_t  mac[6];
    uint16_t lid;
    uint16_t sm_lid;
    uint32_t ipv4;
    uint8_t  lmc;
    uint8_t  reserved;
    uint16_t ooo_sl_mask;
    uint64_t subnet_prefix;
    uint64_t port_guid;
    char     segment[NAME_LEN]; /* L2 segment or IB subnet */
    gid_rec  gids[GIDS_PER_PORT];
};

struct dev_rec {
    char     name[NAME_LEN];
    uint64_t node_guid;
    uint32_t vendor_part_id;
    char     fw_ver[NAME_LEN];
    port_rec port;               /* the emulated devices have one port */
};

struct neigh_rec {
    char    segment[NAME_LEN];
    uint8_t gid[16];
    uint8_t mac[6];
    uint8_t valid;
};

struct counters_rec {
    uint64_t packets_sent;
    uint64_t packets_delivered;
    uint64_t retries;
    uint64_t rnr_naks;
    uint64_t err_cqes;
    uint64_t qps_alive;
    uint64_t drops[MAX_DROPS];
};

/* A connected QP as its INIT2RTR programmed it (conn_write/conn_read):
 * words of atomics, so a reader copies it while its owner writes another */
struct conn_rec {
    uint64_t gen;      /* 0: empty or being written */
    uint64_t words[5];
};

/* What a conn_rec holds */
struct conn_info {
    uint64_t gen;        /* the host's nth connection, from 1 */
    uint32_t qpn;
    uint32_t remote_qpn;
    uint8_t  dev;        /* index in the host's devs */
    uint8_t  port;
    uint8_t  grh;
    uint8_t  devx;       /* a DevX QP (else verbs) */
    uint16_t rlid;
    uint8_t  rmac[6];
    uint8_t  rgid[16];
};

struct host_rec {
    char         name[NAME_LEN];
    uint32_t     joined;      /* a process took it (it may have died since) */
    int32_t      pid;
    uint64_t     start_time;  /* of pid, from /proc: pids are reused */
    uint32_t     incarnation; /* how many processes took it */
    uint32_t     isolated;    /* its traffic to other hosts is dropped */
    uint32_t     next_qp;     /* allocators, kept across incarnations */
    uint32_t     next_mkey;
    uint64_t     rx_frames;   /* frames sent to it: its engine calls recv()
                                 only when this moved */
    dev_rec      devs[DEVS_PER_HOST];
    neigh_rec    neigh[NEIGH_PER_HOST];
    neigh_event_ring neigh_events; /* changes of neigh, for its listeners */
    counters_rec counters;
    uint64_t     conns_made;  /* written by the owner; the last
                                 CONNS_PER_HOST are in conns */
    conn_rec     conns[CONNS_PER_HOST];
};

struct fabric_rec {
    uint32_t magic;
    uint32_t version;
    uint32_t size;        /* sizeof(fabric_rec) of its maker */
    uint32_t nhosts;
    uint64_t fabric_id;   /* random: packets of a recycled fabric are not
                             taken for this one's */
    uint32_t persistent;  /* made by `ucx_emu create`: outlives its members */
    uint32_t seq;         /* sequence lock */
    char     name[MAX_FABRIC_NAME + 1];
    host_rec hosts[MAX_HOSTS];
};


/* The fabric name the configuration asks for ("none": process-private
 * devices); empty and logged if malformed */
bool name_valid(const std::string &name);

/* An abstract Unix socket address of the fabric: "<what>" is "lock" or a
 * host's "h<index>" */
std::string socket_name(const std::string &fabric, const std::string &what);

/* Bind a new datagram socket to an abstract name: the fd, or -1 with errno
 * (EADDRINUSE: someone holds it) */
int bind_abstract(const std::string &name);

/* The address of an abstract socket name; its length */
socklen_t abstract_addr(const std::string &name, struct sockaddr_un *addr);

/* Whether a socket is bound to the name (the holder is alive) */
bool name_bound(const std::string &name);


/* The fabric lock, held while this object lives (acquire() waits a bounded
 * time, then fails) */
class fabric_lock {
public:
    ~fabric_lock();
    ucs_status_t acquire(const std::string &fabric);

private:
    int m_fd = -1;
};


/* A mapping of a fabric's segment */
class mapping {
public:
    ~mapping();

    /* Map fabric @a name (lock held). With @a create_hosts > 0 a missing
     * or stale one is made with that many hosts; @a persistent marks one
     * made by the tool. Refuses another version, a damaged registry
     * (registry_problem), an empty segment it is not to create, and (when
     * @a want_hosts > 0) another host count. @a readonly maps it so:
     * whoever only looks (`ucx_emu show`) never writes. */
    ucs_status_t open(const std::string &name, unsigned create_hosts,
                      unsigned want_hosts, bool persistent,
                      bool readonly = false);
    void close();

    fabric_rec *get() const
    {
        return m_rec;
    }

    /* Whether the segment was truncated under the mapping (SIGBUS): it
     * reads as zeros since (segment_guard.h) */
    bool lost() const;

    /* Remove the segment's name (the mapping stays valid) */
    void unlink_name();

private:
    fabric_rec  *m_rec   = nullptr;
    int         m_guard  = -1;
    std::string m_name;
};

/* Hosts of the registry, never more than MAX_HOSTS whatever it says */
inline unsigned host_count(const fabric_rec *rec)
{
    const uint32_t n = __atomic_load_n(&rec->nhosts, __ATOMIC_RELAXED);

    return (n < MAX_HOSTS) ? n : MAX_HOSTS;
}

/* What is wrong with the registry of fabric @a name, or "" when nothing:
 * its header (magic, version, size, host count, name) and every host's
 * name. A registry written only by this code never fails it. */
std::string registry_problem(const fabric_rec *rec, const std::string &name);

/* The header checks of registry_problem, cheap enough for every engine
 * pass, against the fabric_id seen at join */
bool header_intact(const fabric_rec *rec, uint64_t fabric_id);

/* Hosts whose socket is bound, over every possible slot: for a registry
 * that cannot be trusted */
unsigned bound_hosts(const std::string &fabric);

/* Whether host @a h of @a fabric is owned by a live process */
bool host_alive(const std::string &fabric, unsigned h);

/* The number of hosts owned by live processes */
unsigned live_hosts(const fabric_rec *rec);

/* Fill a fresh registry: @a nhosts hosts host0.., each with the default
 * devices (the in-process default topology, shifted per host) */
void init_registry(fabric_rec *rec, const std::string &name, unsigned nhosts,
                   bool persistent);

/* Sequence lock */
void write_begin(fabric_rec *rec);
void write_end(fabric_rec *rec);
uint32_t read_begin(const fabric_rec *rec);
bool read_retry(const fabric_rec *rec, uint32_t seq);

/* Registry edits (lock held, between write_begin/end) */
ucs_status_t find_port(fabric_rec *rec, const std::string &host,
                       const std::string &dev, uint8_t port, unsigned *h_p,
                       port_rec **p_p);
int find_host(const fabric_rec *rec, const std::string &name);
/* A host's neighbour table; each change is posted to its neigh_events */
void neigh_set(host_rec *h, const char *segment, const uint8_t *gid,
               const uint8_t *mac);
bool neigh_del(host_rec *h, const char *segment, const uint8_t *gid);

/* What the operations on a live fabric change (lock held, between
 * write_begin/end); they log what they refuse */
ucs_status_t edit_mac(fabric_rec *rec, port_rec *p, const uint8_t *mac,
                      bool update_neigh, bool allow_duplicate);
ucs_status_t edit_drop(fabric_rec *rec, port_rec *p, bool drop_roce_v1,
                       bool drop_roce_v2);
/* Down: the port's own host flushes its neighbours of the segment, every
 * other host that has an entry of the port's addresses marks it failed (as a
 * kernel does once its probes go unanswered); up: those entries resolve
 * again */
void edit_port_up(fabric_rec *rec, unsigned host, port_rec *p, bool up);
void edit_neigh(fabric_rec *rec, unsigned h, const uint8_t *gid,
                const uint8_t *mac);

/* Frames sent to host h so far, and one more */
inline uint64_t frames_to(const fabric_rec *rec, unsigned h)
{
    return __atomic_load_n(&rec->hosts[h].rx_frames, __ATOMIC_ACQUIRE);
}

inline void count_frame_to(fabric_rec *rec, unsigned h)
{
    __atomic_fetch_add(&rec->hosts[h].rx_frames, 1, __ATOMIC_RELEASE);
}

/* Record a connection of host @a h (by its owner only; kept across its
 * incarnations, so the tool reads them after the process left) */
void conn_write(host_rec *h, const conn_info &c);

/* The connections of host @a h, oldest first */
std::vector<conn_info> conn_read(const host_rec *h);

/* The populated GID entries of a port record */
std::vector<uct_ib_emu_gid_spec_t> gid_specs(const port_rec &p);

/* The segment's shm_open name */
std::string shm_name(const std::string &fabric);

/* The start time of a process (clock ticks since boot), 0 if unknown */
uint64_t process_start_time(int pid);

} // namespace fab
} // namespace uct_ib_emu

#endif
