/*
 * rc_verbs' receive side (rc_verbs.h): receives posted to the SRQ and
 * their completions polled through the glue, each message handed to its
 * active message handler with its descriptor (rc/base/rc_rx.h).
 *
 * Layer rc/verbs: may include rc/base/, ib/base/, mlx5/dv/ (its CQs),
 * uct/base/ and ucs/; never mlx5/rc/.
 */
#include "rc_verbs.h"

#include <ucs/debug/log_def.h>

#include <algorithm>
#include <cerrno>
#include <new>

namespace {

constexpr unsigned rx_batch = 16; /* completions per poll */

} // namespace

ucs_status_t uct_rc_verbs_rx::create(uct_rc_verbs_iface *iface,
                                     unsigned queue_len, size_t seg_size,
                                     uct_rc_verbs_rx **rx_p)
{
    return create_rx(iface, queue_len, seg_size,
                     [iface](uct_rc_verbs_rx *rx) {
                         rx->m_cq = iface->recv_cq->cq();
                         return UCS_OK;
                     }, rx_p);
}

/* Post free buffers until the SRQ holds queue_len */
void uct_rc_verbs_rx::refill()
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
            sge[count].addr   = reinterpret_cast<uintptr_t>(recv_addr(buf));
            sge[count].length = recv_length();
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

void uct_rc_verbs_rx::release(uct_recv_desc_t *self, void *desc)
{
    auto *rx = static_cast<uct_rc_verbs_rx*>(self);

    rx->put_desc(desc);
    rx->refill();
}

unsigned uct_rc_verbs_rx::progress(unsigned max)
{
    struct ibv_wc wc[rx_batch];
    int           count;

    count = uct_ib_glue->poll_cq(m_cq, std::min(max, rx_batch), wc);
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
