/*
 * The emulated device's data model: devices, ports, contexts and the objects
 * created on them, the emulator's state, and the lifecycles of its objects.
 * model/'s headers include only api/ and model/ (and the PRM layouts), and
 * every other role includes them. Its sources also call into two roles:
 * fabric/ for membership and the fabric-wide QP numbers and keys,
 * and the engine's clock, which a new topology restarts.
 *
 * Locking: one mutex (emu_state::lock) guards everything below. Every entry
 * point takes it once; helpers named *_locked or taking an emu_state& expect
 * it to be held.
 *
 * Handles: every pointer the emulator hands out (ibv_device, ibv_context,
 * ibv_pd, ...) is registered with its kind, and every pointer passed in is
 * looked up before use, so a stale or foreign handle is rejected instead of
 * dereferenced.
 *
 * The model is shaped for what comes later: devices index their QPs by
 * number and ports know their fabric, current MAC, GID types and drop flags,
 * which is what packet delivery needs (engine/delivery.cc); verbs QPs created
 * with send ops carry the extended QP views and the work-request state of
 * their send path (frontend/verbs_wr.cc).
 */
#ifndef UCT_IB_EMU_MODEL_MODEL_H_
#define UCT_IB_EMU_MODEL_MODEL_H_

#include <emu/api/emu.h>
#include <emu/model/dma.h>
#include <emu/model/exec_state.h>
#include <emu/model/neigh_events.h>
#include <emu/model/poll_wait.h>

#include <uct/ib/mlx5/dv/prm.h>

#include <ucs/debug/log_def.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>


namespace uct_ib_emu {

namespace fab {
struct host_rec;
}

namespace wire {
struct dest;
}

/* Identity of the emulated hardware */
constexpr uint32_t VENDOR_ID           = 0x02c9; /* Mellanox Technologies */
constexpr unsigned NUM_COMP_VECTORS    = 8;
constexpr unsigned ETH_GID_TABLE_LEN   = 256;
constexpr unsigned IB_GID_TABLE_LEN    = 128;
constexpr unsigned ETH_PKEY_TABLE_LEN  = 1;
constexpr unsigned IB_PKEY_TABLE_LEN   = 128;
constexpr unsigned MAX_LMC             = 7;   /* PortInfo's 3-bit LMC */

/* Device limits; the verbs attributes and the HCA caps agree with them */
constexpr unsigned LOG_MAX_QP          = 18;
constexpr unsigned LOG_MAX_QP_SZ       = 15;
constexpr unsigned LOG_MAX_CQ          = 24;
constexpr unsigned LOG_MAX_CQ_SZ       = 22;
constexpr unsigned LOG_MAX_SRQ         = 23;
constexpr unsigned LOG_MAX_RMP         = LOG_MAX_SRQ; /* one number space */
constexpr unsigned LOG_MAX_SRQ_SZ      = 15;
constexpr unsigned LOG_MAX_XRQ         = 16;
/* Tag matching: a list of 2^10 - 1 tags (one entry is always the free one
 * the next APPEND fills), rendezvous headers of up to 64 bytes, one
 * scatter entry per tagged buffer */
constexpr unsigned LOG_TAG_MATCHING_LIST_SZ = 10;
constexpr unsigned TM_MAX_RNDV_HDR_SIZE     = 64;
constexpr unsigned TM_MAX_SGE               = 1;
constexpr unsigned LOG_MAX_PD          = 23;
constexpr unsigned LOG_MAX_MKEY        = 24;
constexpr unsigned LOG_MAX_KLM_LIST    = 16;  /* entries of a KSM mkey */
constexpr unsigned LOG_MAX_MSG         = 30;
constexpr unsigned LOG_MAX_RA_QP       = 4;   /* 16 outstanding reads */
constexpr unsigned LOG_MAX_RA_DC       = 4;   /* the same for DCIs and DCTs */
constexpr unsigned LOG_MAX_DCT         = 16;
constexpr unsigned MAX_WQE_SZ_SQ       = 1024;
constexpr unsigned WQE_XRC_SEG         = 16;  /* XRC: the remote SRQ number */
constexpr unsigned MAX_WQE_SZ_RQ       = 512;
constexpr unsigned MAX_SGE             = 30;
constexpr unsigned MAX_SRQ_SGE         = 31;
constexpr unsigned MAX_INLINE_DATA     = 828;
constexpr uint64_t MAX_MR_SIZE         = ~0ull;
constexpr int      MAX_CQE             = (1 << LOG_MAX_CQ_SZ) - 1;
constexpr int      MAX_QP_WR           = 1 << LOG_MAX_QP_SZ;
constexpr int      MAX_SRQ_WR          = (1 << LOG_MAX_SRQ_SZ) - 1;

/* UAR page layout: two BlueFlame registers, each used in two halves */
constexpr size_t   UAR_BF_OFFSET       = 0x800;
constexpr size_t   UAR_BF_REG_SIZE     = 0x200;
constexpr unsigned UAR_BF_REGS         = 2;
constexpr uint32_t BF_BUF_SIZE         = 0x100;

/* RoCEv2 UDP source port range */
constexpr uint16_t ROCE_UDP_SPORT_MIN  = 0xc000;
constexpr uint16_t ROCE_UDP_SPORT_MAX  = 0xffff;

/* The access rights of RDMA and atomics (what QPs and UMR grant) */
constexpr int      ACCESS_RDMA         = IBV_ACCESS_LOCAL_WRITE |
                                         IBV_ACCESS_REMOTE_WRITE |
                                         IBV_ACCESS_REMOTE_READ |
                                         IBV_ACCESS_REMOTE_ATOMIC;

constexpr size_t   CQE_SIZE            = 64;
constexpr uint8_t  CQE_INVALID_OP_OWN  = 0xf0;


struct gid_slot {
    bool              valid = false;
    union ibv_gid     gid   = {};
    enum ibv_gid_type type  = IBV_GID_TYPE_IB;
};

/* What the engine counted on a port (instruments.cc, counters.cc): packets
 * it sent and received, its packets dropped by reason, and the requester's
 * retries, RNR NAKs, error CQEs and CQ overruns of its QPs */
struct port_counters {
    engine_counters                       engine;
    std::map<uct_ib_emu_drop_t, uint64_t> drops;
};

struct port {
    uint8_t               num;
    uint8_t               link_layer;
    enum ibv_port_state   state;
    enum ibv_mtu          max_mtu;
    enum ibv_mtu          active_mtu;
    std::string           fabric;
    uint16_t              lid;
    uint8_t               lmc;
    uint16_t              sm_lid;
    uint16_t              ooo_sl_mask;
    uint64_t              subnet_prefix;
    uint64_t              port_guid;
    uct_ib_emu_mac_t      mac;
    uint32_t              ifindex;
    uint16_t              pkey_tbl_len;
    bool                  drop_roce_v1;
    bool                  drop_roce_v2;
    std::vector<gid_slot> gids;
    port_counters         counters;

    bool is_eth() const
    {
        return link_layer == IBV_LINK_LAYER_ETHERNET;
    }

    /* whether @a dlid is one of the LIDs an InfiniBand port answers to */
    bool has_lid(uint16_t dlid) const
    {
        return (lid != 0) && ((dlid >> lmc) == (lid >> lmc));
    }

    const gid_slot *gid(uint32_t index) const
    {
        return ((index < gids.size()) && gids[index].valid) ? &gids[index] :
                                                               nullptr;
    }
};

/* Kinds of handle the emulator gives out */
enum class kind {
    DEVICE,
    CONTEXT,
    PD,
    MR,
    CQ,
    SRQ,
    AH,
    QP,         /* verbs QP (ibv_qp) */
    DEVX_OBJ,
    UMEM,
    UAR,
    MKEY,       /* indirect mkey (mlx5dv_mkey) */
    QP_DV_EX,   /* the mlx5dv_qp_ex view of an extended verbs QP */
    COMP_CHANNEL,
    DEVX_EVENT_CHANNEL,
    DM,         /* device memory (ibv_dm) */
    XRCD,       /* XRC domain (ibv_xrcd) */
    MW          /* memory window (ibv_mw) */
};

struct context;
struct qp;
struct mr;
struct cq;
struct pd;
struct srq;
struct umem;
struct uar_page;
struct mkey;

struct device {
    static constexpr kind KIND = kind::DEVICE;

    unsigned                  index;
    std::string               name;
    struct ibv_device         ibdev;
    uint32_t                  vendor_part_id;
    uint32_t                  hw_ver;
    std::string               fw_ver;
    uint64_t                  node_guid;
    bool                      devx;
    bool                      roce_enabled;
    bool                      fl_rc_qp_when_roce_enabled;
    bool                      fl_rc_qp_when_roce_disabled;
    unsigned                  log_max_qp_sz;  /* WQEs per queue */
    uint64_t                  dm_allocated  = 0; /* device memory taken */
    uint64_t                  next_xrc_domain = 1;
    unsigned                  num_lag_ports;  /* 0: not a LAG device */
    std::vector<port>         ports;

    /* The fabric host the device belongs to (-1: a process-private
     * device); peers are other hosts' devices, which only delivery sees */
    int                       host          = -1;
    bool                      peer          = false;
    struct fab::host_rec      *shared       = nullptr; /* own host's record */
    /* Run time */
    uint32_t                  next_qpn;
    uint32_t                  next_cqn      = 0x400;
    uint32_t                  next_pdn      = 0x10;
    uint32_t                  next_srqn     = 0x40;
    uint32_t                  next_mkey_idx = 0x1000;
    uint32_t                  next_uar_page = 0x80;
    uint32_t                  next_umem_id  = 0x20;

    /* Every object by its hardware number: what the firmware looks up */
    std::map<uint32_t, qp*>       qps;
    std::map<uint32_t, struct mw*> mws; /* by key index */
    std::map<uint32_t, mr*>       mrs;  /* by mkey index */
    std::map<uint32_t, cq*>       cqs;
    std::map<uint32_t, pd*>       pds;
    std::map<uint32_t, srq*>      srqs;
    std::map<uint32_t, umem*>     umems;
    std::map<uint32_t, uar_page*> uar_pages;
    std::map<uint32_t, mkey*>     mkeys; /* indirect, by mkey index */

    /* The kinds of doorbell errors already reported (a bit each) */
    unsigned                  doorbell_errors_reported = 0;

    bool is_eth() const
    {
        return ports.front().is_eth();
    }

    const port *get_port(unsigned num) const
    {
        return ((num >= 1) && (num <= ports.size())) ? &ports[num - 1] :
                                                        nullptr;
    }
};


/* Base of every object a context owns */
struct object {
    context *ctx;

    explicit object(context *c) : ctx(c)
    {
    }

    virtual ~object() = default;
};

struct pd : object {
    static constexpr kind KIND = kind::PD;

    struct ibv_pd ibv  = {};
    uint32_t      pdn  = 0;
    unsigned      refs = 0; /* MRs, AHs, QPs, SRQs using it */

    using object::object;
};

struct dm;

struct mr : object {
    static constexpr kind KIND = kind::MR;

    struct ibv_mr ibv    = {};
    struct pd     *pd    = nullptr;
    int           access = 0;
    /* On device memory (ibv_reg_dm_mr): zero-based, address 0 is here */
    struct dm     *on_dm = nullptr;
    uint8_t       *dm_base = nullptr;
    unsigned      mw_refs  = 0; /* memory windows bound to it */

    using object::object;
};

/* A memory window (type 1 or 2): a remote key over part of an MR, bound by
 * a UMR WQE the engine executes in order (engine/mw.cc) */
struct mw : object {
    static constexpr kind KIND = kind::MW;

    struct ibv_mw ibv    = {};
    struct pd     *pd    = nullptr;
    uint32_t      index  = 0;
    bool          bound  = false;
    uint32_t      key    = 0;       /* the key the device knows, once bound */
    struct mr     *target = nullptr;
    uint64_t      start  = 0;
    uint64_t      length = 0;
    int           access = 0;       /* IBV_ACCESS_REMOTE_* */
    uint32_t      qpn    = 0;       /* type 2: the QP it is bound to */

    using object::object;
};

/* Device memory (ibv_alloc_dm): the device's own, which the program reaches
 * only through memcpy_to_dm/memcpy_from_dm and MRs on it. Modelled as
 * emulator memory, counted against the device's DEVICE_MEMORY_SIZE */
constexpr uint64_t DEVICE_MEMORY_SIZE = 256 * 1024;
constexpr uint64_t DEVICE_MEMORY_ALIGN = 64; /* allocation granularity */

struct dm : object {
    static constexpr kind KIND = kind::DM;

    struct ibv_dm ibv    = {};
    dma_buffer    buf;
    uint64_t      length = 0; /* as asked */
    unsigned      refs   = 0; /* MRs on it */

    using object::object;
};

/* A completion channel: its fd (an eventfd counting undelivered events) is
 * readable while an armed CQ of the channel has an event to deliver */
struct comp_channel : object {
    static constexpr kind KIND = kind::COMP_CHANNEL;

    struct ibv_comp_channel ibv = {};
    std::deque<struct cq*>  events; /* oldest first */
    unsigned                refs = 0; /* CQs using it */

    using object::object;
    ~comp_channel() override;
};

/* A completion of a verbs work request, as ibv_poll_cq returns it */
struct verbs_cqe {
    struct ibv_wc wc;
    unsigned      retires; /* send queue entries it frees when polled */
};

struct cq : object {
    static constexpr kind KIND = kind::CQ;

    /* An extended CQ (mlx5dv_create_cq) begins as a plain one */
    union {
        struct ibv_cq    ibv = {};
        struct ibv_cq_ex ibv_ex;
    };
    static_assert(offsetof(struct ibv_cq_ex, async_events_completed) ==
                  offsetof(struct ibv_cq, async_events_completed),
                  "ibv_cq_ex_to_cq() requires an ibv_cq_ex to begin as an "
                  "ibv_cq");
    uint32_t      cqn      = 0;
    uint32_t      cqe_cnt  = 0; /* ring entries, a power of two */
    uint32_t      cqe_size = CQE_SIZE; /* bytes per entry: 64 or 128; the
                                        * 64-byte CQE is at its end */
    bool          ignore_overrun = false; /* no overrun checking (the CQ
                                             context's oi bit) */
    dma_ring      buf;
    dma_buffer    dbrec;
    unsigned      refs    = 0; /* QPs using it */

    /* Its program polls the ring in memory (init_obj handed it out); the
     * ring registered with the poll waiter, which may take a page of it
     * away while the program waits; its waits that lasted their limit in
     * a row, and until when it is left alone (model/poll_wait.h) */
    bool          polled_in_memory = false;
    bool          receives         = false; /* a QP's or an SRQ's receive
                                               CQ (once, at least) */
    bool          ring_watched     = false;
    unsigned      ring_expired     = 0;
    std::chrono::steady_clock::time_point ring_skip_until;

    /* Completions of verbs work requests (the UMR send path), oldest first;
     * they are not written to the CQE ring */
    std::deque<verbs_cqe> verbs_cqes;
    uint64_t              overruns = 0; /* completions lost to a full CQ */

    /* The extended polling interface (frontend/cq_ex.cc): the columns the
     * creator asked for (IBV_WC_EX_WITH_*), and the completion the last
     * start_poll/next_poll took */
    uint64_t              wc_flags  = 0;
    struct ibv_wc         polled_wc = {};
    uint64_t              polled_ts = 0;

    cq_exec               exec; /* the engine's side of the ring */

    /* Completion events: the channel, the arm the device last fired on
     * (the CQ doorbell record's arm dword), events delivered and acked */
    comp_channel          *channel      = nullptr;
    uint32_t              arm_fired     = 0;
    uint32_t              arm_sn        = 0; /* the provider's */
    uint64_t              events_got    = 0;
    uint64_t              events_acked  = 0;

    /* Asynchronous events of the CQ (a CQ error) its context's user got
     * with get_async_event and acked */
    uint64_t              async_got     = 0;
    uint64_t              async_acked   = 0;

    /* what libibverbs' ibv_create_cq() initialises, for the acks to
     * count in (comp_events_completed, async_events_completed) */
    explicit cq(context *c) : object(c)
    {
        pthread_mutex_init(&ibv.mutex, nullptr);
        pthread_cond_init(&ibv.cond, nullptr);
    }

    ~cq() override
    {
        pthread_cond_destroy(&ibv.cond);
        pthread_mutex_destroy(&ibv.mutex);
    }
};

/* A shared receive queue: a verbs SRQ, whose ring and doorbell record the
 * device allocates, or a DevX RMP (rmp.cc), whose ring and doorbell record
 * are in its user's umems */
struct srq : object {
    static constexpr kind KIND = kind::SRQ;

    struct ibv_srq ibv     = {};
    struct pd      *pd     = nullptr;
    uint32_t       srqn    = 0;
    uint32_t       wqe_cnt = 0;
    uint32_t       stride  = 0;
    uint32_t       max_sge = 0;
    dma_buffer     buf;
    dma_buffer     dbrec;
    unsigned       refs    = 0; /* QPs using it */
    srq_exec       exec;        /* the engine's and the provider's indices */
    std::vector<uint64_t> wrid; /* post_srq_recv: by WQE index */
    /* The limit (an RMP's lwm): fewer posted WQEs than this raise the
     * limit event, which disarms it (0); its events the context's user
     * got with get_async_event and acked */
    uint16_t       lwm            = 0;
    uint64_t       async_got      = 0;
    uint64_t       async_acked    = 0;

    /* An XRC SRQ: its domain, and the CQ its receives complete on */
    struct xrcd    *xrcd          = nullptr;
    struct cq      *xrc_cq        = nullptr;

    /* A DevX XRQ (firmware/xrq.cc): the CQ its completions go to and,
     * with the tag-matching topology, its matching list */
    bool           xrq            = false;
    bool           tag_matching   = false;
    struct cq      *xrq_cq        = nullptr;
    tm_exec        tm;
    /* A striding (multi-packet) XRQ: strides per WQE (0: not striding),
     * their size */
    uint32_t       mp_strides      = 0;
    uint32_t       mp_stride_bytes = 0;

    /* A DevX RMP or XRQ */
    bool           devx           = false;
    uint8_t        wq_type        = UCT_MLX5_WQ_TYPE_LINKED_LIST;
    uint8_t        rmp_state      = UCT_MLX5_RMPC_STATE_RDY;
    struct umem    *wq_umem       = nullptr;
    uint64_t       wq_umem_offset = 0;
    struct umem    *dbr_umem      = nullptr;
    uint64_t       dbr_offset     = 0;

    using object::object;
};

/* An XRC domain: the XRC SRQs and target QPs that may serve each other.
 * Each ibv_open_xrcd gives a handle of its own; handles opened on one file
 * (the same inode) are one domain, as the kernel shares them */
struct xrcd : object {
    static constexpr kind KIND = kind::XRCD;

    struct ibv_xrcd   ibv    = {};
    unsigned          refs   = 0; /* XRC SRQs and target QPs through it */
    uint64_t          domain = 0; /* the device's number of the domain */
    dev_t             file_dev = 0; /* the file it was opened on, if any */
    ino_t             file_ino = 0;

    using object::object;
};

struct ah : object {
    static constexpr kind KIND = kind::AH;

    struct ibv_ah       ibv = {};
    struct pd           *pd = nullptr;
    struct mlx5_wqe_av  av  = {};

    using object::object;
};

/* A UAR page: the context's own (CQ doorbells, verbs QP BlueFlame) or one
 * allocated through DevX */
struct uar_page : object {
    uint32_t   page_id = 0;
    bool       nc      = false;
    dma_buffer mem;
    unsigned   bf_used = 0; /* bitmap of BlueFlame registers handed out */
    unsigned   refs    = 0; /* DevX UAR handles and QPs using the page */
    /* What the engine saw of each half of each BlueFlame register, a
     * WQE's first basic block (engine/doorbells.cc): the last contents, the
     * last settled ones (the program had gone on to the other half), and
     * whether the last ring is yet to settle */
    struct bf_half {
        uint64_t seen[MLX5_SEND_WQE_BB / 8]    = {};
        uint64_t settled[MLX5_SEND_WQE_BB / 8] = {};
        bool     pending                       = false;
    };
    bf_half    bf_halves[UAR_BF_REGS * 2];

    using object::object;
};

struct uar : object {
    static constexpr kind KIND = kind::UAR;

    struct mlx5dv_devx_uar dv   = {};
    uar_page               *page = nullptr;
    unsigned               bf_index = 0;

    using object::object;
};

/* An entry of an indirect mkey's translation list */
struct klm {
    uint32_t lkey;
    uint64_t addr;
    uint32_t length;
};

/*
 * An indirect mkey. Either made free by mlx5dv_create_mkey, zero-based, with
 * the layout a UMR bound to it (entries of their own lengths); or made by a
 * DevX CREATE_MKEY in KSM mode (firmware/mkey.cc), addressed by virtual
 * address from start_addr, its entries all of 2^log_entity_size bytes, the
 * DevX object owning it.
 */
struct mkey : object {
    static constexpr kind KIND = kind::MKEY;

    struct mlx5dv_mkey dv           = {};
    struct pd          *pd          = nullptr;
    uint16_t           max_entries  = 0;
    bool               bound        = false; /* free until a UMR binds it */
    uint32_t           access       = 0;     /* ibv access flags */
    uint32_t           bound_by_qpn = 0;
    uint64_t           length       = 0;     /* UMR: the list's sum */
    std::vector<klm>   entries;
    bool               ksm             = false;
    uint64_t           start_addr      = 0;  /* KSM */
    unsigned           log_entity_size = 0;  /* KSM */

    using object::object;
};

/* A send work request of the ibv_wr_* API, kept from its builder call to its
 * execution (wr_complete) or, behind a dropped one, until the QP is flushed */
struct send_wr {
    enum op_t { MR_LIST, LOCAL_INV } op;
    uint64_t         wr_id;
    unsigned         flags;  /* ibv_send_flags */
    uint32_t         key;    /* the mkey bound or invalidated */
    uint32_t         access; /* MR_LIST */
    std::vector<klm> sges;   /* MR_LIST */
};

/* A data work request built by the ibv_wr_* API, posted at wr_complete
 * through ibv_post_send's path; it owns its gather list and inline data */
struct data_wr {
    struct ibv_send_wr   wr     = {};
    std::vector<ibv_sge> sges;
    std::vector<uint8_t> inline_data;
};

struct umem : object {
    static constexpr kind KIND = kind::UMEM;

    struct mlx5dv_devx_umem dv     = {};
    void                    *addr  = nullptr;
    size_t                  size   = 0;
    uint32_t                access = 0;
    unsigned                refs   = 0; /* QPs using it */

    using object::object;
};

/* qp::st of a DCT (the PRM has no such qpc.st: a DCT is an object of its
 * own, CREATE_DCT, kept here as a QP that only responds) */
constexpr uint8_t QP_ST_DCT = 0xd0;

/* A queue pair, created through verbs or DevX; the context is kept decoded */
struct qp : object {
    static constexpr kind KIND = kind::QP;

    bool             devx          = false;
    uint32_t         qpn           = 0;
    uint8_t          state         = 0; /* PRM qpc.state */
    uint8_t          st            = UCT_MLX5_QP_ST_RC; /* PRM qpc.st */
    uint32_t         qkey          = 0; /* UD */
    struct pd        *pd           = nullptr;
    struct cq        *send_cq      = nullptr;
    struct cq        *recv_cq      = nullptr;
    struct srq       *srq          = nullptr;
    /* XRC: the target's domain (it has no PD: memory is checked with the
     * PD of the XRC SRQ each packet names, xrc_srq) */
    struct xrcd      *xrcd         = nullptr;
    struct srq       *xrc_srq      = nullptr;

    /* Queue geometry */
    uint8_t          log_sq_size   = 0;
    uint8_t          log_rq_size   = 0;
    uint8_t          log_rq_stride = 0;
    uint8_t          rq_type       = 0;
    uint8_t          no_sq         = 0;

    /* Connection state, as the QPC holds it */
    uint8_t          port          = 0;
    uint32_t         remote_qpn    = 0;
    uint8_t          mtu           = 0;
    uint8_t          log_msg_max   = 0;
    uint8_t          rre           = 0;
    uint8_t          rwe           = 0;
    uint8_t          rae           = 0;
    uint8_t          atomic_mode   = 0;
    uint8_t          lag_tx_port_affinity = 0;
    uint8_t          log_rra_max   = 0;
    uint8_t          log_sra_max   = 0;
    uint8_t          min_rnr_nak   = 0;
    uint8_t          retry_count   = 0;
    uint8_t          rnr_retry     = 0;
    uint8_t          pm_state      = 0;
    uint8_t          counter_set_id = 0;
    uint32_t         user_index    = 0;
    uint8_t          cs_req        = 0; /* scatter to CQE, PRM encodings */
    uint8_t          cs_res        = 0;
    uint32_t         next_send_psn = 0;
    uint32_t         next_rcv_psn  = 0;
    uct_ib_emu_ads_t path          = {};

    /* DevX resources */
    umem             *wq_umem      = nullptr;
    uint64_t         wq_umem_offset = 0;
    umem             *dbr_umem     = nullptr;
    uint64_t         dbr_offset    = 0;
    uar_page         *uar          = nullptr;

    /* Verbs; ibv_ex.qp_base is the ibv_qp of every verbs QP, and the rest
     * of ibv_ex and dv_ex are the extended views of one created with send
     * ops (qp_ex) */
    struct ibv_qp_ex    ibv_ex          = {};
    struct ibv_qp       &ibv            = ibv_ex.qp_base;
    struct mlx5dv_qp_ex dv_ex           = {};
    bool                qp_ex           = false;
    uint64_t            ibv_send_ops    = 0; /* IBV_QP_EX_WITH_* */
    struct ibv_qp_cap   cap             = {};
    int                 sq_sig_all      = 0;
    int                 access_flags    = 0;
    uint16_t            pkey_index      = 0;
    uint8_t             max_rd_atomic   = 0;
    uint8_t             max_dest_rd_atomic = 0;
    uint8_t             timeout         = 0;
    struct ibv_ah_attr  ah_attr         = {};
    uint64_t            send_ops_flags  = 0;
    uint32_t            sq_wqe_cnt      = 0;
    uint32_t            sq_stride       = 0;
    uint32_t            rq_wqe_cnt      = 0;
    uint32_t            rq_stride       = 0;
    dma_buffer          wq_buf;
    dma_buffer          dbrec;
    unsigned            bf_index        = 0;

    /* Send path of the ibv_wr_* API: the batch between wr_start and
     * wr_complete, its first builder error, the send queue entries posted
     * and not yet polled, and the work requests stuck behind a dropped one
     * (the QP retries them until it is flushed) */
    bool                 wr_open        = false;
    int                  wr_err         = 0;
    std::vector<send_wr> wr_batch;
    std::vector<data_wr> wr_data;       /* the batch's data operations */
    unsigned             sq_inflight    = 0;
    unsigned             unsignaled     = 0; /* completed, no CQE yet */
    bool                 stalled        = false;
    std::deque<send_wr>  stuck;

    /* The engine's side of the send and receive queues */
    sq_exec              sq_x;
    rq_exec              rq_x;

    /* Delivery's lookup hint; a cache, so it may change in a const qp */
    mutable route_hint   route;

    /* DC (engine/dc.cc). A DCI: the target its oldest message went to (the
     * WQE's address vector, raw) and the connection to it, numbered by an
     * increasing generation, starting at dc_start_psn. A DCT: its access
     * key, state and key violations, and a stream per DCI that reached it,
     * which holds the responder's side of that connection (a qp that is
     * no object of its context: stream_of names its DCT) */
    uint64_t             dc_key        = 0;
    bool                 dc_connected  = false;
    uint8_t              dc_av[48]     = {};
    uint32_t             dc_gen        = 0;
    uint32_t             dc_start_psn  = 0;
    uint8_t              dct_state     = 0; /* UCT_MLX5_DCT_STATE_* */
    uint32_t             dc_key_violations = 0;
    std::map<uint32_t, std::unique_ptr<qp>> dc_streams; /* by DCI QPN */
    qp                   *stream_of    = nullptr;

    /* The provider's side of a verbs QP's rings */
    verbs_wq             vsq;
    verbs_wq             vrq;

    using object::object;

    /* Drop the connection state (transition to RST) */
    void reset_connection();

    bool is_ud() const
    {
        return st == UCT_MLX5_QP_ST_UD;
    }

    bool is_dci() const
    {
        return st == UCT_MLX5_QP_ST_DCI;
    }

    /* A DCT, or one of its streams */
    bool is_dct() const
    {
        return st == QP_ST_DCT;
    }

    bool is_uc() const
    {
        return st == UCT_MLX5_QP_ST_UC;
    }

    /* XRC: an initiator (XRC_SEND) or a target (XRC_RECV) */
    bool is_xrc() const
    {
        return st == UCT_MLX5_QP_ST_XRC;
    }

    bool is_xrc_tgt() const
    {
        return is_xrc() && (xrcd != nullptr);
    }

    /* The PD the responder checks memory with */
    struct pd *responder_pd() const;
};

/* A DevX event channel (devx_events.cc): the user reads its fd, one
 * SOCK_SEQPACKET end, the device writes each event as one record into the
 * other */
struct devx_event_channel : object {
    static constexpr kind KIND = kind::DEVX_EVENT_CHANNEL;

    struct subscription {
        const struct devx_obj *obj;    /* NULL: an unaffiliated event */
        uint16_t              event;
        uint64_t              cookie;
    };

    struct mlx5dv_devx_event_channel ibv = {-1};
    int                       device_fd   = -1;
    bool                      omit_data   = false;
    std::vector<subscription> subscriptions;

    using object::object;
    ~devx_event_channel() override;
};

/* A DevX object handle (struct mlx5dv_devx_obj is opaque in rdma-core) */
struct devx_obj : object {
    static constexpr kind KIND = kind::DEVX_OBJ;

    struct qp   *qp   = nullptr; /* one of them */
    struct srq  *rmp  = nullptr;
    struct mkey *mkey = nullptr;

    using object::object;
};

/* The asynchronous events of a context (async.cc): its async_fd, an
 * eventfd counting the queued events, and the events, oldest first */
struct async_queue {
    int                                fd = -1;
    std::deque<struct ibv_async_event> events;

    async_queue() = default;
    async_queue(const async_queue&) = delete;
    async_queue &operator=(const async_queue&) = delete;
    ~async_queue();
};

struct context {
    static constexpr kind KIND = kind::CONTEXT;

    /* A genuine verbs_context, as rdma-core's providers allocate it: the
     * inline functions of verbs.h reach the model through its ops
     * (provider.cc); everything else sees its ibv_context member */
    struct verbs_context vctx    = {};
    struct ibv_context &ibv      = vctx.context;
    device             *dev      = nullptr;
    bool               devx      = false;
    uar_page           *drv_uar  = nullptr; /* the context's own UAR page */
    async_queue        async;

    /* Everything created on the context, owned here */
    std::map<object*, std::unique_ptr<object>> objects;

    context()
    {
        pthread_mutex_init(&vctx.context.mutex, nullptr);
    }

    context(const context&)            = delete;
    context &operator=(const context&) = delete;

    ~context()
    {
        pthread_mutex_destroy(&vctx.context.mutex);
    }
};


struct fault {
    unsigned count = 0;
    int      err   = 0;
};

struct cmd_fault {
    unsigned skip     = 0; /* commands that succeed before the faults */
    unsigned count    = 0;
    uint8_t  status   = 0;
    uint32_t syndrome = 0;
};

struct wr_fault {
    unsigned           count      = 0;
    enum ibv_wc_status status     = IBV_WC_SUCCESS;
    uint32_t           vendor_err = 0;
};

struct handle {
    kind type;
    void *obj;
};

class member;

/* The whole emulator */
/* A neighbour listener (frontend/neigh_monitor.cc): the events it has not
 * read, as rtnetlink datagrams */
struct neigh_listener {
    context                          *ctx = nullptr;
    uint64_t                         pos  = 0;     /* last event taken */
    bool                             lost = false; /* report ENOBUFS next */
    std::deque<std::vector<uint8_t>> queue;
};

struct emu_state {
    dma_fault_scope                              dma_faults; /* first: last
                                                                to go */
    std::mutex                                   lock;
    std::vector<std::unique_ptr<device>>         devices;
    /* Joined to a fabric: the membership, and the other hosts' devices */
    std::unique_ptr<member>                      fabric;
    std::vector<std::unique_ptr<device>>         peers;
    /* One neighbour table per L2 segment (port::fabric): a port resolves
     * only the addresses of its own segment */
    std::map<std::string,
             std::map<uct_ib_emu_gid_t, uct_ib_emu_mac_t>> neigh;
    /* A process-private emulator's neighbour events (on a fabric, the
     * host's record has them), and the listeners by descriptor */
    std::unique_ptr<neigh_event_ring>            neigh_events{
                                                         new neigh_event_ring()};
    std::map<int, neigh_listener>                neigh_listeners;
    int                                          next_neigh_listener = 0;
    std::unordered_map<const void*, handle>      handles;
    std::map<context*, std::unique_ptr<context>> contexts;
    std::set<struct ibv_device**>                device_lists;
    std::minstd_rand                             rng;
    /* Polls of CQ rings that wait for the engine (declared after the
     * contexts: it goes first, and every waiting poll goes on) */
    poll_waiter                                  poll_wait;

    /* The connection manager (frontend/cm/), if a program uses it: a
     * message from another host, and the engine's pass (its timers) */
    void (*cm_receive)(emu_state &s, unsigned src_host, const uint8_t *msg,
                       size_t len) = nullptr;
    bool (*cm_tick)(emu_state &s) = nullptr;

    /* Counters */
    uint64_t                                     ah_created        = 0;
    uint64_t                                     ah_destroyed      = 0;
    uint64_t                                     ah_reclaimed      = 0;
    uint64_t                                     objects_reclaimed = 0;
    std::map<uint16_t, uint64_t>                 cmds;
    std::map<uint16_t, uint64_t>                 cmds_failed;
    std::map<uct_ib_emu_drop_t, uint64_t>        drops;
    engine_counters                              engine;
    engine_clock                                 clock;

    /* Fault injection */
    fault                                        op_faults[UCT_IB_GLUE_OP_LAST];
    std::atomic<unsigned>                        op_faults_armed{0}; /* ops
                                                     with a count left */
    std::map<uint16_t, cmd_fault>                cmd_faults;
    wr_fault                                     wr_faults;

    emu_state();
    ~emu_state();
};

/* The emulator, created with the default topology on first use and joined
 * to its fabric (state.cc) */
emu_state &state();

using guard = std::lock_guard<std::mutex>;


/* Handle registry (state.cc) */
void register_handle(emu_state &s, const void *ptr, kind k, void *obj);
void unregister_handle(emu_state &s, const void *ptr);
void *find_handle(const emu_state &s, const void *ptr, kind k);

template <typename T>
T *find(const emu_state &s, const void *ptr)
{
    return static_cast<T*>(find_handle(s, ptr, T::KIND));
}

/* The context behind a handle, or NULL */
context *find_context(emu_state &s, struct ibv_context *ibctx);

/* Take ownership of a new object of a context */
template <typename T>
T *add_object(context *ctx, std::unique_ptr<T> obj)
{
    T *raw = obj.get();

    ctx->objects.emplace(raw, std::move(obj));
    return raw;
}

/* Free an object of a context (its destroy took it out of everything else) */
void remove_object(context *ctx, object *obj);

/* Return conventions */
template <typename T>
T *fail_ptr(int err)
{
    errno = err;
    return nullptr;
}

/*
 * The opening every destroy entry point shares: the lock, and the object of
 * type T behind handle; EINVAL when there is none, else what fn(s, obj)
 * returns.
 */
template <typename T, typename F>
int with_object(const void *handle, F fn)
{
    emu_state &s = state();
    guard g(s.lock);
    T *obj = find<T>(s, handle);

    return (obj == nullptr) ? EINVAL : fn(s, obj);
}


/* Install topology topo in s: its devices, the neighbour tables of their
 * ports, every counter zeroed and every fault disarmed (topology.cc) */
ucs_status_t apply_topology(emu_state &s, const uct_ib_emu_topology_t &topo);

/* The devices of a topology entry; a joined host's devices and its
 * peers' (s.lock held) */
ucs_status_t build_device(const uct_ib_emu_device_spec_t &spec,
                          unsigned index, std::unique_ptr<device> *dev_p);
ucs_status_t apply_host_topology(emu_state &s, unsigned host,
                                 const uct_ib_emu_topology_t &own,
                                 const std::vector<uct_ib_emu_topology_t> &all);

/* Zero every counter: the emulator's totals and every port's (state.cc) */
void counters_reset_locked(emu_state &s);

/* GIDs and addresses (topology.cc) */
uct_ib_emu_gid_t gid_key(const union ibv_gid &gid);
bool gid_is_zero(const uint8_t *raw);
std::string gid_str(const uint8_t *raw);
bool neigh_resolve(const emu_state &s, const port &from, const union ibv_gid &gid,
                   uct_ib_emu_mac_t *mac);

/* RoCEv2 UDP source port for a flow label, as rdma-core derives it */
uint16_t roce_udp_sport(emu_state &s, uint32_t flow_label);

/* The device's free-running clock, which stamps CQEs: 156.25 MHz, as the
 * caps (device_frequency_khz) and ibv_query_device_ex (hca_core_clock)
 * say, counted from the emulator's clock (its ns * 5 / 32) */
constexpr uint32_t HCA_CORE_CLOCK_KHZ = 156250;
constexpr uint64_t HCA_TIMESTAMP_MASK = 0x7fffffffffffffffull;
inline uint64_t hca_clock_ticks(const emu_state &s)
{
    return ((s.clock.now / 32) * 5 + (s.clock.now % 32) * 5 / 32) &
           HCA_TIMESTAMP_MASK;
}

/* Integer log2 of the smallest power of two >= value */
unsigned ilog2_ceil(uint64_t value);

/* Whether the process runs under valgrind, which runs one thread at a time */
bool running_on_valgrind();

/* PRM state of a verbs QP state and back */
uint8_t prm_qp_state(enum ibv_qp_state state);
enum ibv_qp_state verbs_qp_state(uint8_t prm_state);

/* Access flags of an MR or umem as the kernel checks them: 0 or an errno */
int check_access_flags(int access);

/* A device's MR or indirect mkey by its key (index and variant), or NULL */
mr *find_mr_by_key(const device *dev, uint32_t key);
mkey *find_mkey_by_key(const device *dev, uint32_t key);

/* UAR pages: a new one of ctx (no references yet), and one reference
 * given back (the last frees it) */
uar_page *uar_page_alloc(context *ctx, bool nc);
void uar_page_put(uar_page *page);


/* What the two ways of creating a QP (CREATE_QP and ibv_create_qp) decide
 * (qp.cc); the rest of the QP they fill in themselves */
struct qp_spec {
    bool     devx           = false;
    uint8_t  st             = UCT_MLX5_QP_ST_RC;
    struct pd *pd           = nullptr;
    cq       *send_cq       = nullptr;
    cq       *recv_cq       = nullptr;
    struct srq *srq         = nullptr;
    struct xrcd *xrcd       = nullptr; /* an XRC target's domain */
    uint8_t  no_sq          = 0;
    uint8_t  log_sq_size    = 0;
    uint8_t  log_rq_size    = 0;
    uint8_t  log_rq_stride  = 0;
    uint8_t  rq_type        = 0;
    umem     *wq_umem       = nullptr;
    uint64_t wq_umem_offset = 0;
    umem     *dbr_umem      = nullptr;
    uint64_t dbr_offset     = 0;
    uar_page *uar           = nullptr;
};

/* The one QP constructor: q, in RST, gets a fabric-wide unique number and
 * the resources of spec (a reference on each), is indexed by its device
 * and owned by its context */
qp *qp_install(std::unique_ptr<qp> q, const qp_spec &spec);

/* What qp_install took, given back: the references and the index, once
 * the rings on its UAR page were judged */
void qp_release_resources(emu_state &s, qp *q);

/* Where an SRQ's ring and doorbell record are: a verbs SRQ's own buffers,
 * or a DevX RMP's umems (objects.cc) */
uint8_t *srq_ring(const srq *q);
const uint32_t *srq_dbrec(const srq *q);

/* Forget the verbs completions of QP qpn waiting in c (NULL: none) */
void cq_remove_verbs_cqes(cq *c, uint32_t qpn);

/* A verbs QP's work requests stuck behind a dropped one complete with
 * IBV_WC_WR_FLUSH_ERR (the QP entered ERR) */
void qp_flush_verbs_sends(qp *q);

/* A completion of a verbs work request on q's send CQ (a full CQ loses it) */
void qp_push_verbs_cqe(qp *q, const send_wr &wr, enum ibv_wc_status status,
                       uint32_t vendor_err = 0);


/*
 * Lifecycles (objects.cc): destroy an object (unregister its handle, drop
 * it from its device's tables and the references it holds, and free it),
 * once the destroy entry point's checks passed, or when close_device
 * reclaims what its caller left behind; and close a context, reclaiming
 * its objects, users before what they use.
 */
void verbs_qp_destroy_locked(emu_state &s, qp *q);
void devx_obj_destroy_locked(emu_state &s, devx_obj *obj);
void ah_destroy_locked(emu_state &s, ah *a);
void mr_destroy_locked(emu_state &s, mr *m);
void dm_destroy_locked(emu_state &s, dm *d);
void mw_destroy_locked(emu_state &s, mw *w);
void xrcd_destroy_locked(emu_state &s, xrcd *x);
void srq_destroy_locked(emu_state &s, srq *q);
void cq_destroy_locked(emu_state &s, cq *c);
void comp_channel_destroy_locked(emu_state &s, comp_channel *ch);
void uar_destroy_locked(emu_state &s, uar *u);
void mkey_destroy_locked(emu_state &s, mkey *m);
void umem_destroy_locked(emu_state &s, umem *u);
void pd_destroy_locked(emu_state &s, pd *p);
void context_destroy_locked(emu_state &s, context *ctx);


/* Fault injection (faults.cc): the convention of a glue slot, whether the
 * current call of it must fail (with *err), whether the work request the
 * device is about to execute must fail (with the status and vendor syndrome
 * in *f; s.lock held), and every fault disarmed (s.lock held) */
uct_ib_glue_conv_t glue_op_conv(uct_ib_glue_op_t op);
bool take_op_fault(uct_ib_glue_op_t op, int *err);
bool take_wr_fault(emu_state &s, wr_fault *f);
void clear_faults_locked(emu_state &s);
/* The faults UCX_IB_EMU_FAIL_OP names, armed when the state is made (an
 * error names what was wrong, and arms nothing) */
void arm_faults_from_env(emu_state &s);


/* The port a QP sends from, or NULL before RST2INIT */
inline port *qp_port(const qp *q)
{
    device *dev = q->ctx->dev;

    return (unsigned(q->port) - 1 < dev->ports.size()) ?
           &dev->ports[q->port - 1] : nullptr;
}

/* Debug log of the emulator */
#define uct_ib_emu_debug(_fmt, ...) ucs_debug("emu: " _fmt, ## __VA_ARGS__)

} // namespace uct_ib_emu

#endif
