/*
 * What the front-end's files share (frontend/): every way into the model
 * from outside, the glue table (glue_ops.cc, ops.h), the verbs entry points
 * as rdma-core's mlx5 provider and the kernel answer them, the DevX entry
 * points, the drop-in (dropin.cc, preload/), completion and asynchronous
 * events, and the control API's instruments. frontend/ may include every
 * other role; no other role includes it (buildlib/check-emu-layers.sh).
 */
#ifndef UCT_IB_EMU_FRONTEND_FRONTEND_H_
#define UCT_IB_EMU_FRONTEND_FRONTEND_H_

#include <emu/model/model.h>


namespace uct_ib_emu {

/* The operations of a new context that rdma-core's inline functions call
 * (provider.cc) */
void provider_context_init(context *ctx);

/* A CQ with cqe_size-byte entries (64 or 128), checked by the caller,
 * with or without overrun checking (verbs.cc) */
struct ibv_cq *cq_create(struct ibv_context *ibctx, int cqe, void *cq_context,
                         struct ibv_comp_channel *channel, int comp_vector,
                         uint32_t cqe_size, bool ignore_overrun = false);

/* DevX event channels, with rdma-core's conventions (devx_events.cc) */
struct mlx5dv_devx_event_channel *
devx_create_event_channel(struct ibv_context *ibctx, uint32_t flags);
void devx_destroy_event_channel(struct mlx5dv_devx_event_channel *handle);
int devx_subscribe_devx_event(struct mlx5dv_devx_event_channel *handle,
                              struct mlx5dv_devx_obj *obj_handle,
                              uint16_t events_sz, const uint16_t *events_num,
                              uint64_t cookie);
ssize_t devx_get_event(struct mlx5dv_devx_event_channel *handle,
                       struct mlx5dv_devx_async_event_hdr *event_data,
                       size_t event_resp_len);

/* mlx5dv_devx_qp_modify/query on a verbs QP (the drop-in front-end;
 * devx.cc): 0, EREMOTEIO with the firmware's status in out, EINVAL (not a
 * verbs QP of the model, a command of another kind or QP), EOPNOTSUPP
 * without DevX */
int emu_devx_qp_modify(struct ibv_qp *qp, const void *in, size_t inlen,
                       void *out, size_t outlen);
int emu_devx_qp_query(struct ibv_qp *qp, const void *in, size_t inlen,
                      void *out, size_t outlen);

/* ibv_resize_cq (the drop-in front-end; verbs.cc): a new ring of at least
 * cqe + 1 entries, the entries not yet polled moved into it at their
 * indices (a program using mlx5dv_init_obj's view reads it again); EINVAL
 * for a size they do not fit in or beyond the device's */
int emu_resize_cq(struct ibv_cq *cq, int cqe);

/* A new MR of p over [addr, addr + length) (s.lock held; checked by the
 * caller; verbs.cc) */
mr *mr_create_locked(emu_state &s, pd *p, void *addr, size_t length,
                     int access);

/* A new SRQ of p (s.lock held; verbs.cc): NULL with errno */
srq *srq_create_locked(emu_state &s, pd *p, struct ibv_srq_init_attr *attr);

/* XRC domains and SRQs: ibv_open_xrcd, ibv_close_xrcd,
 * ibv_create_srq_ex, ibv_get_srq_num (xrc.cc) */
struct ibv_xrcd *xrcd_open(struct ibv_context *ctx,
                           struct ibv_xrcd_init_attr *attr);
int xrcd_close(struct ibv_xrcd *xrcd);
struct ibv_srq *srq_create_ex(struct ibv_context *ctx,
                              struct ibv_srq_init_attr_ex *attr);
int srq_get_num(struct ibv_srq *srq, uint32_t *srq_num);

/* Memory windows: ibv_alloc_mw, ibv_bind_mw (type 1), ibv_dealloc_mw
 * (mw.cc) */
struct ibv_mw *mw_alloc(struct ibv_pd *pd, enum ibv_mw_type type);
int mw_bind(struct ibv_qp *qp, struct ibv_mw *mw, struct ibv_mw_bind *bind);
int mw_dealloc(struct ibv_mw *mw);

/* Device memory: ibv_alloc_dm, ibv_free_dm, ibv_reg_dm_mr (dm.cc) */
struct ibv_dm *dm_alloc(struct ibv_context *ctx, struct ibv_alloc_dm_attr *attr);
int dm_free(struct ibv_dm *dm);
struct ibv_mr *dm_reg_mr(struct ibv_pd *pd, struct ibv_dm *dm,
                         uint64_t dm_offset, size_t length, unsigned int access);

/* ibv_rereg_mr, with libibverbs' return convention (verbs.cc) */
int emu_rereg_mr(struct ibv_mr *mr, int flags, struct ibv_pd *pd, void *addr,
                 size_t length, int access);

/* ibv_modify_srq and ibv_query_srq of a verbs SRQ (the drop-in front-end;
 * verbs.cc), rdma-core's mlx5 conventions: the limit can be armed (at most
 * max_wr) or disarmed (0); max_wr cannot change (EINVAL, as mlx5 refuses a
 * resize); EINVAL for an SRQ that is not the model's or an unknown mask */
int emu_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr,
                   int attr_mask);
int emu_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr);

/* The verbs data path (verbs_data.cc): CQEs of c's ring as work
 * completions (up to num), the provider's indices of a QP moved to RESET,
 * the initial free list of an SRQ */
int poll_ring_cqes(emu_state &s, cq *c, int num, struct ibv_wc *wc,
                   uint64_t *timestamps = nullptr);

/* The polling interface of an extended CQ: start_poll, next_poll,
 * end_poll and the ibv_wc_read_* functions (cq_ex.cc) */
void cq_ex_init_ops(struct ibv_cq_ex *cq_ex);
void verbs_queues_reset(qp *q);
void srq_init_links(srq *q);

/* The ibv_wr_* send path of verbs QPs (verbs_wr.cc): a QP created with
 * send ops (the IBV_ and MLX5DV_QP_EX_WITH_* flags), the QP moved to state
 * next (flush or forget what is queued), and the completions of its work
 * requests: up to num of them from c into wc */
void qp_setup_send_ops(emu_state &s, qp *q, uint64_t ibv_ops, uint64_t dv_ops);

/* The data operations of that API (verbs_wr_data.cc): their builders on a
 * QP created with them, and a batch of them posted as ibv_post_send would
 * (s.lock not held) */
void qp_setup_data_ops(qp *q, uint64_t ibv_ops);
int post_data_batch(struct ibv_qp *ibqp, std::vector<data_wr> &batch);
void qp_send_state_changed(emu_state &s, qp *q, enum ibv_qp_state next);
int poll_verbs_cqes(emu_state &s, cq *c, int num, struct ibv_wc *wc);

} // namespace uct_ib_emu

#endif
