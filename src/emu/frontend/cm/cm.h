/*
 * The connection manager of the emulated fabric (docs/drop-in.md,
 * "librdmacm"): librdmacm's ids, event channels and connections, on the
 * fabric's IP addresses. It plays the kernel's rdma_cm and IB CM and
 * librdmacm's user-space part at once:
 *   cm_core.cc   channels, ids, events; messages between hosts (frames of
 *                the fabric, PKT_CM) and the engine's hooks
 *   cm_addr.cc   addresses: which port has an IP, resolving an address and
 *                a route, binding, the devices
 *   cm_conn.cc   QPs, listen, connect, accept, reject, disconnect, and the
 *                messages a connection exchanges (REQ, REP, RTU, REJ, DREQ,
 *                DREP; SIDR_REQ and SIDR_REP for UD)
 *   cm_ep.cc     the synchronous interface (ids without a channel),
 *                rdma_create_ep, rdma_get_request, and the ops table
 *
 * Locks: the CM's own (cm_lock) guards its ids and channels. The engine's
 * thread delivers messages with emu_state::lock held and then takes
 * cm_lock (never the other way): it only queues them. What a message does
 * to a QP (RTR, RTS, ERR) is done by the program's thread when it takes
 * the event (rdma_get_cm_event), with no lock held, through the glue table,
 * as librdmacm does it in the program's thread.
 */
#ifndef UCT_IB_EMU_FRONTEND_CM_CM_H_
#define UCT_IB_EMU_FRONTEND_CM_CM_H_

#include <emu/api/cm.h>
#include <emu/model/model.h>

#include <netinet/in.h>

#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <vector>


namespace uct_ib_emu {
namespace cm {

/* What one CM sends another; the fabric carries it opaque */
enum msg_type : uint8_t {
    MSG_REQ = 1,
    MSG_REP,
    MSG_RTU,
    MSG_REJ,
    MSG_DREQ,
    MSG_DREP,
    MSG_SIDR_REQ,
    MSG_SIDR_REP
};

constexpr size_t PDATA_MAX = 196; /* a REP's private data */

/* IB CM's reject reasons that librdmacm reports as the event's status */
constexpr int REJ_INVALID_SERVICE_ID = 8;
constexpr int REJ_CONSUMER_DEFINED   = 28;

struct msg {
    uint8_t  type;         /* msg_type */
    uint8_t  qp_type;      /* enum ibv_qp_type */
    uint8_t  resp_res;
    uint8_t  init_depth;
    uint8_t  retry;
    uint8_t  rnr_retry;
    uint8_t  pdata_len;
    uint8_t  rej_reason;
    uint64_t src_token;    /* the sender's id */
    uint64_t dst_token;    /* the receiver's id (0 in a REQ) */
    uint32_t src_ip;       /* IPv4, network order */
    uint32_t dst_ip;
    uint16_t src_port;     /* network order */
    uint16_t dst_port;
    uint32_t qpn;
    uint32_t psn;
    uint32_t qkey;
    uint8_t  src_gid[16];
    uint8_t  pdata[PDATA_MAX];
};

struct channel;

enum class id_state {
    IDLE,
    BOUND,
    ADDR_RESOLVED,
    ROUTE_RESOLVED,
    LISTEN,
    CONNECTING,     /* REQ sent */
    REQ_RECEIVED,   /* CONNECT_REQUEST given, not accepted yet */
    ACCEPTED,       /* REP sent, RTU awaited */
    RESPONDED,      /* REP received, no QP: rdma_establish awaited */
    CONNECTED,
    DISCONNECTED
};

/* An rdma_cm_id and what the CM keeps of it */
struct id {
    struct rdma_cm_id pub = {}; /* first: the program's pointer */
    uint64_t          token = 0;
    channel           *ch   = nullptr;
    bool              sync  = false; /* made without a channel */
    id_state          state = id_state::IDLE;

    /* This side: its address, device, port and GID index */
    struct sockaddr_in src = {};
    struct sockaddr_in dst = {};
    int               dev_index  = -1;
    uint8_t           sgid_index = 0;
    union ibv_gid     sgid       = {};
    uct_ib_emu_mac_t  mac        = {}; /* the port's when taken, whose
                                          change is an ADDR_CHANGE */
    bool              addr_changed = false;
    struct ibv_sa_path_rec path  = {};

    /* The other side, once known */
    unsigned          peer_host  = 0;
    uint64_t          peer_token = 0;
    uint32_t          peer_qpn   = 0;
    uint32_t          peer_psn   = 0;
    uint32_t          peer_qkey  = 0;
    union ibv_gid     peer_gid   = {};
    uint8_t           peer_resp_res   = 0;
    uint8_t           peer_init_depth = 0;
    uint8_t           retry      = 7;
    uint8_t           rnr_retry  = 7;
    uint32_t          psn        = 0;
    uint64_t          deadline   = 0; /* a REQ unanswered until then */

    /* A listener's: the backlog, and for rdma_create_ep's passive ids the
     * QP every request's id gets (rdma_get_request) */
    int               backlog    = 0;
    id                *listener  = nullptr;
    bool              has_ep_qp  = false;
    struct ibv_qp_init_attr ep_qp = {};
    struct ibv_pd     *ep_pd     = nullptr;

    /* What rdma_create_qp made for the id itself (no CQ given) */
    bool              own_cqs    = false;
};

/* A message or a local event waiting on a channel for the program */
struct pending {
    id                     *target = nullptr; /* local events */
    enum rdma_cm_event_type type   = RDMA_CM_EVENT_ADDR_RESOLVED;
    int                    status  = 0;
    bool                   is_msg  = false;
    unsigned               src_host = 0;
    msg                    m        = {};
};

struct channel {
    struct rdma_event_channel pub = {-1}; /* first */
    int                       wfd = -1;   /* the pipe's write end */
    std::deque<pending>       queue;
    unsigned                  ids = 0;
};

/* An event handed to the program, until rdma_ack_cm_event */
struct event {
    struct rdma_cm_event pub = {}; /* first */
    std::vector<uint8_t> pdata;
};

/* The CM of this process */
struct cm_state {
    std::mutex                        lock;
    std::map<channel*, std::unique_ptr<channel>> channels;
    std::map<uint64_t, id*>           ids;   /* by token */
    std::map<id*, std::unique_ptr<id>> owned;
    uint64_t                          next_token = 1;
    std::vector<struct ibv_context*>  devices;  /* opened once, by index */
    std::vector<struct ibv_pd*>       pds;      /* each device's, for ids */
    std::deque<int>                   closed_wfds; /* of destroyed channels */
    bool                              hooked     = false;
};

cm_state &the_cm();

/* cm_core.cc */
channel *channel_create();
void channel_destroy(channel *ch);
void post_locked(channel *ch, const pending &p);          /* cm lock held */
void post_event(id *target, enum rdma_cm_event_type type, int status = 0);
id *find_id(struct rdma_cm_id *pub);                     /* cm lock held */
id *id_create(channel *ch, void *context, enum rdma_port_space ps);
void id_destroy(id *i);
/* Send m to src_host's CM (this host's included); false if the host is not
 * reachable */
bool send_msg(unsigned host, const msg &m);
unsigned own_host();
uint64_t now_ns();
void hook_engine();

/* cm_addr.cc */
int bind_addr(id *i, const struct sockaddr *addr);
int resolve_addr(id *i, const struct sockaddr *src, const struct sockaddr *dst);
int resolve_route(id *i);
/* The host, device index and port of the port that has IPv4 address ip
 * (network order): false if no port of the fabric has it */
bool find_ip(uint32_t ip, unsigned *host, int *dev_index, uint8_t *port);
/* Take i onto local device dev_index, port, with the port's GID of ip */
int attach_device(id *i, int dev_index, uint8_t port, uint32_t ip);
struct ibv_context **get_devices(int *num);

/* cm_conn.cc */
int create_qp(id *i, struct ibv_pd *pd, struct ibv_qp_init_attr *attr);
/* The id's QP, and the CQs and channels rdma_create_qp made for it */
void destroy_qp(id *i);
int init_qp_attr(id *i, struct ibv_qp_attr *attr, int *mask);
int listen(id *i, int backlog);
int connect(id *i, struct rdma_conn_param *param);
int establish(id *i);
int accept(id *i, struct rdma_conn_param *param);
int reject(id *i, const void *pdata, uint8_t len);
int disconnect(id *i);
/* A message delivered by the engine (s.lock held): queued to its id's or
 * listener's channel */
void receive_locked(unsigned src_host, const msg &m);
/* The program takes p: what it does to the id and its QP, and the event it
 * becomes; false if it becomes none */
bool take(const pending &p, event *ev);
/* Unanswered REQs past their deadline (s.lock held) */
bool tick_locked();

} // namespace cm
} // namespace uct_ib_emu

#endif
