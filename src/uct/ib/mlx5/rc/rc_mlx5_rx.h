/*
 * rc_mlx5's receive side: the interface's SRQ (rc/base/rc_rx.h) as a ring
 * the library writes itself, each WQE linked to the next one and refilled
 * in order, slot by slot, once the device consumed the slot; its
 * completions polled as CQE64s from the receive CQ.
 *
 * Layer mlx5/rc: may include rc/base/, the mlx5 common layer, mlx5/dv/,
 * ib/base/, uct/base/ and ucs/; never rc/verbs/.
 */
#ifndef UCT_RC_MLX5_RX_H_
#define UCT_RC_MLX5_RX_H_

#include <uct/ib/mlx5/ib_mlx5.h>
#include <uct/ib/rc/base/rc_rx.h>

#include <memory>

struct uct_rc_mlx5_iface;

class uct_rc_mlx5_rx : public uct_rc_rx {
public:
    [[nodiscard]] static ucs_status_t
    create(uct_rc_mlx5_iface *iface, unsigned queue_len, size_t seg_size,
           uct_rc_mlx5_rx **rx_p);

    uint32_t srqn() const { return m_srqn; }

    /** Once the receive CQ is ready(): dispatch up to @a max messages; the
     *  number of completions polled (rc_mlx5_rx.inl). */
    inline unsigned progress(unsigned max);

private:
    friend class uct_rc_rx;

    uct_rc_mlx5_rx() = default;

    [[nodiscard]] ucs_status_t init_direct(uct_rc_mlx5_iface *iface);
    void refill();
    inline bool post_slot(uint8_t *buf);
    inline void publish();
    __attribute__((noinline)) void rx_error(const struct mlx5_cqe64 *cqe,
                                            uint8_t *buf, uint32_t slot);
    static void release(uct_recv_desc_t *self, void *desc);

    uint32_t                    m_srqn       = 0;
    uct_ib_mlx5_poll_cq         *m_cq        = nullptr;
    uint8_t                     *m_srq_buf   = nullptr;
    uint32_t                    *m_srq_dbrec = nullptr;
    uint32_t                    m_srq_stride = 0;
    uint32_t                    m_srq_mask   = 0; /* WQEs - 1 */
    uint16_t                    m_srq_pi     = 0; /* WQEs posted */
    uint32_t                    m_dseg_len   = 0; /* big endian */
    uint32_t                    m_dseg_lkey  = 0; /* big endian */
    std::unique_ptr<uint8_t*[]> m_slot_bufs;      /* owns m_slots */
    uint8_t                     **m_slots    = nullptr; /* NULL: free */
};

#endif
