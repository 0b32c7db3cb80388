/*
 * Receive side of the RC transports: one SRQ per interface, each message
 * handed to its active message handler with its descriptor (see rc_data.h
 * for the layout). rc_verbs polls receive completions and posts receives
 * through the glue; rc_mlx5 polls the CQE64s of its receive CQ and writes
 * the SRQ's WQEs and doorbell record itself.
 */
#include "rc_mlx5_iface.h"

#include <ucs/debug/log_def.h>
#include <ucs/sys/math.h>

#include <cerrno>
#include <endian.h>
#include <new>

namespace {

constexpr unsigned rx_batch = 16; /* completions per poll */

} // namespace

ucs_status_t uct_rc_rx::create(uct_rc_mlx5_iface *iface, unsigned queue_len,
                               size_t seg_size, uct_rc_rx **rx_p)
{
    std::unique_ptr<uct_rc_rx> rx(new (std::nothrow) uct_rc_rx());
    struct ibv_srq_init_attr   attr = {};
    uct_rc_buf_pool            *bufs;
    ucs_status_t               status;

    if (rx == nullptr) {
        return UCS_ERR_NO_MEMORY;
    }

    rx->cb          = release;
    rx->m_iface     = iface;
    rx->m_queue_len = queue_len;
    rx->m_seg_size  = seg_size;
    /* the release pointer, then the headroom, right before the payload; the
     * header arrives in the last bytes of that space */
    rx->m_front     = ucs_align_up(sizeof(uct_recv_desc_t*) +
                                   std::max(iface->rx_headroom,
                                            sizeof(uct_rc_am_hdr_t)), 8);

    status = uct_rc_buf_pool::create(*iface->md->dev, iface->port_num,
                                     iface->md->pd, rx->m_front + seg_size,
                                     2 * queue_len, &bufs);
    if (status != UCS_OK) {
        return status;
    }
    rx->m_bufs.reset(bufs);

    attr.attr.max_wr  = queue_len;
    attr.attr.max_sge = 1;
    rx->m_srq = uct_ib_glue->create_srq(iface->md->pd, &attr);
    if (rx->m_srq == nullptr) {
        const int err = errno;

        ucs_error("create_srq(%s, %u receives) failed: %m",
                  iface->dev_name.c_str(), queue_len);
        return (err == ENOMEM) ? UCS_ERR_NO_MEMORY : UCS_ERR_IO_ERROR;
    }

    if (iface->devx) {
        status = rx->init_direct();
        if (status != UCS_OK) {
            return status;
        }
    }

    rx->refill();
    if (rx->m_posted == 0) {
        return UCS_ERR_IO_ERROR; /* refill logged why */
    }

    *rx_p = rx.release();
    return UCS_OK;
}

/* The SRQ's ring, as mlx5dv shows it: the receive path of rc_mlx5 */
ucs_status_t uct_rc_rx::init_direct()
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
                  m_iface->dev_name.c_str());
        return UCS_ERR_IO_ERROR;
    }

    /* a fresh SRQ: its WQEs linked in a ring from head 0 to tail */
    const uint32_t wqe_cnt = dv_srq.tail + 1;
    if ((dv_srq.head != 0) || (wqe_cnt & (wqe_cnt - 1)) ||
        (wqe_cnt <= m_queue_len) ||
        (dv_srq.stride < sizeof(struct mlx5_wqe_srq_next_seg) +
                         sizeof(struct mlx5_wqe_data_seg))) {
        ucs_error("%s: SRQ 0x%x has an unexpected layout: head %u tail %u "
                  "stride %u for %u receives", m_iface->dev_name.c_str(),
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
    m_cq          = &m_iface->rx_cq;
    m_dseg_len    = htobe32(sizeof(uct_rc_am_hdr_t) + m_seg_size);
    m_dseg_lkey   = htobe32(m_bufs->lkey());
    m_direct      = true;
    m_iface->rx_direct = true;
    return UCS_OK;
}

uct_rc_rx::~uct_rc_rx()
{
    int ret;

    if (m_srq != nullptr) {
        ret = uct_ib_glue->destroy_srq(m_srq);
        if (ret != 0) {
            errno = ret;
            ucs_warn("destroy_srq(%s) failed: %m", m_iface->dev_name.c_str());
            m_bufs.release(); /* the device may still write them */
        }
    }
}

void uct_rc_rx::refill()
{
    if (m_direct) {
        refill_direct();
    } else {
        refill_verbs();
    }
}

/* Post @a buf in the next slot in ring order, if the device consumed
 * that slot already; false if it did not */
inline bool uct_rc_rx::post_slot(uint8_t *buf)
{
    const uint32_t slot = m_srq_pi & m_srq_mask;

    if (ucs_unlikely(m_slots[slot] != nullptr)) {
        return false; /* completed out of order: its turn comes */
    }

    auto *dseg = reinterpret_cast<struct mlx5_wqe_data_seg*>(
            m_srq_buf + slot * m_srq_stride +
            sizeof(struct mlx5_wqe_srq_next_seg));
    dseg->byte_count = m_dseg_len;
    dseg->lkey       = m_dseg_lkey;
    dseg->addr       = htobe64(reinterpret_cast<uintptr_t>(buf) + m_front -
                               sizeof(uct_rc_am_hdr_t));
    if (ucs_unlikely(m_srq_stride > sizeof(struct mlx5_wqe_srq_next_seg) +
                                    sizeof(*dseg))) {
        dseg[1].byte_count = 0;
        dseg[1].lkey       = htobe32(MLX5_INVALID_LKEY); /* list end */
        dseg[1].addr       = 0;
    }
    m_slots[slot] = buf;
    ++m_srq_pi;
    return true;
}

/* The WQEs before the count that lets the device take them */
inline void uct_rc_rx::publish()
{
    __atomic_store_n(m_srq_dbrec, htobe32(m_srq_pi), __ATOMIC_RELEASE);
}

/* Fill the SRQ's slots in ring order while they are free (the device
 * consumed them), up to queue_len, then publish the count */
void uct_rc_rx::refill_direct()
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

/* Post free buffers until the SRQ holds queue_len */
void uct_rc_rx::refill_verbs()
{
    struct ibv_recv_wr wr[rx_batch], *bad_wr;
    struct ibv_sge     sge[rx_batch];
    unsigned           count;
    int                ret;

    while ((m_posted < m_queue_len) && (m_bufs->num_free() > 0)) {
        count = 0;
        while ((count < rx_batch) && (m_posted + count < m_queue_len)) {
            auto *buf = static_cast<uint8_t*>(m_bufs->get());
            if (buf == nullptr) {
                break;
            }
            sge[count].addr   = reinterpret_cast<uintptr_t>(buf + m_front -
                                                            sizeof(uct_rc_am_hdr_t));
            sge[count].length = sizeof(uct_rc_am_hdr_t) + m_seg_size;
            sge[count].lkey   = m_bufs->lkey();
            wr[count].wr_id   = reinterpret_cast<uintptr_t>(buf);
            wr[count].sg_list = &sge[count];
            wr[count].num_sge = 1;
            wr[count].next    = nullptr;
            if (count > 0) {
                wr[count - 1].next = &wr[count];
            }
            ++count;
        }
        if (count == 0) {
            return;
        }

        ret = uct_ib_glue->post_srq_recv(m_srq, wr, &bad_wr);
        if (ret != 0) {
            errno = ret;
            ucs_error("post_srq_recv(%s) failed: %m", m_iface->dev_name.c_str());
            for (unsigned i = 0; i < count; ++i) {
                m_bufs->put(reinterpret_cast<void*>(wr[i].wr_id));
            }
            return;
        }
        m_posted += count;
    }
}

/* Flow control bits arrived with a message (or alone: a pure grant) */
void uct_rc_rx::fc_received(uint32_t qpn, uint8_t fc)
{
    /* the endpoint of this QP: it sends the grant, or takes one */
    uct_rc_mlx5_ep_fc_received(m_iface, qpn, fc);
}

/* Hand the message in @a buf to its handler: true if the buffer is free
 * again, false if the handler kept it */
inline bool uct_rc_rx::dispatch(uint8_t *buf, uint32_t byte_len, uint32_t qpn)
{
    uint8_t               *payload = buf + m_front;
    const uct_rc_am_hdr_t *hdr     = reinterpret_cast<const uct_rc_am_hdr_t*>(
                                             payload - sizeof(uct_rc_am_hdr_t));
    const uint8_t         am_id    = hdr->am_id & UCT_RC_AM_ID_MASK;
    const uint8_t         fc       = hdr->am_id & UCT_RC_FC_PURE_GRANT;
    void                  *desc    = payload - m_iface->rx_headroom;
    ucs_status_t          status;

    if (ucs_unlikely(fc != 0)) {
        fc_received(qpn, fc);
        if (fc == UCT_RC_FC_PURE_GRANT) {
            return true;
        }
    }

    uct_recv_desc_of(desc) = this; /* over the consumed header, if it is there */
    status = uct_iface_invoke_am(m_iface, am_id, payload,
                                 byte_len - sizeof(uct_rc_am_hdr_t),
                                 UCT_CB_PARAM_FLAG_DESC);
    return status != UCS_INPROGRESS;
}

void uct_rc_rx::release(uct_recv_desc_t *self, void *desc)
{
    auto *rx = static_cast<uct_rc_rx*>(self);

    rx->m_bufs->put(rx->m_bufs->buf(rx->m_bufs->index(desc)));
    rx->refill();
}

unsigned uct_rc_rx::progress_direct(unsigned max)
{
    unsigned count = 0;

    do {
        const struct mlx5_cqe64 *cqe    = m_cq->cqe();
        const uint32_t          slot    = be16toh(cqe->wqe_counter) &
                                          m_srq_mask;
        uint8_t                 *buf    = m_slots[slot];
        const uint8_t           opcode  = cqe->op_own >> 4;

        m_cq->advance();
        ++count;
        m_slots[slot] = nullptr;
        /* a send arrived: RESP_SEND, or with immediate or invalidation */
        if (ucs_unlikely((uint8_t(opcode - MLX5_CQE_RESP_SEND) > 2) ||
                         (buf == nullptr))) {
            --m_posted;
            rx_error(cqe, buf, slot);
        } else if (!dispatch(buf, be32toh(cqe->byte_cnt),
                             be32toh(cqe->sop_drop_qpn) & 0xffffff)) {
            --m_posted; /* kept: a buffer of the pool takes its place */
        } else if (ucs_unlikely(!post_slot(buf))) {
            --m_posted; /* back in the slot it came from, when it may */
            m_bufs->put(buf);
        }
    } while ((count < max) && m_cq->ready());

    m_cq->update_ci();
    if (ucs_unlikely(m_posted < m_queue_len)) {
        refill_direct();
    } else {
        publish();
    }
    return count;
}

/* A receive CQE that carries no message */
void uct_rc_rx::rx_error(const struct mlx5_cqe64 *cqe, uint8_t *buf,
                         uint32_t slot)
{
    auto          *ecqe  = reinterpret_cast<const struct mlx5_err_cqe*>(cqe);
    const uint8_t opcode = cqe->op_own >> 4;

    /* a flush when the QP moved to error: nothing arrived */
    if ((opcode != MLX5_CQE_RESP_ERR) ||
        (ecqe->syndrome != MLX5_CQE_SYNDROME_WR_FLUSH_ERR)) {
        ucs_error("%s: receive on qp 0x%x completed with opcode 0x%x "
                  "(syndrome 0x%x vendor syndrome 0x%x) in SRQ slot %u",
                  m_iface->dev_name.c_str(),
                  be32toh(cqe->sop_drop_qpn) & 0xffffff, opcode,
                  ecqe->syndrome, ecqe->vendor_err_synd, slot);
    }
    if (buf != nullptr) {
        m_bufs->put(buf);
    }
}

unsigned uct_rc_rx::progress_verbs(unsigned max)
{
    struct ibv_wc wc[rx_batch];
    int           count;

    count = uct_ib_glue->poll_cq(m_iface->recv_cq->cq(),
                                 std::min(max, rx_batch), wc);
    if (count <= 0) {
        if (count < 0) {
            ucs_error("poll_cq(%s, receive) failed: %d",
                      m_iface->dev_name.c_str(), count);
        }
        return 0;
    }

    m_posted -= count;
    for (int i = 0; i < count; ++i) {
        auto *buf = reinterpret_cast<uint8_t*>(wc[i].wr_id);

        if (wc[i].status != IBV_WC_SUCCESS) {
            /* only a flush when the QP moved to error: nothing arrived */
            if (wc[i].status != IBV_WC_WR_FLUSH_ERR) {
                ucs_error("%s: receive on qp 0x%x completed with %s (vendor "
                          "syndrome 0x%x)", m_iface->dev_name.c_str(),
                          wc[i].qp_num, uct_ib_wc_status_name(wc[i].status),
                          wc[i].vendor_err);
            }
            m_bufs->put(buf);
            continue;
        }
        if (dispatch(buf, wc[i].byte_len, wc[i].qp_num)) {
            m_bufs->put(buf);
        }
    }

    refill();
    return count;
}
