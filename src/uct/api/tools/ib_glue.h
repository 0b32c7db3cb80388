/*
 * The rdma-core glue table: every call this project makes into libibverbs and
 * libmlx5 goes through one of these slots. The default table calls rdma-core
 * and does nothing else; the emulated device provides another one. This
 * header is the seam between them: a declared interface of the library
 * (not installed), which the emulator serves and the benchmarks count
 * through (docs/architecture.md, section 3).
 *
 * Each slot has the exact signature and error convention of the rdma-core
 * call it is named after (see shared rdma-core facts):
 *   PTR   pointer, or NULL with errno set
 *   ERRNO 0, or a positive errno
 *   M1    0, or -1 with errno set
 *   COUNT a count >= 0, or a negative value on failure (ibv_poll_cq)
 *   VOID, BOOL, NAME  cannot fail
 * No slot is ever NULL: an absent feature is a stub returning EOPNOTSUPP in
 * the slot's convention.
 *
 * Selecting the table (never automatic):
 *  - tests call uct_ib_glue_install() directly;
 *  - users set UCX_IB_GLUE before the library opens any device:
 *      UCX_IB_GLUE=rdma-core  the real rdma-core (also the default when unset)
 *      UCX_IB_GLUE=emulated   the emulated mlx5 device, loaded from
 *                             libucx_mlx5_emu.so (found through the usual
 *                             dynamic loader search path)
 *    any other value is an error.
 */
#ifndef UCT_IB_GLUE_H_
#define UCT_IB_GLUE_H_

#include <ucs/type/status.h>
#include <infiniband/verbs.h>
#include <infiniband/mlx5dv.h>
#include <stdbool.h>

BEGIN_C_DECLS

#define UCT_IB_GLUE_VERSION       5

/* Environment variable selecting the table, and its accepted values */
#define UCT_IB_GLUE_ENV           "UCX_IB_GLUE"
#define UCT_IB_GLUE_ENV_RDMA_CORE "rdma-core"
#define UCT_IB_GLUE_ENV_EMULATED  "emulated"

/* The emulated device library and the table it exports */
#define UCT_IB_GLUE_EMU_LIBRARY   "libucx_mlx5_emu.so"
#define UCT_IB_GLUE_EMU_SYMBOL    "uct_ib_emu_glue_ops"


/* Error convention of a slot (see the top of this file) */
typedef enum {
    UCT_IB_GLUE_CONV_PTR,
    UCT_IB_GLUE_CONV_ERRNO,
    UCT_IB_GLUE_CONV_M1,
    UCT_IB_GLUE_CONV_COUNT,
    UCT_IB_GLUE_CONV_VOID,
    UCT_IB_GLUE_CONV_BOOL,
    UCT_IB_GLUE_CONV_NAME
} uct_ib_glue_conv_t;


/*
 * The one list of slots: _(name, convention, return type, (parameters)).
 * The table type, the slot enumeration and every "for each slot" loop (the
 * install check, the emulator's fault injection) are generated from it.
 */
#define UCT_IB_GLUE_FOREACH_OP(_) \
    /* devices */ \
    _(get_device_list,     PTR,   struct ibv_device **, \
      (int *num_devices)) \
    _(free_device_list,    VOID,  void, \
      (struct ibv_device **list)) \
    _(get_device_name,     NAME,  const char *, \
      (struct ibv_device *device)) \
    _(open_device,         PTR,   struct ibv_context *, \
      (struct ibv_device *device)) \
    _(close_device,        M1,    int, \
      (struct ibv_context *context)) \
    _(query_device,        ERRNO, int, \
      (struct ibv_context *context, struct ibv_device_attr *attr)) \
    _(query_port,          ERRNO, int, \
      (struct ibv_context *context, uint8_t port_num, \
       struct ibv_port_attr *attr)) \
    _(query_gid_ex,        ERRNO, int, \
      (struct ibv_context *context, uint32_t port_num, uint32_t gid_index, \
       struct ibv_gid_entry *entry, uint32_t flags)) \
    /* protection domain, memory, completion queues, address handles */ \
    _(alloc_pd,            PTR,   struct ibv_pd *, \
      (struct ibv_context *context)) \
    _(dealloc_pd,          ERRNO, int, \
      (struct ibv_pd *pd)) \
    _(reg_mr,              PTR,   struct ibv_mr *, \
      (struct ibv_pd *pd, void *addr, size_t length, int access)) \
    _(dereg_mr,            ERRNO, int, \
      (struct ibv_mr *mr)) \
    _(create_cq,           PTR,   struct ibv_cq *, \
      (struct ibv_context *context, int cqe, void *cq_context, \
       struct ibv_comp_channel *channel, int comp_vector)) \
    _(destroy_cq,          ERRNO, int, \
      (struct ibv_cq *cq)) \
    _(poll_cq,             COUNT, int, \
      (struct ibv_cq *cq, int num_entries, struct ibv_wc *wc)) \
    _(req_notify_cq,       ERRNO, int, \
      (struct ibv_cq *cq, int solicited_only)) \
    /* completion channels */ \
    _(create_comp_channel, PTR,   struct ibv_comp_channel *, \
      (struct ibv_context *context)) \
    _(destroy_comp_channel, ERRNO, int, \
      (struct ibv_comp_channel *channel)) \
    _(get_cq_event,        M1,    int, \
      (struct ibv_comp_channel *channel, struct ibv_cq **cq, \
       void **cq_context)) \
    _(ack_cq_events,       VOID,  void, \
      (struct ibv_cq *cq, unsigned int nevents)) \
    /* asynchronous events of a context (its async_fd) */ \
    _(get_async_event,     M1,    int, \
      (struct ibv_context *context, struct ibv_async_event *event)) \
    _(ack_async_event,     VOID,  void, \
      (struct ibv_async_event *event)) \
    _(create_ah,           PTR,   struct ibv_ah *, \
      (struct ibv_pd *pd, struct ibv_ah_attr *attr)) \
    _(destroy_ah,          ERRNO, int, \
      (struct ibv_ah *ah)) \
    /* verbs queue pairs and shared receive queues */ \
    _(create_qp,           PTR,   struct ibv_qp *, \
      (struct ibv_pd *pd, struct ibv_qp_init_attr *attr)) \
    _(modify_qp,           ERRNO, int, \
      (struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask)) \
    _(query_qp,            ERRNO, int, \
      (struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask, \
       struct ibv_qp_init_attr *init_attr)) \
    _(destroy_qp,          ERRNO, int, \
      (struct ibv_qp *qp)) \
    _(post_send,           ERRNO, int, \
      (struct ibv_qp *qp, struct ibv_send_wr *wr, \
       struct ibv_send_wr **bad_wr)) \
    _(post_recv,           ERRNO, int, \
      (struct ibv_qp *qp, struct ibv_recv_wr *wr, \
       struct ibv_recv_wr **bad_wr)) \
    _(create_srq,          PTR,   struct ibv_srq *, \
      (struct ibv_pd *pd, struct ibv_srq_init_attr *attr)) \
    _(destroy_srq,         ERRNO, int, \
      (struct ibv_srq *srq)) \
    _(post_srq_recv,       ERRNO, int, \
      (struct ibv_srq *srq, struct ibv_recv_wr *wr, \
       struct ibv_recv_wr **bad_wr)) \
    /* mlx5 direct verbs */ \
    _(mlx5dv_is_supported, BOOL,  bool, \
      (struct ibv_device *device)) \
    _(mlx5dv_open_device,  PTR,   struct ibv_context *, \
      (struct ibv_device *device, struct mlx5dv_context_attr *attr)) \
    _(mlx5dv_query_device, ERRNO, int, \
      (struct ibv_context *context, struct mlx5dv_context *attrs)) \
    _(mlx5dv_init_obj,     ERRNO, int, \
      (struct mlx5dv_obj *obj, uint64_t obj_type)) \
    _(mlx5dv_create_qp,    PTR,   struct ibv_qp *, \
      (struct ibv_context *context, struct ibv_qp_init_attr_ex *qp_attr, \
       struct mlx5dv_qp_init_attr *mlx5_qp_attr)) \
    /* extended QP work requests and indirect mkeys (the UMR QP); the \
     * wr_* slots wrap verbs.h/mlx5dv.h inlines that call through the \
     * QP's function pointers; qp_to_qp_ex gives NULL for a QP created \
     * without send ops (rdma-core sets no errno then) */ \
    _(qp_to_qp_ex,         PTR,   struct ibv_qp_ex *, \
      (struct ibv_qp *qp)) \
    _(mlx5dv_qp_ex_from_ibv_qp_ex, PTR, struct mlx5dv_qp_ex *, \
      (struct ibv_qp_ex *qp)) \
    _(mlx5dv_create_mkey,  PTR,   struct mlx5dv_mkey *, \
      (struct mlx5dv_mkey_init_attr *mkey_init_attr)) \
    _(mlx5dv_destroy_mkey, ERRNO, int, \
      (struct mlx5dv_mkey *mkey)) \
    _(wr_start,            VOID,  void, \
      (struct ibv_qp_ex *qp)) \
    _(wr_mr_list,          VOID,  void, \
      (struct mlx5dv_qp_ex *mqp, struct mlx5dv_mkey *mkey, \
       uint32_t access_flags, uint16_t num_sges, struct ibv_sge *sge)) \
    _(wr_local_inv,        VOID,  void, \
      (struct ibv_qp_ex *qp, uint32_t invalidate_rkey)) \
    _(wr_complete,         ERRNO, int, \
      (struct ibv_qp_ex *qp)) \
    /* DevX */ \
    _(devx_general_cmd,    ERRNO, int, \
      (struct ibv_context *context, const void *in, size_t inlen, \
       void *out, size_t outlen)) \
    _(devx_obj_create,     PTR,   struct mlx5dv_devx_obj *, \
      (struct ibv_context *context, const void *in, size_t inlen, \
       void *out, size_t outlen)) \
    _(devx_obj_query,      ERRNO, int, \
      (struct mlx5dv_devx_obj *obj, const void *in, size_t inlen, \
       void *out, size_t outlen)) \
    _(devx_obj_modify,     ERRNO, int, \
      (struct mlx5dv_devx_obj *obj, const void *in, size_t inlen, \
       void *out, size_t outlen)) \
    _(devx_obj_destroy,    ERRNO, int, \
      (struct mlx5dv_devx_obj *obj)) \
    _(devx_umem_reg,       PTR,   struct mlx5dv_devx_umem *, \
      (struct ibv_context *context, void *addr, size_t size, \
       uint32_t access)) \
    _(devx_umem_dereg,     ERRNO, int, \
      (struct mlx5dv_devx_umem *umem)) \
    _(devx_alloc_uar,      PTR,   struct mlx5dv_devx_uar *, \
      (struct ibv_context *context, uint32_t flags)) \
    _(devx_free_uar,       VOID,  void, \
      (struct mlx5dv_devx_uar *uar)) \
    _(devx_query_eqn,      ERRNO, int, \
      (struct ibv_context *context, uint32_t vector, uint32_t *eqn)) \
    /* neighbour events: not rdma-core, but where a RoCE AH's MAC comes \
     * from. rdma-core: an rtnetlink socket of the neighbour group \
     * (RTM_NEWNEIGH/RTM_DELNEIGH), non-blocking; the emulated device: the \
     * same messages from its fabric's neighbour tables. open gives a \
     * descriptor (>= 0); request sends one netlink request (RTM_GETNEIGH), \
     * answered before it returns; recv gives one datagram's length, or -1 \
     * with EAGAIN (nothing queued) or ENOBUFS (events were lost) */ \
    _(neigh_monitor_open,  COUNT, int, \
      (struct ibv_context *context)) \
    _(neigh_monitor_request, M1,  int, \
      (int fd, const void *msg, size_t len)) \
    _(neigh_monitor_recv,  COUNT, int, \
      (int fd, void *buf, size_t len)) \
    _(neigh_monitor_close, M1,    int, \
      (int fd))


#define UCT_IB_GLUE_DECLARE_SLOT(_name, _conv, _ret, _args) \
    _ret (*_name) _args;

#define UCT_IB_GLUE_DECLARE_OP_ID(_name, _conv, _ret, _args) \
    UCT_IB_GLUE_OP_##_name,

/* Index of a slot, in table order */
typedef enum {
    UCT_IB_GLUE_FOREACH_OP(UCT_IB_GLUE_DECLARE_OP_ID)
    UCT_IB_GLUE_OP_LAST
} uct_ib_glue_op_t;

typedef struct uct_ib_glue_ops {
    unsigned    version;   /* UCT_IB_GLUE_VERSION */
    const char  *name;     /* "rdma-core" or "emulated" */
    int         emulated;  /* non-zero: devices are not real hardware */

    UCT_IB_GLUE_FOREACH_OP(UCT_IB_GLUE_DECLARE_SLOT)
} uct_ib_glue_ops_t;


/* The table in use; never NULL. */
extern const uct_ib_glue_ops_t *uct_ib_glue;

/* The table that calls rdma-core. */
extern const uct_ib_glue_ops_t uct_ib_glue_rdma_core_ops;

/**
 * Replace the table in use. Refused (UCS_ERR_BUSY) while any device context
 * opened with uct_ib_glue_open_device() is open, unless ops is already the
 * table in use, and (UCS_ERR_INVALID_PARAM) if the version differs or a slot
 * is empty; the error is logged naming the table and the empty slot.
 * Internal: tests call it directly, users select a table with UCX_IB_GLUE.
 */
ucs_status_t uct_ib_glue_install(const uct_ib_glue_ops_t *ops);

/**
 * Apply UCX_IB_GLUE (see the top of this file). Unset or empty leaves the
 * table in use as it is; "rdma-core" installs the rdma-core table;
 * "emulated" loads the emulated device library and installs its table.
 * Any other value, a library that cannot be loaded or an install that is
 * refused is logged and returned as an error.
 */
ucs_status_t uct_ib_glue_init_from_env(void);

/**
 * Open a device context through the table in use, and count it as open (the
 * table cannot be replaced while any context is open).
 *
 * @param [in]  device     Device from uct_ib_glue->get_device_list().
 * @param [in]  want_devx  Non-zero: ask for a DevX context first (only if the
 *                         device is an mlx5 device) and fall back to a plain
 *                         context if DevX is refused.
 * @param [out] context_p  The opened context.
 * @param [out] devx_p     Optional (may be NULL): set to 1 if the context was
 *                         opened with DevX, 0 otherwise.
 *
 * @return UCS_OK, or UCS_ERR_IO_ERROR if the device could not be opened
 *         (logged with errno).
 */
ucs_status_t uct_ib_glue_open_device(struct ibv_device *device, int want_devx,
                                     struct ibv_context **context_p,
                                     int *devx_p);

/**
 * Close a context opened with uct_ib_glue_open_device(). If the close fails
 * the context stays open and counted, a warning is logged with errno and
 * UCS_ERR_IO_ERROR is returned.
 */
ucs_status_t uct_ib_glue_close_device(struct ibv_context *context);

/* Number of contexts currently open through uct_ib_glue_open_device(). */
unsigned uct_ib_glue_open_device_count(void);

END_C_DECLS

#endif
