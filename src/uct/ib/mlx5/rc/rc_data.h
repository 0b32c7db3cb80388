/*
 * The data path of the RC transports, shared by rc_mlx5 (WQEs written into
 * the DevX send queue, CQE64s polled from the CQ ring) and rc_verbs (work
 * requests and completions through the glue): active messages over a
 * shared receive queue, RDMA write and read, flush, fence, pending requests
 * and endpoint failure.
 *
 * Layers, as the UCX transports have them: an endpoint operation checks its
 * resources and arguments and builds one neutral work request
 * (uct_rc_wr_t); the transport's backend posts it (rc_mlx5_txq.cc,
 * rc_verbs_txq.cc) and later reports its completion by sequence number,
 * which retires it and every unsignalled operation before it.
 *
 * Receive buffers (rc_rx.cc), for a message of payload P with header H:
 *
 *     [ ... | uct_recv_desc_t* | rx_headroom | P ]    after dispatch
 *     [ ...                  | H | P ]              as received
 *
 * The header byte arrives just before the payload; once it is read, the
 * pointer that uct_iface_release_desc() needs is written rx_headroom bytes
 * before the payload, over whatever was there.
 */
#ifndef UCT_RC_DATA_H_
#define UCT_RC_DATA_H_

#include "rc_cq.h"

#include <uct/base/uct_iface.h>
#include <uct/ib/base/ib_device.h>

#include <cstdint>
#include <memory>
#include <new>
#include <vector>

struct uct_rc_mlx5_iface;
struct uct_rc_mlx5_ep;

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

/* Registered buffers of one size (bounce buffers of bcopy operations,
 * receive buffers), in one slab with one memory region */
class uct_rc_buf_pool {
public:
    [[nodiscard]] static ucs_status_t
    create(const uct_ib_device &dev, uint8_t port_num, struct ibv_pd *pd,
           size_t buf_size, unsigned count, uct_rc_buf_pool **pool_p);
    ~uct_rc_buf_pool();

    uct_rc_buf_pool(const uct_rc_buf_pool&)            = delete;
    uct_rc_buf_pool &operator=(const uct_rc_buf_pool&) = delete;

    /** A free buffer, or NULL when every one is in use */
    void *get()
    {
        if (m_free.empty()) {
            return nullptr;
        }
        void *buf = m_free.back();
        m_free.pop_back();
        return buf;
    }

    void     put(void *buf) { m_free.push_back(buf); }
    uint8_t  *buf(unsigned index) const { return m_mem + index * m_buf_size; }
    /** The buffer @a ptr points into */
    unsigned index(const void *ptr) const
    {
        return (static_cast<const uint8_t*>(ptr) - m_mem) / m_buf_size;
    }
    uint32_t lkey() const { return m_mr->lkey; }
    uint32_t lkey_be() const { return m_lkey_be; }
    size_t   buf_size() const { return m_buf_size; }
    unsigned count() const { return m_count; }
    unsigned num_free() const { return m_free.size(); }

private:
    uct_rc_buf_pool() = default;

    std::string        m_dev_name;
    size_t             m_buf_size = 0;
    unsigned           m_count    = 0;
    uint8_t            *m_mem     = nullptr;
    struct ibv_mr      *m_mr      = nullptr;
    uint32_t           m_lkey_be  = 0;     /* for a WQE's data segment */
    std::vector<void*> m_free;
};

/*
 * The shared receive queue of an interface and its buffers: each holds one
 * message of up to seg_size bytes, header included, and goes back to the
 * SRQ when its handler is done with it, or when the user releases the
 * descriptor it kept. Twice the queue length is allocated, so that kept
 * descriptors do not empty the SRQ at once.
 */
class uct_rc_rx : public uct_recv_desc_t {
public:
    [[nodiscard]] static ucs_status_t
    create(uct_rc_mlx5_iface *iface, unsigned queue_len, size_t seg_size,
           uct_rc_rx **rx_p);
    ~uct_rc_rx();

    uct_rc_rx(const uct_rc_rx&)            = delete;
    uct_rc_rx &operator=(const uct_rc_rx&) = delete;

    struct ibv_srq *srq() const { return m_srq; }
    uint32_t       srqn() const { return m_srqn; }

    /** Poll up to @a max receive completions and dispatch their messages;
     *  the number polled. */
    unsigned progress(unsigned max)
    {
        if (ucs_likely(m_direct)) {
            /* nothing arrived: no call */
            return m_cq->ready() ? progress_direct(max) : 0;
        }
        return progress_verbs(max);
    }

    /** rc_mlx5, once its receive CQ is ready(): dispatch up to @a max. */
    unsigned progress_direct(unsigned max);

private:
    uct_rc_rx() = default;

    [[nodiscard]] ucs_status_t init_direct();
    unsigned progress_verbs(unsigned max);
    void refill();
    void refill_verbs();
    void refill_direct();
    bool post_slot(uint8_t *buf);
    void publish();
    __attribute__((noinline)) void fc_received(uint32_t qpn, uint8_t fc);
    bool dispatch(uint8_t *buf, uint32_t byte_len, uint32_t qpn);
    __attribute__((noinline)) void rx_error(const struct mlx5_cqe64 *cqe,
                                            uint8_t *buf, uint32_t slot);
    static void release(uct_recv_desc_t *self, void *desc);

    uct_rc_mlx5_iface                *m_iface = nullptr;
    struct ibv_srq                   *m_srq   = nullptr;
    uint32_t                         m_srqn   = 0;
    std::unique_ptr<uct_rc_buf_pool> m_bufs;
    size_t                           m_front  = 0; /* bytes before payload */
    size_t                           m_seg_size = 0;
    unsigned                         m_queue_len = 0;
    unsigned                         m_posted = 0;

    /* rc_mlx5: receive CQEs polled and SRQ WQEs written here, the SRQ a
     * ring (each WQE links to the next one) refilled in order, slot by
     * slot, once the device consumed the slot */
    bool                             m_direct   = false;
    uct_rc_mlx5_poll_cq              *m_cq      = nullptr;
    uint8_t                          *m_srq_buf = nullptr;
    uint32_t                         *m_srq_dbrec = nullptr;
    uint32_t                         m_srq_stride = 0;
    uint32_t                         m_srq_mask = 0;   /* WQEs - 1 */
    uint16_t                         m_srq_pi   = 0;   /* WQEs posted */
    uint32_t                         m_dseg_len = 0;   /* big endian */
    uint32_t                         m_dseg_lkey = 0;  /* big endian */
    std::unique_ptr<uint8_t*[]>      m_slot_bufs;      /* owns m_slots */
    uint8_t                          **m_slots  = nullptr; /* NULL: free */
};

#endif
