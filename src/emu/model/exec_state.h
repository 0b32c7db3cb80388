/*
 * What the engine keeps per queue between two of its passes: the device's
 * side of the send, receive and completion queues (their hardware indices)
 * and the requester's and responder's progress. Held by the model objects
 * (model.h) and changed only by the engine, with emu_state::lock held.
 */
#ifndef UCT_IB_EMU_MODEL_EXEC_STATE_H_
#define UCT_IB_EMU_MODEL_EXEC_STATE_H_

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <vector>


namespace uct_ib_emu {

struct opcode_info;

/* The most a CQE holds of a message (scatter to CQE, 128-byte CQEs) */
constexpr uint32_t CQE_SCATTER_MAX = 64;

/* A scatter/gather entry as a data segment carries it, in host order */
struct sge {
    uint32_t lkey;
    uint64_t addr;
    uint32_t length;
};

/* A send WQE the requester took from the ring, decoded */
struct send_wqe {
    uint16_t             index      = 0; /* first basic block */
    unsigned             nbb        = 1; /* basic blocks it spans */
    uint8_t              opcode     = 0;
    uint8_t              opmod      = 0;
    uint8_t              fm_ce_se   = 0;
    uint32_t             imm        = 0; /* as in the WQE (big endian) */
    uint32_t             xrc_srqn   = 0; /* XRC: the remote SRQ */
    /* UMR (a memory window's bind or invalidate): the mkey context and the
     * one KLM entry */
    struct {
        bool     free       = false; /* invalidate */
        uint8_t  access     = 0;     /* MLX5_WQE_MKEY_CONTEXT_ACCESS_FLAGS */
        uint32_t qpn        = 0;     /* type 2: the QP it is bound to */
        uint64_t start      = 0;
        uint64_t length     = 0;
        uint32_t mr_lkey    = 0;
    }                    umr;
    const opcode_info    *info      = nullptr;
    uint64_t             raddr      = 0;
    uint32_t             rkey       = 0;
    unsigned             atomic_size = 0; /* 4 or 8 */
    uint64_t             atomic[4]  = {}; /* operands, host order */
    std::vector<sge>     sges;
    bool                 is_inline  = false;
    std::vector<uint8_t> inline_data;
    uint32_t             length     = 0; /* message bytes */
    uint8_t              av[48]     = {}; /* UD: the datagram segment's
                                             address vector, as posted */
    uint8_t              bad_syndrome = 0; /* decoding failed: its syndrome */

    /* Reliability */
    bool                 psn_set    = false; /* sent once: its PSNs */
    uint32_t             first_psn  = 0;
    bool                 waiting    = false; /* on a timer until deadline */
    bool                 rnr_wait   = false; /* the timer is the RNR timer */
    uint64_t             deadline   = 0;
    unsigned             retries_left = 0;
    unsigned             rnr_left   = 0;

    /* Sent to another host of the fabric, answered asynchronously; its
     * packets are made as the link takes them (next_pkt < npkts: the rest
     * of this transmission is still to go) */
    int                  remote_host = -1; /* its host, once sent there */
    uint32_t             npkts      = 1;
    uint32_t             next_pkt   = 0;
    uint32_t             resp_got   = 0; /* response bytes received */

    /* A response written into the CQE (scatter to CQE), not to sges */
    uint8_t              cqe_data[CQE_SCATTER_MAX] = {};

    /* A TAG_MATCHING WQE's tag-matching segment, in host order but for
     * the tag and the mask, which the device compares as they are */
    struct {
        uint8_t  op       = 0;  /* UCT_MLX5_TM_OP_* */
        uint8_t  flags    = 0;  /* UCT_MLX5_TM_FLAG_* */
        uint16_t index    = 0;
        uint16_t sw_cnt   = 0;
        uint64_t tag      = 0;
        uint64_t mask     = 0;
    }                    tm;

    /* Not from the ring: work the device queued on this QP itself (a
     * matched rendezvous's read of the sender's data, then its FIN); it
     * writes no send CQE (engine/tag_matching.cc) */
    uint8_t              device_op  = 0; /* DEVICE_OP_* */
    uint32_t             tm_srqn    = 0; /* the XRQ whose entry it serves */
    uint16_t             tm_entry   = 0;
    uint8_t              tm_hdr[16] = {}; /* the rendezvous request's TMH */

    /* Back to a fresh entry, keeping the buffers' capacity */
    void reset()
    {
        std::vector<sge> s             = std::move(sges);
        std::vector<uint8_t> d         = std::move(inline_data);

        *this = send_wqe();
        s.clear();
        d.clear();
        sges        = std::move(s);
        inline_data = std::move(d);
    }
};

enum : uint8_t {
    DEVICE_OP_NONE      = 0,
    DEVICE_OP_RNDV_READ = 1,
    DEVICE_OP_RNDV_FIN  = 2
};

/* The WQEs a requester took, oldest first; entries are reused, so taking a
 * WQE allocates nothing once the ring has warmed up */
class wqe_fifo {
public:
    bool empty() const
    {
        return m_count == 0;
    }

    send_wqe &front()
    {
        return m_slots[m_head];
    }

    const send_wqe &front() const
    {
        return m_slots[m_head];
    }

    size_t size() const
    {
        return m_count;
    }

    send_wqe &at(size_t i)
    {
        return m_slots[(m_head + i) % m_slots.size()];
    }

    void pop_front()
    {
        m_head = (m_head + 1) % m_slots.size();
        --m_count;
    }

    /* A fresh entry at the back */
    send_wqe &push_back()
    {
        if (m_count == m_slots.size()) {
            grow();
        }

        send_wqe &w = m_slots[(m_head + m_count) % m_slots.size()];
        w.reset();
        ++m_count;
        return w;
    }

private:
    void grow()
    {
        std::vector<send_wqe> bigger(std::max<size_t>(16, 2 * m_slots.size()));

        for (size_t i = 0; i < m_count; ++i) {
            bigger[i] = std::move(m_slots[(m_head + i) % m_slots.size()]);
        }
        m_slots.swap(bigger);
        m_head = 0;
    }

    std::vector<send_wqe> m_slots;
    size_t                m_head  = 0;
    size_t                m_count = 0;
};

struct device;

/* Where delivery last found a QP's destination (delivery.cc) */
struct route_hint {
    const device *dev       = nullptr;
    uint8_t      port       = 0;
    uint32_t     gid_index  = 0;
};

/* The requester's side of a send queue */
struct sq_exec {
    uint16_t             fetch = 0; /* next basic block to take */
    uint16_t             producer_seen = 0; /* the doorbell record, as last
                                               read (it only moves on) */
    wqe_fifo             wqes;      /* taken, not completed, in order */
    size_t               sent  = 0; /* of them, from the front: sent to
                                       another host, not yet answered */
    unsigned             reads_out = 0; /* of those, reads and atomics */
    std::vector<uint8_t> payload;   /* the message being sent, gathered
                                       (to this host), or one packet's */
    std::vector<send_wqe> device_ops; /* queued by the device, taken before
                                         the ring's next WQEs */
    /* After a reset: the doorbell record's count as it was then. The
     * device counts from 0 again and follows the record only once its
     * user writes it (its next doorbell); until then the old count is not
     * a post (a DCI is reset and reused by UCX) */
    bool                 dbrec_stale = false;
    uint16_t             dbrec_at_reset = 0;
};

/* A read answered to another host a piece at a time, each piece read from
 * memory as it is sent (engine/remote.cc) */
struct read_answer {
    uint32_t psn    = 0;
    uint32_t rkey   = 0;
    uint64_t addr   = 0; /* of the read's first byte */
    uint32_t total  = 0; /* bytes */
    uint32_t offset = 0; /* sent so far */
};

/* The responder's side: the message being received */
struct rq_exec {
    uint16_t         consumed  = 0;     /* receive WQEs taken (regular RQ) */
    uint16_t         producer_seen = 0; /* its doorbell record, as last read */
    bool             in_send   = false; /* a multi-packet SEND in progress */
    bool             discarding = false; /* UC: the rest of a message whose
                                            packet was lost or refused */
    uint16_t         wqe_index = 0;
    std::vector<sge> sges;
    uint32_t         offset    = 0;
    uint32_t         cqe_len   = 0;     /* scattered to the CQE: bytes */
    uint8_t          cqe_data[CQE_SCATTER_MAX] = {};

    /* Tag matching: how the message in progress was matched (its CQE's
     * app_op, 0 without tag matching), the entry it went to, its header,
     * and the bytes of it not scattered (the header of a matched eager
     * message) */
    uint8_t          tm_app_op = 0;
    bool             tm_strides = false; /* a stride per packet (striding
                                            XRQ): a CQE per packet */
    uint16_t         tm_entry  = 0;
    uint8_t          tm_hdr[16] = {};
    uint32_t         tm_skip   = 0;
    struct {
        uint64_t va   = 0;
        uint32_t rkey = 0;
        uint32_t len  = 0;
    }                tm_rndv;           /* a matched rendezvous request */

    /* The last atomic executed, replayed to a duplicate of its request */
    uint32_t         atomic_psn = UINT32_MAX;
    uint64_t         atomic_orig = 0;

    /* Reads from other hosts still being answered, oldest first */
    std::deque<read_answer> reads;
};

/* An entry of an XRQ's tag-matching list: a tagged receive buffer */
struct tm_entry {
    bool     listed = false;
    uint64_t tag    = 0;
    uint64_t mask   = 0;
    sge      buf    = {};
    uint64_t seq    = 0; /* append order: the oldest match wins */
};

/* The matching list of an XRQ with the tag-matching topology, as the
 * device keeps it (engine/tag_matching.cc) */
struct tm_exec {
    std::vector<tm_entry> entries;   /* 2^log_matching_list_sz */
    uint16_t append_next = 0;   /* the entry the next APPEND fills */
    uint16_t unexpected  = 0;   /* unexpected messages (hw_phase_cnt) */
    uint64_t next_seq    = 0;
    bool     rndv        = false; /* rendezvous offload */
};

/* The device's side of a completion queue */
struct cq_exec {
    uint32_t pi       = 0;     /* CQEs written */
    uint32_t ci_seen  = 0;     /* the consumer index, as last read */
    bool     in_error = false; /* overrun happened */
    uint32_t sw_ci    = 0;     /* verbs poll_cq: entries consumed */
};

/* The device's side of a shared receive queue, and the provider's
 * (post_srq_recv) bookkeeping */
struct srq_exec {
    uint16_t head     = 0; /* next WQE the device takes */
    uint16_t consumed = 0; /* WQEs taken */
    uint16_t producer_seen = 0; /* the doorbell record, as last read */
    /* A striding XRQ: the WQE whose strides it is filling, and how many
     * of them it used (all: take a new WQE) */
    uint16_t mp_wqe   = 0;
    uint32_t mp_used  = 0;
    std::vector<sge> mp_sges;
    uint16_t tail     = 0; /* provider: last free WQE */
    uint16_t posted   = 0; /* provider: WQEs posted (the doorbell counter) */
    uint16_t free_head = 0;
};

/* What the mlx5 provider keeps of a verbs work queue, for the verbs entry
 * points (post_send, post_recv, poll_cq) that write and read the rings */
struct verbs_wq {
    uint16_t              pi   = 0; /* send: basic blocks; receive: WQEs */
    uint16_t              tail = 0; /* the oldest not yet completed */
    std::vector<uint64_t> wrid;     /* by slot */
    std::vector<uint16_t> nbb;      /* send: basic blocks, by first slot */
    std::vector<int16_t>  wc_op;    /* send: the completion's opcode where
                                       the WQE's does not say it (a UMR WQE
                                       binds or invalidates), else -1 */
};

/* What the engine counts (the instruments report it) */
struct engine_counters {
    uint64_t packets_sent      = 0;
    uint64_t packets_delivered = 0;
    uint64_t retries           = 0;
    uint64_t rnr_naks          = 0;
    uint64_t cq_overruns       = 0;
    std::map<uint8_t, uint64_t> err_cqes; /* by syndrome */
    /* doorbells rung out of order or not matching their WQE, by what was
     * wrong (uct_ib_emu_doorbell_error_str) */
    std::map<uct_ib_emu_doorbell_error_t, uint64_t> doorbell_errors;
    uint64_t doorbells_seen    = 0; /* rings the device saw */
    uint64_t bf_copies_checked = 0; /* BlueFlame copies it compared */
};

/* The emulator's clock (engine.cc) */
struct engine_clock {
    uint64_t                              now       = 0;    /* ns */
    double                                scale     = 1.0;
    bool                                  step_mode = false;
    bool                                  fresh     = false; /* this pass */
    std::chrono::steady_clock::time_point last_real;
};

} // namespace uct_ib_emu

#endif
