/*
 * The rdma-core glue table, its installation, and the counted device
 * open/close wrappers. This file and the emulator are the only places that
 * name rdma-core functions (buildlib/check-rdma-core-calls.sh enforces it).
 */
#include <uct/api/tools/ib_glue.h>

#include <ucs/config/parser.h>
#include <ucs/debug/assert.h>
#include <ucs/debug/log_def.h>
#include <ucs/sys/module.h>

#include <dlfcn.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>


/*
 * One real function per slot. Most rdma-core entry points are exported
 * functions, but several are inline or macros in verbs.h (ibv_query_port,
 * ibv_query_gid_ex, ibv_reg_mr, ibv_get_device_list, ibv_poll_cq,
 * ibv_post_send, ibv_post_recv, ibv_post_srq_recv, and the work-request
 * builders ibv_wr_start, ibv_wr_local_inv, ibv_wr_complete and
 * mlx5dv_wr_mr_list); wrapping every slot the same way gives each of them an
 * address and keeps the table uniform.
 */

static struct ibv_device **uct_ib_rdma_core_get_device_list(int *num_devices)
{
    return ibv_get_device_list(num_devices);
}

static void uct_ib_rdma_core_free_device_list(struct ibv_device **list)
{
    ibv_free_device_list(list);
}

static const char *uct_ib_rdma_core_get_device_name(struct ibv_device *device)
{
    return ibv_get_device_name(device);
}

static struct ibv_context *
uct_ib_rdma_core_open_device(struct ibv_device *device)
{
    return ibv_open_device(device);
}

static int uct_ib_rdma_core_close_device(struct ibv_context *context)
{
    return ibv_close_device(context);
}

static int uct_ib_rdma_core_query_device(struct ibv_context *context,
                                         struct ibv_device_attr *attr)
{
    return ibv_query_device(context, attr);
}

static int uct_ib_rdma_core_query_port(struct ibv_context *context,
                                       uint8_t port_num,
                                       struct ibv_port_attr *attr)
{
    return ibv_query_port(context, port_num, attr);
}

static int uct_ib_rdma_core_query_gid_ex(struct ibv_context *context,
                                         uint32_t port_num, uint32_t gid_index,
                                         struct ibv_gid_entry *entry,
                                         uint32_t flags)
{
    return ibv_query_gid_ex(context, port_num, gid_index, entry, flags);
}

static struct ibv_pd *uct_ib_rdma_core_alloc_pd(struct ibv_context *context)
{
    return ibv_alloc_pd(context);
}

static int uct_ib_rdma_core_dealloc_pd(struct ibv_pd *pd)
{
    return ibv_dealloc_pd(pd);
}

static struct ibv_mr *uct_ib_rdma_core_reg_mr(struct ibv_pd *pd, void *addr,
                                              size_t length, int access)
{
    return ibv_reg_mr(pd, addr, length, access);
}

static int uct_ib_rdma_core_dereg_mr(struct ibv_mr *mr)
{
    return ibv_dereg_mr(mr);
}

static struct ibv_cq *
uct_ib_rdma_core_create_cq(struct ibv_context *context, int cqe,
                           void *cq_context, struct ibv_comp_channel *channel,
                           int comp_vector)
{
    return ibv_create_cq(context, cqe, cq_context, channel, comp_vector);
}

static int uct_ib_rdma_core_destroy_cq(struct ibv_cq *cq)
{
    return ibv_destroy_cq(cq);
}

static int uct_ib_rdma_core_poll_cq(struct ibv_cq *cq, int num_entries,
                                    struct ibv_wc *wc)
{
    return ibv_poll_cq(cq, num_entries, wc);
}

static int uct_ib_rdma_core_req_notify_cq(struct ibv_cq *cq, int solicited_only)
{
    return ibv_req_notify_cq(cq, solicited_only);
}

static struct ibv_comp_channel *
uct_ib_rdma_core_create_comp_channel(struct ibv_context *context)
{
    return ibv_create_comp_channel(context);
}

static int uct_ib_rdma_core_destroy_comp_channel(struct ibv_comp_channel *channel)
{
    return ibv_destroy_comp_channel(channel);
}

static int uct_ib_rdma_core_get_cq_event(struct ibv_comp_channel *channel,
                                         struct ibv_cq **cq, void **cq_context)
{
    return ibv_get_cq_event(channel, cq, cq_context);
}

static void uct_ib_rdma_core_ack_cq_events(struct ibv_cq *cq,
                                           unsigned int nevents)
{
    ibv_ack_cq_events(cq, nevents);
}

static int uct_ib_rdma_core_get_async_event(struct ibv_context *context,
                                            struct ibv_async_event *event)
{
    return ibv_get_async_event(context, event);
}

static void uct_ib_rdma_core_ack_async_event(struct ibv_async_event *event)
{
    ibv_ack_async_event(event);
}

static struct ibv_ah *uct_ib_rdma_core_create_ah(struct ibv_pd *pd,
                                                 struct ibv_ah_attr *attr)
{
    return ibv_create_ah(pd, attr);
}

static int uct_ib_rdma_core_destroy_ah(struct ibv_ah *ah)
{
    return ibv_destroy_ah(ah);
}

static struct ibv_qp *uct_ib_rdma_core_create_qp(struct ibv_pd *pd,
                                                 struct ibv_qp_init_attr *attr)
{
    return ibv_create_qp(pd, attr);
}

static int uct_ib_rdma_core_modify_qp(struct ibv_qp *qp,
                                      struct ibv_qp_attr *attr, int attr_mask)
{
    return ibv_modify_qp(qp, attr, attr_mask);
}

static int uct_ib_rdma_core_query_qp(struct ibv_qp *qp,
                                     struct ibv_qp_attr *attr, int attr_mask,
                                     struct ibv_qp_init_attr *init_attr)
{
    return ibv_query_qp(qp, attr, attr_mask, init_attr);
}

static int uct_ib_rdma_core_destroy_qp(struct ibv_qp *qp)
{
    return ibv_destroy_qp(qp);
}

static int uct_ib_rdma_core_post_send(struct ibv_qp *qp,
                                      struct ibv_send_wr *wr,
                                      struct ibv_send_wr **bad_wr)
{
    return ibv_post_send(qp, wr, bad_wr);
}

static int uct_ib_rdma_core_post_recv(struct ibv_qp *qp,
                                      struct ibv_recv_wr *wr,
                                      struct ibv_recv_wr **bad_wr)
{
    return ibv_post_recv(qp, wr, bad_wr);
}

static struct ibv_srq *
uct_ib_rdma_core_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *attr)
{
    return ibv_create_srq(pd, attr);
}

static int uct_ib_rdma_core_destroy_srq(struct ibv_srq *srq)
{
    return ibv_destroy_srq(srq);
}

static int uct_ib_rdma_core_post_srq_recv(struct ibv_srq *srq,
                                          struct ibv_recv_wr *wr,
                                          struct ibv_recv_wr **bad_wr)
{
    return ibv_post_srq_recv(srq, wr, bad_wr);
}

static bool uct_ib_rdma_core_mlx5dv_is_supported(struct ibv_device *device)
{
    return mlx5dv_is_supported(device);
}

static struct ibv_context *
uct_ib_rdma_core_mlx5dv_open_device(struct ibv_device *device,
                                    struct mlx5dv_context_attr *attr)
{
    return mlx5dv_open_device(device, attr);
}

static int uct_ib_rdma_core_mlx5dv_query_device(struct ibv_context *context,
                                                struct mlx5dv_context *attrs)
{
    return mlx5dv_query_device(context, attrs);
}

static int uct_ib_rdma_core_mlx5dv_init_obj(struct mlx5dv_obj *obj,
                                            uint64_t obj_type)
{
    return mlx5dv_init_obj(obj, obj_type);
}

static struct ibv_qp *
uct_ib_rdma_core_mlx5dv_create_qp(struct ibv_context *context,
                                  struct ibv_qp_init_attr_ex *qp_attr,
                                  struct mlx5dv_qp_init_attr *mlx5_qp_attr)
{
    return mlx5dv_create_qp(context, qp_attr, mlx5_qp_attr);
}

static struct ibv_qp_ex *uct_ib_rdma_core_qp_to_qp_ex(struct ibv_qp *qp)
{
    return ibv_qp_to_qp_ex(qp);
}

static struct mlx5dv_qp_ex *
uct_ib_rdma_core_mlx5dv_qp_ex_from_ibv_qp_ex(struct ibv_qp_ex *qp)
{
    return mlx5dv_qp_ex_from_ibv_qp_ex(qp);
}

static struct mlx5dv_mkey *
uct_ib_rdma_core_mlx5dv_create_mkey(struct mlx5dv_mkey_init_attr *mkey_init_attr)
{
    return mlx5dv_create_mkey(mkey_init_attr);
}

static int uct_ib_rdma_core_mlx5dv_destroy_mkey(struct mlx5dv_mkey *mkey)
{
    return mlx5dv_destroy_mkey(mkey);
}

static void uct_ib_rdma_core_wr_start(struct ibv_qp_ex *qp)
{
    ibv_wr_start(qp);
}

static void uct_ib_rdma_core_wr_mr_list(struct mlx5dv_qp_ex *mqp,
                                        struct mlx5dv_mkey *mkey,
                                        uint32_t access_flags,
                                        uint16_t num_sges, struct ibv_sge *sge)
{
    mlx5dv_wr_mr_list(mqp, mkey, access_flags, num_sges, sge);
}

static void uct_ib_rdma_core_wr_local_inv(struct ibv_qp_ex *qp,
                                          uint32_t invalidate_rkey)
{
    ibv_wr_local_inv(qp, invalidate_rkey);
}

static int uct_ib_rdma_core_wr_complete(struct ibv_qp_ex *qp)
{
    return ibv_wr_complete(qp);
}

static int uct_ib_rdma_core_devx_general_cmd(struct ibv_context *context,
                                             const void *in, size_t inlen,
                                             void *out, size_t outlen)
{
    return mlx5dv_devx_general_cmd(context, in, inlen, out, outlen);
}

static struct mlx5dv_devx_obj *
uct_ib_rdma_core_devx_obj_create(struct ibv_context *context, const void *in,
                                 size_t inlen, void *out, size_t outlen)
{
    return mlx5dv_devx_obj_create(context, in, inlen, out, outlen);
}

static int uct_ib_rdma_core_devx_obj_query(struct mlx5dv_devx_obj *obj,
                                           const void *in, size_t inlen,
                                           void *out, size_t outlen)
{
    return mlx5dv_devx_obj_query(obj, in, inlen, out, outlen);
}

static int uct_ib_rdma_core_devx_obj_modify(struct mlx5dv_devx_obj *obj,
                                            const void *in, size_t inlen,
                                            void *out, size_t outlen)
{
    return mlx5dv_devx_obj_modify(obj, in, inlen, out, outlen);
}

static int uct_ib_rdma_core_devx_obj_destroy(struct mlx5dv_devx_obj *obj)
{
    return mlx5dv_devx_obj_destroy(obj);
}

static struct mlx5dv_devx_umem *
uct_ib_rdma_core_devx_umem_reg(struct ibv_context *context, void *addr,
                               size_t size, uint32_t access)
{
    return mlx5dv_devx_umem_reg(context, addr, size, access);
}

static int uct_ib_rdma_core_devx_umem_dereg(struct mlx5dv_devx_umem *umem)
{
    return mlx5dv_devx_umem_dereg(umem);
}

static struct mlx5dv_devx_uar *
uct_ib_rdma_core_devx_alloc_uar(struct ibv_context *context, uint32_t flags)
{
    return mlx5dv_devx_alloc_uar(context, flags);
}

static void uct_ib_rdma_core_devx_free_uar(struct mlx5dv_devx_uar *uar)
{
    mlx5dv_devx_free_uar(uar);
}

static int uct_ib_rdma_core_devx_query_eqn(struct ibv_context *context,
                                           uint32_t vector, uint32_t *eqn)
{
    return mlx5dv_devx_query_eqn(context, vector, eqn);
}

/*
 * Neighbour events come from the kernel's rtnetlink neighbour group. The
 * socket is the caller's to own; the context only says which machine's
 * tables are meant (always this one's).
 */
static int uct_ib_rdma_core_neigh_monitor_open(struct ibv_context *context)
{
    struct sockaddr_nl addr = {};
    int                fd, err;

    (void)context;
    fd = socket(AF_NETLINK, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC,
                NETLINK_ROUTE);
    if (fd < 0) {
        return -1;
    }

    addr.nl_family = AF_NETLINK;
    addr.nl_groups = RTMGRP_NEIGH;
    if (bind(fd, reinterpret_cast<struct sockaddr*>(&addr), sizeof(addr)) != 0) {
        err = errno;
        close(fd);
        errno = err;
        return -1;
    }
    return fd;
}

static int uct_ib_rdma_core_neigh_monitor_request(int fd, const void *msg,
                                                  size_t len)
{
    struct sockaddr_nl kernel = {};
    ssize_t            sent;

    kernel.nl_family = AF_NETLINK;
    sent = sendto(fd, msg, len, 0, reinterpret_cast<struct sockaddr*>(&kernel),
                  sizeof(kernel));
    if (sent < 0) {
        return -1;
    }
    if (static_cast<size_t>(sent) != len) {
        errno = EMSGSIZE;
        return -1;
    }
    return 0;
}

static int uct_ib_rdma_core_neigh_monitor_recv(int fd, void *buf, size_t len)
{
    ssize_t got;

    do {
        got = recv(fd, buf, len, MSG_DONTWAIT);
    } while ((got < 0) && (errno == EINTR));
    return static_cast<int>(got);
}

static int uct_ib_rdma_core_neigh_monitor_close(int fd)
{
    return close(fd);
}


const uct_ib_glue_ops_t uct_ib_glue_rdma_core_ops = {
    .version             = UCT_IB_GLUE_VERSION,
    .name                = UCT_IB_GLUE_ENV_RDMA_CORE,
    .emulated            = 0,
    .get_device_list     = uct_ib_rdma_core_get_device_list,
    .free_device_list    = uct_ib_rdma_core_free_device_list,
    .get_device_name     = uct_ib_rdma_core_get_device_name,
    .open_device         = uct_ib_rdma_core_open_device,
    .close_device        = uct_ib_rdma_core_close_device,
    .query_device        = uct_ib_rdma_core_query_device,
    .query_port          = uct_ib_rdma_core_query_port,
    .query_gid_ex        = uct_ib_rdma_core_query_gid_ex,
    .alloc_pd            = uct_ib_rdma_core_alloc_pd,
    .dealloc_pd          = uct_ib_rdma_core_dealloc_pd,
    .reg_mr              = uct_ib_rdma_core_reg_mr,
    .dereg_mr            = uct_ib_rdma_core_dereg_mr,
    .create_cq           = uct_ib_rdma_core_create_cq,
    .destroy_cq          = uct_ib_rdma_core_destroy_cq,
    .poll_cq             = uct_ib_rdma_core_poll_cq,
    .req_notify_cq       = uct_ib_rdma_core_req_notify_cq,
    .create_comp_channel = uct_ib_rdma_core_create_comp_channel,
    .destroy_comp_channel = uct_ib_rdma_core_destroy_comp_channel,
    .get_cq_event        = uct_ib_rdma_core_get_cq_event,
    .ack_cq_events       = uct_ib_rdma_core_ack_cq_events,
    .get_async_event     = uct_ib_rdma_core_get_async_event,
    .ack_async_event     = uct_ib_rdma_core_ack_async_event,
    .create_ah           = uct_ib_rdma_core_create_ah,
    .destroy_ah          = uct_ib_rdma_core_destroy_ah,
    .create_qp           = uct_ib_rdma_core_create_qp,
    .modify_qp           = uct_ib_rdma_core_modify_qp,
    .query_qp            = uct_ib_rdma_core_query_qp,
    .destroy_qp          = uct_ib_rdma_core_destroy_qp,
    .post_send           = uct_ib_rdma_core_post_send,
    .post_recv           = uct_ib_rdma_core_post_recv,
    .create_srq          = uct_ib_rdma_core_create_srq,
    .destroy_srq         = uct_ib_rdma_core_destroy_srq,
    .post_srq_recv       = uct_ib_rdma_core_post_srq_recv,
    .mlx5dv_is_supported = uct_ib_rdma_core_mlx5dv_is_supported,
    .mlx5dv_open_device  = uct_ib_rdma_core_mlx5dv_open_device,
    .mlx5dv_query_device = uct_ib_rdma_core_mlx5dv_query_device,
    .mlx5dv_init_obj     = uct_ib_rdma_core_mlx5dv_init_obj,
    .mlx5dv_create_qp    = uct_ib_rdma_core_mlx5dv_create_qp,
    .qp_to_qp_ex         = uct_ib_rdma_core_qp_to_qp_ex,
    .mlx5dv_qp_ex_from_ibv_qp_ex = uct_ib_rdma_core_mlx5dv_qp_ex_from_ibv_qp_ex,
    .mlx5dv_create_mkey  = uct_ib_rdma_core_mlx5dv_create_mkey,
    .mlx5dv_destroy_mkey = uct_ib_rdma_core_mlx5dv_destroy_mkey,
    .wr_start            = uct_ib_rdma_core_wr_start,
    .wr_mr_list          = uct_ib_rdma_core_wr_mr_list,
    .wr_local_inv        = uct_ib_rdma_core_wr_local_inv,
    .wr_complete         = uct_ib_rdma_core_wr_complete,
    .devx_general_cmd    = uct_ib_rdma_core_devx_general_cmd,
    .devx_obj_create     = uct_ib_rdma_core_devx_obj_create,
    .devx_obj_query      = uct_ib_rdma_core_devx_obj_query,
    .devx_obj_modify     = uct_ib_rdma_core_devx_obj_modify,
    .devx_obj_destroy    = uct_ib_rdma_core_devx_obj_destroy,
    .devx_umem_reg       = uct_ib_rdma_core_devx_umem_reg,
    .devx_umem_dereg     = uct_ib_rdma_core_devx_umem_dereg,
    .devx_alloc_uar      = uct_ib_rdma_core_devx_alloc_uar,
    .devx_free_uar       = uct_ib_rdma_core_devx_free_uar,
    .devx_query_eqn      = uct_ib_rdma_core_devx_query_eqn,
    .neigh_monitor_open  = uct_ib_rdma_core_neigh_monitor_open,
    .neigh_monitor_request = uct_ib_rdma_core_neigh_monitor_request,
    .neigh_monitor_recv  = uct_ib_rdma_core_neigh_monitor_recv,
    .neigh_monitor_close = uct_ib_rdma_core_neigh_monitor_close
};

const uct_ib_glue_ops_t *uct_ib_glue = &uct_ib_glue_rdma_core_ops;


namespace {

/*
 * Serialises table replacement against device opening: a context is always
 * opened and closed through the table that is installed while it is open.
 */
std::mutex            uct_ib_glue_lock;
std::atomic<unsigned> uct_ib_glue_open_count{0};

/* The emulated device library, once loaded it stays loaded: its table may be
 * in use until the process exits. */
void                  *uct_ib_glue_emu_handle = nullptr;


/* Name of the first empty slot of ops, or NULL if every slot is set */
const char *uct_ib_glue_find_empty_slot(const uct_ib_glue_ops_t *ops)
{
#define UCT_IB_GLUE_CHECK_SLOT(_name, _conv, _ret, _args) \
    if (ops->_name == nullptr) { \
        return #_name; \
    }

    UCT_IB_GLUE_FOREACH_OP(UCT_IB_GLUE_CHECK_SLOT)
#undef UCT_IB_GLUE_CHECK_SLOT

    return nullptr;
}

/* Copy the pending dlerror() message into buf, then consume it so that glibc
 * releases the string it keeps until the next dlerror() call. */
ucs_status_t uct_ib_glue_load_emulated(const uct_ib_glue_ops_t **ops_p)
{
    char error[512];
    void *handle, *sym;

    handle = dlopen(UCT_IB_GLUE_EMU_LIBRARY, RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
        ucs_dlerror_take(error, sizeof(error));
        ucs_error("%s=%s: failed to load %s: %s", UCT_IB_GLUE_ENV,
                  UCT_IB_GLUE_ENV_EMULATED, UCT_IB_GLUE_EMU_LIBRARY, error);
        return UCS_ERR_NO_DEVICE;
    }

    (void)dlerror();
    sym = dlsym(handle, UCT_IB_GLUE_EMU_SYMBOL);
    if (sym == nullptr) {
        ucs_dlerror_take(error, sizeof(error));
        ucs_error("%s=%s: %s has no %s: %s", UCT_IB_GLUE_ENV,
                  UCT_IB_GLUE_ENV_EMULATED, UCT_IB_GLUE_EMU_LIBRARY,
                  UCT_IB_GLUE_EMU_SYMBOL, error);
        dlclose(handle);
        return UCS_ERR_NO_DEVICE;
    }

    if (uct_ib_glue_emu_handle == nullptr) {
        uct_ib_glue_emu_handle = handle;
    } else {
        /* Loaded before: drop the extra reference dlopen() just took */
        dlclose(handle);
    }

    *ops_p = static_cast<const uct_ib_glue_ops_t*>(sym);
    return UCS_OK;
}

} // namespace


extern "C" ucs_status_t uct_ib_glue_install(const uct_ib_glue_ops_t *ops)
{
    const char *empty_slot;

    if (ops == nullptr) {
        ucs_error("cannot install a NULL glue table");
        return UCS_ERR_INVALID_PARAM;
    }

    if (ops->version != UCT_IB_GLUE_VERSION) {
        ucs_error("glue table '%s' has version %u, expected %u",
                  (ops->name != nullptr) ? ops->name : "(unnamed)",
                  ops->version, UCT_IB_GLUE_VERSION);
        return UCS_ERR_INVALID_PARAM;
    }

    if (ops->name == nullptr) {
        ucs_error("glue table has no name");
        return UCS_ERR_INVALID_PARAM;
    }

    empty_slot = uct_ib_glue_find_empty_slot(ops);
    if (empty_slot != nullptr) {
        ucs_error("glue table '%s' has no '%s' operation", ops->name,
                  empty_slot);
        return UCS_ERR_INVALID_PARAM;
    }

    std::lock_guard<std::mutex> guard(uct_ib_glue_lock);

    if (ops == uct_ib_glue) {
        return UCS_OK; /* already in use, open devices or not */
    }

    if (uct_ib_glue_open_count.load() != 0) {
        ucs_error("cannot install glue table '%s': %u device context(s) "
                  "opened through '%s' are still open", ops->name,
                  uct_ib_glue_open_count.load(), uct_ib_glue->name);
        return UCS_ERR_BUSY;
    }

    ucs_debug("ib glue: using '%s'%s", ops->name,
              ops->emulated ? " (emulated devices)" : "");
    uct_ib_glue = ops;
    return UCS_OK;
}

namespace {

struct uct_ib_glue_config {
    char *name;
};

ucs_config_field_t uct_ib_glue_config_table[] = {
    {"IB_GLUE", "",
     "Which device table the ib transports use: \"" UCT_IB_GLUE_ENV_RDMA_CORE
     "\" (the devices rdma-core\n"
     "finds) or \"" UCT_IB_GLUE_ENV_EMULATED "\" (the emulated mlx5 device of "
     UCT_IB_GLUE_EMU_LIBRARY ";\n"
     "tools mark its ports \"(emulated)\"). Empty keeps rdma-core. Read once,\n"
     "when the ib component first lists its devices; never chosen automatically.",
     offsetof(uct_ib_glue_config, name), UCS_CONFIG_TYPE_STRING},

    UCS_CONFIG_EMPTY_FIELD
};

} // namespace

UCS_CONFIG_REGISTER_TABLE(uct_ib_glue_config_table, "IB device table", "",
                          uct_ib_glue_config)

static ucs_status_t uct_ib_glue_select(const char *value)
{
    const uct_ib_glue_ops_t *ops;
    ucs_status_t status;

    if (value[0] == '\0') {
        return UCS_OK;
    }

    if (!strcmp(value, UCT_IB_GLUE_ENV_RDMA_CORE)) {
        return uct_ib_glue_install(&uct_ib_glue_rdma_core_ops);
    }

    if (strcmp(value, UCT_IB_GLUE_ENV_EMULATED)) {
        ucs_error("invalid value '%s' of %s: expected '%s' or '%s'", value,
                  UCT_IB_GLUE_ENV, UCT_IB_GLUE_ENV_RDMA_CORE,
                  UCT_IB_GLUE_ENV_EMULATED);
        return UCS_ERR_INVALID_PARAM;
    }

    status = uct_ib_glue_load_emulated(&ops);
    if (status != UCS_OK) {
        return status;
    }

    return uct_ib_glue_install(ops);
}

extern "C" ucs_status_t uct_ib_glue_init_from_env(void)
{
    uct_ib_glue_config config;
    ucs_status_t       status;

    status = ucs_config_parser_fill_opts(&config, uct_ib_glue_config_table,
                                         UCS_DEFAULT_ENV_PREFIX, "");
    if (status != UCS_OK) {
        return status;
    }

    status = uct_ib_glue_select(config.name);
    ucs_config_parser_release_opts(&config, uct_ib_glue_config_table);
    return status;
}

extern "C" ucs_status_t
uct_ib_glue_open_device(struct ibv_device *device, int want_devx,
                        struct ibv_context **context_p, int *devx_p)
{
    struct mlx5dv_context_attr dv_attr = {};
    struct ibv_context *context;
    const char *dev_name;
    int devx = 0;

    std::lock_guard<std::mutex> guard(uct_ib_glue_lock);

    dev_name = uct_ib_glue->get_device_name(device);
    context  = nullptr;

    if (want_devx && uct_ib_glue->mlx5dv_is_supported(device)) {
        dv_attr.flags = MLX5DV_CONTEXT_FLAGS_DEVX;
        context       = uct_ib_glue->mlx5dv_open_device(device, &dv_attr);
        if (context != nullptr) {
            devx = 1;
        } else {
            ucs_debug("mlx5dv_open_device(%s, DEVX) failed, opening without "
                      "DevX: %m", dev_name);
        }
    }

    if (context == nullptr) {
        context = uct_ib_glue->open_device(device);
        if (context == nullptr) {
            ucs_error("ibv_open_device(%s) failed: %m", dev_name);
            return UCS_ERR_IO_ERROR;
        }
    }

    ++uct_ib_glue_open_count;
    ucs_debug("opened %s%s through '%s' (%u open)", dev_name,
              devx ? " with DevX" : "", uct_ib_glue->name,
              uct_ib_glue_open_count.load());

    *context_p = context;
    if (devx_p != nullptr) {
        *devx_p = devx;
    }
    return UCS_OK;
}

extern "C" ucs_status_t uct_ib_glue_close_device(struct ibv_context *context)
{
    const char *dev_name;

    std::lock_guard<std::mutex> guard(uct_ib_glue_lock);

    dev_name = uct_ib_glue->get_device_name(context->device);
    if (uct_ib_glue->close_device(context) != 0) {
        ucs_warn("ibv_close_device(%s) failed: %m", dev_name);
        return UCS_ERR_IO_ERROR;
    }

    ucs_assert(uct_ib_glue_open_count.load() > 0);
    --uct_ib_glue_open_count;
    return UCS_OK;
}

extern "C" unsigned uct_ib_glue_open_device_count(void)
{
    return uct_ib_glue_open_count.load();
}
