/*
 * The part of the receive side every RC transport shares (rc_rx.h): the
 * buffers and the SRQ, and what flow control bits a message brought.
 *
 * Layer rc/base: may include ib/base/, uct/base/ and ucs/; never mlx5/ nor
 * rc/verbs/.
 */
#include "rc_rx.h"
#include "rc_ep.h"

#include <ucs/debug/log_def.h>
#include <ucs/sys/math.h>

#include <algorithm>
#include <cerrno>

ucs_status_t uct_rc_rx::init(uct_rc_iface *iface, unsigned queue_len,
                             size_t seg_size,
                             uct_desc_release_callback_t release)
{
    struct ibv_srq_init_attr attr = {};
    uct_rc_buf_pool          *bufs;
    ucs_status_t             status;

    cb          = release;
    m_iface     = iface;
    m_queue_len = queue_len;
    m_seg_size  = seg_size;
    /* the release pointer, then the headroom, right before the payload; the
     * header arrives in the last bytes of that space */
    m_front     = ucs_align_up(sizeof(uct_recv_desc_t*) +
                               std::max(iface->rx_headroom,
                                        sizeof(uct_rc_am_hdr_t)), 8);

    status = uct_rc_buf_pool::create(*iface->md->dev, iface->port_num,
                                     iface->md->pd, m_front + seg_size,
                                     2 * queue_len, &bufs);
    if (status != UCS_OK) {
        return status;
    }
    m_bufs.reset(bufs);

    attr.attr.max_wr  = queue_len;
    attr.attr.max_sge = 1;
    m_srq = uct_ib_glue->create_srq(iface->md->pd, &attr);
    if (m_srq == nullptr) {
        const int err = errno;

        ucs_error("create_srq(%s, %u receives) failed: %m",
                  iface->dev_name.c_str(), queue_len);
        return (err == ENOMEM) ? UCS_ERR_NO_MEMORY : UCS_ERR_IO_ERROR;
    }
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

/* Flow control bits arrived with a message (or alone: a pure grant) */
void uct_rc_rx::fc_received(uint32_t qpn, uint8_t fc)
{
    /* the endpoint of this QP: it sends the grant, or takes one */
    uct_rc_ep_fc_received(m_iface, qpn, fc);
}
