/*
 * What the engine keeps per queue between two of its passes: the device's
 * side of the send, receive and completion queues (their hardware indices)
 * and the requester's and responder's progress. Held by the model objects
 * (model.h) and changed only by the engine, with emu_state::lock held.
 */
#ifndef UCT_IB_MLX5_EMU_EXEC_STATE_H_
#define UCT_IB_MLX5_EMU_EXEC_STATE_H_

#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <vector>


namespace uct_ib_emu {

struct opcode_info;

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
    const opcode_info    *info      = nullptr;
    uint64_t             raddr      = 0;
    uint32_t             rkey       = 0;
    unsigned             atomic_size = 0; /* 4 or 8 */
    uint64_t             atomic[4]  = {}; /* operands, host order */
    std::vector<sge>     sges;
    bool                 is_inline  = false;
    std::vector<uint8_t> inline_data;
    uint32_t             length     = 0; /* message bytes */
    uint8_t              bad_syndrome = 0; /* decoding failed: its syndrome */

    /* Reliability */
    bool                 waiting    = false; /* on a timer until deadline */
    bool                 rnr_wait   = false; /* the timer is the RNR timer */
    uint64_t             deadline   = 0;
    unsigned             retries_left = 0;
    unsigned             rnr_left   = 0;
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
    std::deque<send_wqe> wqes;      /* taken, not completed, in order */
    std::vector<uint8_t> payload;   /* the message being sent, gathered */
};

/* The responder's side: the message being received */
struct rq_exec {
    uint16_t         consumed  = 0;     /* receive WQEs taken (regular RQ) */
    bool             in_send   = false; /* a multi-packet SEND in progress */
    uint16_t         wqe_index = 0;
    std::vector<sge> sges;
    uint32_t         offset    = 0;
};

/* The device's side of a completion queue */
struct cq_exec {
    uint32_t pi       = 0;     /* CQEs written */
    bool     in_error = false; /* overrun happened */
    uint32_t sw_ci    = 0;     /* verbs poll_cq: entries consumed */
};

/* The device's side of a shared receive queue, and the provider's
 * (post_srq_recv) bookkeeping */
struct srq_exec {
    uint16_t head     = 0; /* next WQE the device takes */
    uint16_t consumed = 0; /* WQEs taken */
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
};

/* What the engine counts (the instruments report it) */
struct engine_counters {
    uint64_t packets_sent      = 0;
    uint64_t packets_delivered = 0;
    uint64_t retries           = 0;
    uint64_t rnr_naks          = 0;
    uint64_t cq_overruns       = 0;
    std::map<uint8_t, uint64_t> err_cqes; /* by syndrome */
};

/* The emulator's clock (engine.cc) */
struct engine_clock {
    uint64_t                              now       = 0;    /* ns */
    double                                scale     = 1.0;
    bool                                  step_mode = false;
    std::chrono::steady_clock::time_point last_real;
};

} // namespace uct_ib_emu

#endif
