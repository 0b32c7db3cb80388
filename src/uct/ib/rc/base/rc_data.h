/*
 * The neutral data path of the RC transports (rc_mlx5 writes WQEs into its
 * DevX send queue and polls CQE64s; rc_verbs posts work requests and polls
 * completions through the glue): the active message header and its flow
 * control bits, the neutral work request, the operations waiting for their
 * completion and a completion as a transport reports it.
 *
 * Layers, as the UCX transports have them: an endpoint operation checks its
 * resources and arguments and builds one neutral work request
 * (uct_rc_wr_t); the transport's backend posts it (mlx5/rc/rc_mlx5_txq.cc,
 * rc/verbs/rc_verbs_txq.cc) and later reports its completion by sequence
 * number, which retires it and every unsignalled operation before it.
 *
 * rc/base/ may include ib/base/, uct/base/ and ucs/; never mlx5/ nor
 * rc/verbs/.
 */
#ifndef UCT_RC_DATA_H_
#define UCT_RC_DATA_H_

#include <uct/base/uct_iface.h>
#include <uct/ib/base/ib_device.h>

#include <cstdint>
#include <memory>
#include <new>

/* The header of every active message: the id, and flags in the top bits */
typedef struct uct_rc_am_hdr {
    uint8_t am_id;
} uct_rc_am_hdr_t;

constexpr uint8_t UCT_RC_AM_ID_MASK = UCT_AM_ID_MAX - 1;

/* Flow control in the top bits of the header (UCX's RC does the same):
 * the sender's window is half used (soft request) or three quarters (hard
 * request), or the message grants the receiver of it a full window; all
 * three bits make a pure grant, which carries no message */
constexpr uint8_t UCT_RC_FC_SOFT_REQ   = UCS_BIT(5);
constexpr uint8_t UCT_RC_FC_HARD_REQ   = UCS_BIT(6);
constexpr uint8_t UCT_RC_FC_GRANT      = UCS_BIT(7);
constexpr uint8_t UCT_RC_FC_PURE_GRANT = UCT_RC_FC_SOFT_REQ |
                                         UCT_RC_FC_HARD_REQ | UCT_RC_FC_GRANT;

/* Longest gather list of one work request */
constexpr unsigned UCT_RC_MAX_SGE = 4;

typedef enum {
    UCT_RC_OP_SEND,
    UCT_RC_OP_RDMA_WRITE,
    UCT_RC_OP_RDMA_READ,
    UCT_RC_OP_ATOMIC_FA,        /* fetch-and-add, 8 bytes */
    UCT_RC_OP_ATOMIC_CS,        /* compare-and-swap, 8 bytes */
    UCT_RC_OP_MASKED_FA,        /* rc_mlx5: masked fetch-and-add, 4 or 8 */
    UCT_RC_OP_MASKED_CS,        /* rc_mlx5: masked compare-and-swap, 4 or 8 */
    UCT_RC_OP_NOP
} uct_rc_opcode_t;

typedef struct uct_rc_sge {
    uint64_t addr;
    uint32_t length;
    uint32_t lkey;
} uct_rc_sge_t;

/* One work request, before a transport writes it in its own format */
typedef struct uct_rc_wr {
    uct_rc_opcode_t opcode;
    bool            signaled;
    bool            fence;
    /* inline data: the header, then the payload (short operations) */
    const void      *inl_hdr;
    unsigned        inl_hdr_len;
    const void      *inl_data;
    unsigned        inl_data_len;
    /* or a gather (send, write) / scatter (read) list */
    uct_rc_sge_t    sge[UCT_RC_MAX_SGE + 1]; /* + a copied header */
    unsigned        num_sge;
    uint64_t        remote_addr;
    uint32_t        rkey;
    /* atomics: the operands in host order, the size of the operation; the
     * fetched value lands in sge[0] */
    unsigned        atomic_size;
    uint64_t        swap_add;
    uint64_t        compare;
    uint64_t        swap_mask;
    uint64_t        compare_mask;   /* masked FA: the field boundary */
} uct_rc_wr_t;

/* What an operation waits for, retired by the completion of its WQE */
typedef struct uct_rc_op {
    uint16_t              sn;       /* the WQE index it was posted at */
    uint16_t              cost;     /* send queue room: BBs, or WRs */
    uct_completion_t      *comp;    /* or NULL */
    void                  *buf;     /* a bounce buffer to give back */
    uct_unpack_callback_t unpack;   /* get_bcopy: copy out of buf */
    void                  *arg;
    size_t                length;
    void                  *result;   /* a fetching atomic: the old value */
    uint8_t               result_size;
    bool                  result_be; /* masked atomics answer big endian */
} uct_rc_op_t;

/* The operations of an endpoint that wait for their WQEs' completion, in
 * the order posted: a fixed ring, sized once */
class uct_rc_op_ring {
public:
    [[nodiscard]] ucs_status_t init(unsigned min_capacity)
    {
        unsigned capacity = 1;

        while (capacity < min_capacity) {
            capacity *= 2;
        }
        m_ops.reset(new (std::nothrow) uct_rc_op_t[capacity]);
        if (m_ops == nullptr) {
            return UCS_ERR_NO_MEMORY;
        }
        m_mask = capacity - 1;
        return UCS_OK;
    }

    bool        empty() const { return m_head == m_tail; }
    bool        full() const { return m_tail - m_head > m_mask; }
    uct_rc_op_t &front() const { return m_ops[m_head & m_mask]; }
    uct_rc_op_t &back() const { return m_ops[(m_tail - 1) & m_mask]; }
    void        push_back(const uct_rc_op_t &op) { m_ops[m_tail++ & m_mask] = op; }
    /** A new entry at the back, for the caller to fill */
    uct_rc_op_t &push_back() { return m_ops[m_tail++ & m_mask]; }
    void        pop_front() { ++m_head; }

private:
    std::unique_ptr<uct_rc_op_t[]> m_ops;
    uint32_t                       m_mask = 0;
    uint32_t                       m_head = 0;
    uint32_t                       m_tail = 0;
};

/* A completion, as a transport reports it */
typedef struct uct_rc_completion {
    uint32_t           qpn;
    uint16_t           sn;          /* WQE index of the completed WQE */
    enum ibv_wc_status status;
    uint32_t           vendor_err;
    int                syndrome;    /* rc_mlx5: of the error CQE; else -1 */
} uct_rc_completion_t;

#endif
