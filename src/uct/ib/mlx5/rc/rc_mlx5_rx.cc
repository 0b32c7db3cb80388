/*
 * rc_mlx5's receive side (rc_mlx5_rx.h): the CQE64s of the receive CQ
 * polled, each message handed to its active message handler with its
 * descriptor (rc/base/rc_rx.h), and the SRQ's WQEs and doorbell record
 * written by the library.
 *
 * Layer mlx5/rc: may include rc/base/, the mlx5 common layer, mlx5/dv/,
 * ib/base/, uct/base/ and ucs/; never rc/verbs/.
 */
#include "rc_mlx5_rx.inl"
#include "rc_mlx5_iface.h"

#include <uct/ib/mlx5/ib_mlx5.inl>
#include <ucs/debug/log_def.h>

#include <cerrno>
#include <endian.h>
#include <new>

ucs_status_t uct_rc_mlx5_rx::create(uct_rc_mlx5_iface *iface,
                                    unsigned queue_len, size_t seg_size,
                                    uct_rc_mlx5_rx **rx_p)
{
    return create_rx(iface, queue_len, seg_size,
                     [iface](uct_rc_mlx5_rx *rx) {
                         return rx->init_direct(iface);
                     }, rx_p);
}

/* The SRQ's ring, as mlx5dv shows it: the receive path of rc_mlx5 */
ucs_status_t uct_rc_mlx5_rx::init_direct(uct_rc_mlx5_iface *iface)
{
    struct mlx5dv_obj obj    = {};
    struct mlx5dv_srq dv_srq = {};
    int               ret;

    dv_srq.comp_mask = MLX5DV_SRQ_MASK_SRQN;
    obj.srq.in       = m_srq;
    obj.srq.out      = &dv_srq;
    ret              = uct_ib_glue->mlx5dv_init_obj(&obj, MLX5DV_OBJ_SRQ);
    if ((ret != 0) || !(dv_srq.comp_mask & MLX5DV_SRQ_MASK_SRQN)) {
        errno = (ret != 0) ? ret : EOPNOTSUPP;
        ucs_error("mlx5dv_init_obj(%s, SRQ number) failed: %m",
                  iface->dev_name.c_str());
        return UCS_ERR_IO_ERROR;
    }

    /* a fresh SRQ: its WQEs linked in a ring from head 0 to tail */
    const uint32_t wqe_cnt = dv_srq.tail + 1;
    if ((dv_srq.head != 0) || (wqe_cnt & (wqe_cnt - 1)) ||
        (wqe_cnt <= m_queue_len) ||
        (dv_srq.stride < sizeof(struct mlx5_wqe_srq_next_seg) +
                         sizeof(struct mlx5_wqe_data_seg))) {
        ucs_error("%s: SRQ 0x%x has an unexpected layout: head %u tail %u "
                  "stride %u for %u receives", iface->dev_name.c_str(),
                  dv_srq.srqn, dv_srq.head, dv_srq.tail, dv_srq.stride,
                  m_queue_len);
        return UCS_ERR_IO_ERROR;
    }

    m_slot_bufs.reset(new (std::nothrow) uint8_t*[wqe_cnt]());
    if (m_slot_bufs == nullptr) {
        return UCS_ERR_NO_MEMORY;
    }
    m_slots = m_slot_bufs.get();

    m_srqn        = dv_srq.srqn;
    m_srq_buf     = static_cast<uint8_t*>(dv_srq.buf);
    m_srq_dbrec   = reinterpret_cast<uint32_t*>(dv_srq.dbrec);
    m_srq_stride  = dv_srq.stride;
    m_srq_mask    = wqe_cnt - 1;
    m_cq          = &iface->rx_cq;
    m_dseg_len    = htobe32(recv_length());
    m_dseg_lkey   = htobe32(m_bufs->lkey());
    return UCS_OK;
}

/* Fill the SRQ's slots in ring order while they are free (the device
 * consumed them), up to queue_len, then publish the count */
void uct_rc_mlx5_rx::refill()
{
    while (m_posted < m_queue_len) {
        auto *buf = static_cast<uint8_t*>(m_bufs->get());

        if (buf == nullptr) {
            break;
        } else if (!post_slot(buf)) {
            m_bufs->put(buf);
            break;
        }
        ++m_posted;
    }
    publish();
}

void uct_rc_mlx5_rx::release(uct_recv_desc_t *self, void *desc)
{
    auto *rx = static_cast<uct_rc_mlx5_rx*>(self);

    rx->put_desc(desc);
    rx->refill();
}

/* A receive CQE that carries no message */
void uct_rc_mlx5_rx::rx_error(const struct mlx5_cqe64 *cqe, uint8_t *buf,
                              uint32_t slot)
{
    auto          *ecqe  = reinterpret_cast<const struct mlx5_err_cqe*>(cqe);
    const uint8_t opcode = cqe->op_own >> 4;

    /* a flush when the QP moved to error: nothing arrived */
    if ((opcode != MLX5_CQE_RESP_ERR) ||
        (ecqe->syndrome != MLX5_CQE_SYNDROME_WR_FLUSH_ERR)) {
        ucs_error("%s: receive on qp 0x%x completed with opcode 0x%x "
                  "(syndrome 0x%x vendor syndrome 0x%x) in SRQ slot %u",
                  m_iface->dev_name.c_str(), uct_ib_mlx5_cqe_qpn(cqe), opcode,
                  ecqe->syndrome, ecqe->vendor_err_synd, slot);
    }
    if (buf != nullptr) {
        m_bufs->put(buf);
    }
}
