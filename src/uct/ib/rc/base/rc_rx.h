/*
 * The shared receive queue of an RC interface and its buffers, as every RC
 * transport keeps them: each buffer holds one message of up to seg_size
 * bytes, header included, and goes back to the SRQ when its handler is done
 * with it, or when the user releases the descriptor it kept. Twice the
 * queue length is allocated, so that kept descriptors do not empty the SRQ
 * at once. A transport posts the buffers and polls their completions its
 * own way (rc/verbs/rc_verbs_rx.cc, mlx5/rc/rc_mlx5_rx.cc).
 *
 * Receive buffers, for a message of payload P with header H:
 *
 *     [ ... | uct_recv_desc_t* | rx_headroom | P ]    after dispatch
 *     [ ...                  | H | P ]              as received
 *
 * The header byte arrives just before the payload; once it is read, the
 * pointer that uct_iface_release_desc() needs is written rx_headroom bytes
 * before the payload, over whatever was there.
 *
 * Layer rc/base: may include ib/base/, uct/base/ and ucs/; never mlx5/ nor
 * rc/verbs/.
 */
#ifndef UCT_RC_RX_H_
#define UCT_RC_RX_H_

#include "rc_iface.h"

#include <memory>
#include <new>

class uct_rc_rx : public uct_recv_desc_t {
public:
    ~uct_rc_rx();

    uct_rc_rx(const uct_rc_rx&)            = delete;
    uct_rc_rx &operator=(const uct_rc_rx&) = delete;

    struct ibv_srq *srq() const { return m_srq; }

protected:
    uct_rc_rx() = default;

    /**
     * A new receive side of the transport's class @a Rx (a friend of this
     * one): the buffers and the SRQ of @a queue_len receives of @a iface,
     * the descriptors the user keeps going back through Rx::release; then
     * @a start(rx), the transport's part; then the first receives posted
     * (Rx::refill()), UCS_ERR_IO_ERROR if none could be.
     */
    template <typename Rx, typename Start>
    [[nodiscard]] static ucs_status_t
    create_rx(uct_rc_iface *iface, unsigned queue_len, size_t seg_size,
              Start start, Rx **rx_p)
    {
        std::unique_ptr<Rx> rx(new (std::nothrow) Rx());
        ucs_status_t        status;

        if (rx == nullptr) {
            return UCS_ERR_NO_MEMORY;
        }

        status = rx->init(iface, queue_len, seg_size, Rx::release);
        if (status == UCS_OK) {
            status = start(rx.get());
        }
        if (status != UCS_OK) {
            return status;
        }

        rx->refill();
        if (rx->m_posted == 0) {
            return UCS_ERR_IO_ERROR; /* refill logged why */
        }

        *rx_p = rx.release();
        return UCS_OK;
    }

    /** Hand the message in @a buf to its handler: true if the buffer is
     *  free again, false if the handler kept it. */
    inline bool dispatch(uint8_t *buf, uint32_t byte_len, uint32_t qpn);

    /** Where a receive into @a buf puts the message: its header first */
    uint8_t *recv_addr(uint8_t *buf) const
    {
        return buf + m_front - sizeof(uct_rc_am_hdr_t);
    }

    /** The bytes a receive may take: a header and seg_size */
    uint32_t recv_length() const
    {
        return sizeof(uct_rc_am_hdr_t) + m_seg_size;
    }

    /** The buffer a descriptor the user released is in, back in the pool */
    void put_desc(void *desc)
    {
        m_bufs->put(m_bufs->buf(m_bufs->index(desc)));
    }

    uct_rc_iface                     *m_iface    = nullptr;
    struct ibv_srq                   *m_srq      = nullptr;
    std::unique_ptr<uct_rc_buf_pool> m_bufs;
    size_t                           m_front     = 0; /* bytes before payload */
    size_t                           m_seg_size  = 0;
    unsigned                         m_queue_len = 0;
    unsigned                         m_posted    = 0;

private:
    [[nodiscard]] ucs_status_t init(uct_rc_iface *iface, unsigned queue_len,
                                    size_t seg_size,
                                    uct_desc_release_callback_t release);
    __attribute__((noinline)) void fc_received(uint32_t qpn, uint8_t fc);
};

bool uct_rc_rx::dispatch(uint8_t *buf, uint32_t byte_len, uint32_t qpn)
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

#endif
