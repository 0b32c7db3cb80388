/*
 * rc_verbs: the RC transport over verbs QPs, for devices without DevX. Its
 * interface and endpoints are the neutral RC ones (rc/base/) with a verbs
 * QP per endpoint, work requests posted and completions polled through the
 * glue, and the SRQ's receives posted through it too.
 *
 * rc/verbs/ may include rc/base/, ib/base/, uct/base/, ucs/ and, for the
 * CQs it creates as every RC transport does here, mlx5/dv/; never mlx5/rc/.
 */
#ifndef UCT_RC_VERBS_H_
#define UCT_RC_VERBS_H_

#include <uct/ib/base/ib_verbs_qp.h>
#include <uct/ib/mlx5/dv/dv_obj.h>
#include <uct/ib/rc/base/rc_ep.h>
#include <uct/ib/rc/base/rc_rx.h>

#include <memory>

struct uct_rc_verbs_iface;

/* The SRQ's receives posted, and their completions polled, through verbs */
class uct_rc_verbs_rx : public uct_rc_rx {
public:
    [[nodiscard]] static ucs_status_t
    create(uct_rc_verbs_iface *iface, unsigned queue_len, size_t seg_size,
           uct_rc_verbs_rx **rx_p);

    /** Poll up to @a max receive completions and dispatch their messages;
     *  the number polled. */
    unsigned progress(unsigned max);

private:
    friend class uct_rc_rx;

    uct_rc_verbs_rx() = default;

    void refill();
    static void release(uct_recv_desc_t *self, void *desc);

    struct ibv_cq *m_cq = nullptr; /* the receive CQ */
};

struct uct_rc_verbs_iface : uct_rc_iface {
    std::unique_ptr<uct_ib_mlx5_cq>  send_cq;
    std::unique_ptr<uct_ib_mlx5_cq>  recv_cq;
    std::unique_ptr<uct_rc_verbs_rx> rx;      /* the SRQ */
};

struct uct_rc_verbs_ep : uct_rc_ep {
    std::unique_ptr<uct_ib_verbs_qp> verbs_qp;
};

/* Endpoint slots (rc_verbs_ep.cc) */
ucs_status_t uct_rc_verbs_ep_create(const uct_ep_params_t *params,
                                    uct_ep_h *ep_p);
void uct_rc_verbs_ep_destroy(uct_ep_h tl_ep);
ucs_status_t
uct_rc_verbs_ep_connect_to_ep_v2(uct_ep_h tl_ep,
                                 const uct_device_addr_t *dev_addr,
                                 const uct_ep_addr_t *ep_addr,
                                 const uct_ep_connect_to_ep_params_t *params);

/* The send path (rc_verbs_txq.cc) */
unsigned     uct_rc_verbs_txq_wr_cost(const uct_rc_ep *ep,
                                      const uct_rc_wr_t *wr);
ucs_status_t uct_rc_verbs_txq_post(uct_rc_ep *ep, const uct_rc_wr_t *wr);
unsigned     uct_rc_verbs_txq_poll(uct_rc_verbs_iface *iface,
                                   uct_rc_completion_t *comps, unsigned max);

#endif
