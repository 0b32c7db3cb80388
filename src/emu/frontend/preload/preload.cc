/*
 * The drop-in front-end of the emulated device (docs/architecture.md, section
 * 9): a library that, preloaded
 * (LD_PRELOAD=<libdir>/libucx_mlx5_emu_preload.so), answers the libibverbs
 * and libmlx5 entry points of an unmodified program with the emulated devices
 * and fabric.
 *
 * Every entry point forwards to the model: to the emulated device's glue
 * table, the same table our library uses, or to the model's drop-in extras
 * (emu/dropin.h). The contexts the model hands out are genuine
 * verbs_context objects whose ops are the glue table's slots, so the inline
 * functions of verbs.h reach the model too (emu/provider.cc). Nothing here
 * holds state of its own beyond the loaded library.
 *
 * The model (libucx_mlx5_emu.so, with our libucs) is loaded on the first
 * call, never from a constructor, with a local, deep-bound scope: a program
 * that also loads a distribution's UCX keeps its own libucs symbols, and
 * ours keep theirs. It is looked for next to this library, then on the
 * loader's search path. If it cannot be loaded, the error is printed once
 * and every entry point fails as rdma-core does without kernel support
 * (ENOSYS).
 *
 * The exported symbols carry rdma-core's symbol versions (preload.map), so
 * versioned references bind here and not to the system's libraries.
 */
#include <emu/frontend/preload/preload.h>

#include <emu/api/cm.h>

#include <uct/api/tools/ib_glue.h>

#include <dlfcn.h>
#include <endian.h>
#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <atomic>
#include <string>


/* verbs.h wraps these symbols in macros of the same name: define the
 * symbols themselves */
#undef ibv_get_device_list
#undef ibv_query_port
#undef ibv_reg_mr

namespace {

constexpr const char *LOG_PREFIX   = "libucx_mlx5_emu_preload";

/* The GID types ibv_query_gid_type reports (rdma-core's sysfs names) */
constexpr unsigned GID_TYPE_SYSFS_IB_ROCE_V1 = 0;
constexpr unsigned GID_TYPE_SYSFS_ROCE_V2    = 1;

/* What the compat ibv_query_port symbol may write: up to flags */
constexpr size_t COMPAT_PORT_ATTR_SIZE =
        offsetof(struct ibv_port_attr, flags) +
        sizeof(((struct ibv_port_attr*)nullptr)->flags);

struct model {
    const uct_ib_glue_ops_t       *glue   = nullptr;
    const uct_ib_emu_dropin_ops_t *dropin = nullptr;
    const uct_ib_emu_cm_ops_t     *cm     = nullptr;
};

model          the_model;
pthread_once_t model_once = PTHREAD_ONCE_INIT;

std::atomic<uct_ib_emu_dropin_sigaction_func_t> model_sigaction{nullptr};

/* Set while this thread loads the model: the loader's own file calls must
 * not wait for the load they are part of */
thread_local bool model_loading = false;

void *open_model_library(const std::string &path, std::string *error)
{
    int flags = RTLD_NOW | RTLD_LOCAL;
    void *handle;

#ifndef UCS_ENABLE_ASAN
    /* The sanitizer runtimes refuse deep binding */
    flags |= RTLD_DEEPBIND;
#endif
    handle = dlopen(path.c_str(), flags);
    if (handle == nullptr) {
        *error += std::string("\n  ") + dlerror();
    }
    return handle;
}

void load_model_locked()
{
    std::string error, dir;
    const uct_ib_glue_ops_t *glue;
    const uct_ib_emu_dropin_ops_t *dropin;
    Dl_info info;
    void *handle = nullptr;

    if ((dladdr(reinterpret_cast<void*>(load_model_locked), &info) != 0) &&
        (info.dli_fname != nullptr) && (strchr(info.dli_fname, '/') != NULL)) {
        dir    = info.dli_fname;
        dir    = dir.substr(0, dir.rfind('/') + 1);
        handle = open_model_library(dir + UCT_IB_GLUE_EMU_LIBRARY, &error);
    }
    if (handle == nullptr) {
        handle = open_model_library(UCT_IB_GLUE_EMU_LIBRARY, &error);
    }
    if (handle == nullptr) {
        fprintf(stderr, "%s: cannot load the emulated device %s:%s\n",
                LOG_PREFIX, UCT_IB_GLUE_EMU_LIBRARY, error.c_str());
        return;
    }

    /* The library stays loaded until the process exits: the program may
     * hold its objects until then */
    glue   = static_cast<const uct_ib_glue_ops_t*>(
            dlsym(handle, UCT_IB_GLUE_EMU_SYMBOL));
    dropin = static_cast<const uct_ib_emu_dropin_ops_t*>(
            dlsym(handle, UCT_IB_EMU_DROPIN_SYMBOL));
    if ((glue == nullptr) || (glue->version != UCT_IB_GLUE_VERSION) ||
        (dropin == nullptr) || (dropin->version != UCT_IB_EMU_DROPIN_VERSION)) {
        fprintf(stderr, "%s: %s%s does not export glue table version %u and "
                "drop-in table version %u\n", LOG_PREFIX, dir.c_str(),
                UCT_IB_GLUE_EMU_LIBRARY, UCT_IB_GLUE_VERSION,
                UCT_IB_EMU_DROPIN_VERSION);
        return;
    }

    the_model.glue   = glue;
    the_model.dropin = dropin;
    the_model.cm     = static_cast<const uct_ib_emu_cm_ops_t*>(
            dlsym(handle, UCT_IB_EMU_CM_SYMBOL));
    if ((the_model.cm != nullptr) &&
        (the_model.cm->version != UCT_IB_EMU_CM_VERSION)) {
        the_model.cm = nullptr; /* librdmacm's entry points fail */
    }
    model_sigaction.store(
            reinterpret_cast<uct_ib_emu_dropin_sigaction_func_t>(
                    dlsym(handle, UCT_IB_EMU_DROPIN_SIGACTION_SYMBOL)),
            std::memory_order_release);
}

void load_model()
{
    model_loading = true;
    load_model_locked();
    model_loading = false;
}

/* The model, or NULL with errno ENOSYS */
const model *get_model()
{
    pthread_once(&model_once, load_model);
    if (the_model.glue == nullptr) {
        errno = ENOSYS;
        return nullptr;
    }
    return &the_model;
}

/* Forwarders in each convention of the glue table */
#define FWD_PTR(_slot, ...) \
    do { \
        const model *m = get_model(); \
        return (m == nullptr) ? nullptr : m->glue->_slot(__VA_ARGS__); \
    } while (0)

#define FWD_ERRNO(_slot, ...) \
    do { \
        const model *m = get_model(); \
        return (m == nullptr) ? ENOSYS : m->glue->_slot(__VA_ARGS__); \
    } while (0)

#define FWD_M1(_slot, ...) \
    do { \
        const model *m = get_model(); \
        return (m == nullptr) ? -1 : m->glue->_slot(__VA_ARGS__); \
    } while (0)

#define FWD_VOID(_slot, ...) \
    do { \
        const model *m = get_model(); \
        if (m != nullptr) { \
            m->glue->_slot(__VA_ARGS__); \
        } \
    } while (0)

} // namespace


uct_ib_emu_dropin_sigaction_func_t preload_model_sigaction()
{
    return model_sigaction.load(std::memory_order_acquire);
}

const uct_ib_glue_ops_t *preload_glue_ops()
{
    const model *m = get_model();

    return (m == nullptr) ? nullptr : m->glue;
}

const uct_ib_emu_cm_ops_t *preload_cm_ops()
{
    const model *m = get_model();

    return (m == nullptr) ? nullptr : m->cm;
}

const uct_ib_emu_dropin_ops_t *preload_dropin_ops()
{
    const model *m;

    if (model_loading) {
        return nullptr;
    }

    m = get_model();
    return (m == nullptr) ? nullptr : m->dropin;
}


/* ------------------------------------------------------------------------
 * libibverbs: devices and queries
 */

PRELOAD_EXPORT struct ibv_device **ibv_get_device_list(int *num_devices)
{
    if (num_devices != nullptr) {
        *num_devices = 0;
    }
    FWD_PTR(get_device_list, num_devices);
}

PRELOAD_EXPORT void ibv_free_device_list(struct ibv_device **list)
{
    FWD_VOID(free_device_list, list);
}

PRELOAD_EXPORT const char *ibv_get_device_name(struct ibv_device *device)
{
    FWD_PTR(get_device_name, device);
}

PRELOAD_EXPORT __be64 ibv_get_device_guid(struct ibv_device *device)
{
    const model *m = get_model();

    return (m == nullptr) ? 0 : m->dropin->get_device_guid(device);
}

PRELOAD_EXPORT int ibv_get_device_index(struct ibv_device *device)
{
    const model *m = get_model();

    return (m == nullptr) ? -1 : m->dropin->get_device_index(device);
}

PRELOAD_EXPORT struct ibv_context *ibv_open_device(struct ibv_device *device)
{
    FWD_PTR(open_device, device);
}

PRELOAD_EXPORT int ibv_close_device(struct ibv_context *context)
{
    FWD_M1(close_device, context);
}

PRELOAD_EXPORT int ibv_query_device(struct ibv_context *context,
                                    struct ibv_device_attr *device_attr)
{
    FWD_ERRNO(query_device, context, device_attr);
}

/* The symbol behind verbs.h's ibv_query_port for contexts without the
 * extended query_port: its caller's structure may end at flags */
PRELOAD_EXPORT int ibv_query_port(struct ibv_context *context,
                                  uint8_t port_num,
                                  struct _compat_ibv_port_attr *port_attr)
{
    const model *m = get_model();
    struct ibv_port_attr full;
    int ret;

    if (m == nullptr) {
        return ENOSYS;
    }

    ret = m->glue->query_port(context, port_num, &full);
    if (ret == 0) {
        memcpy(port_attr, &full, COMPAT_PORT_ATTR_SIZE);
    }
    return ret;
}

PRELOAD_EXPORT int _ibv_query_gid_ex(struct ibv_context *context,
                                     uint32_t port_num, uint32_t gid_index,
                                     struct ibv_gid_entry *entry,
                                     uint32_t flags, size_t entry_size)
{
    const model *m = get_model();
    struct ibv_gid_entry full;
    int ret;

    if (m == nullptr) {
        return ENOSYS;
    }
    if (entry_size < sizeof(full)) {
        return EINVAL;
    }

    ret = m->glue->query_gid_ex(context, port_num, gid_index, &full, flags);
    if (ret == 0) {
        memcpy(entry, &full, sizeof(full));
    }
    return ret;
}

PRELOAD_EXPORT int ibv_query_gid(struct ibv_context *context, uint8_t port_num,
                                 int index, union ibv_gid *gid)
{
    const model *m = get_model();
    struct ibv_gid_entry entry;
    int ret;

    if (m == nullptr) {
        return -1;
    }
    if (index < 0) {
        errno = EINVAL;
        return -1;
    }

    ret = m->glue->query_gid_ex(context, port_num, index, &entry, 0);
    if (ret == ENODATA) {
        memset(gid, 0, sizeof(*gid)); /* an empty slot reads as zeros */
        return 0;
    } else if (ret != 0) {
        errno = ret;
        return -1;
    }

    *gid = entry.gid;
    return 0;
}

/* rdma-core's private entry point behind ibv_devinfo's GID types */
PRELOAD_EXPORT int ibv_query_gid_type(struct ibv_context *context,
                                      uint8_t port_num, unsigned int index,
                                      unsigned *type)
{
    const model *m = get_model();
    struct ibv_gid_entry entry;
    int ret;

    if (m == nullptr) {
        return -1;
    }

    ret = m->glue->query_gid_ex(context, port_num, index, &entry, 0);
    if (ret == ENODATA) {
        /* an empty slot has the type of old kernels' tables */
        *type = GID_TYPE_SYSFS_IB_ROCE_V1;
        return 0;
    } else if (ret != 0) {
        errno = ret;
        return -1;
    }

    *type = (entry.gid_type == IBV_GID_TYPE_ROCE_V2) ?
            GID_TYPE_SYSFS_ROCE_V2 : GID_TYPE_SYSFS_IB_ROCE_V1;
    return 0;
}

PRELOAD_EXPORT int ibv_query_pkey(struct ibv_context *context,
                                  uint8_t port_num, int index, __be16 *pkey)
{
    const model *m = get_model();

    return (m == nullptr) ? -1 :
           m->dropin->query_pkey(context, port_num, index, pkey);
}

/* A sysfs file: the model's for its devices' directories, the real one
 * otherwise. Returns the bytes read (a trailing newline dropped), or -1. */
PRELOAD_EXPORT int ibv_read_sysfs_file(const char *dir, const char *file,
                                       char *buf, size_t size)
{
    const model *m = get_model();
    std::string path;
    int handled = 0;
    ssize_t len;
    int fd;

    if (m != nullptr) {
        len = m->dropin->sysfs_read(dir, file, buf, size, &handled);
        if (handled) {
            return static_cast<int>(len);
        }
    }

    if (size == 0) {
        errno = EINVAL;
        return -1;
    }

    path = std::string(dir) + "/" + file;
    fd   = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return -1;
    }

    len = read(fd, buf, size - 1);
    close(fd);
    if (len < 0) {
        return -1;
    }

    if ((len > 0) && (buf[len - 1] == '\n')) {
        --len;
    }
    buf[len] = '\0';
    return static_cast<int>(len);
}

PRELOAD_EXPORT int ibv_fork_init(void)
{
    /* The emulated device's memory is plain process memory: a child
     * breaks nothing the parent registered */
    return (get_model() == nullptr) ? ENOSYS : 0;
}


/* ------------------------------------------------------------------------
 * libibverbs: objects
 */

PRELOAD_EXPORT struct ibv_pd *ibv_alloc_pd(struct ibv_context *context)
{
    FWD_PTR(alloc_pd, context);
}

PRELOAD_EXPORT int ibv_dealloc_pd(struct ibv_pd *pd)
{
    FWD_ERRNO(dealloc_pd, pd);
}

/* Optional access flags may be ignored by a device (ibv_reg_mr(3)) */
PRELOAD_EXPORT struct ibv_mr *ibv_reg_mr(struct ibv_pd *pd, void *addr,
                                         size_t length, int access)
{
    FWD_PTR(reg_mr, pd, addr, length, access & ~IBV_ACCESS_OPTIONAL_RANGE);
}

struct ibv_mr *preload_reg_mr_iova(struct ibv_pd *pd, void *addr,
                                   size_t length, uint64_t iova, int access)
{
    if (iova != reinterpret_cast<uintptr_t>(addr)) {
        errno = EOPNOTSUPP;
        return nullptr;
    }
    FWD_PTR(reg_mr, pd, addr, length, access & ~IBV_ACCESS_OPTIONAL_RANGE);
}

PRELOAD_EXPORT struct ibv_mr *ibv_reg_mr_iova2(struct ibv_pd *pd, void *addr,
                                               size_t length, uint64_t iova,
                                               unsigned int access)
{
    return preload_reg_mr_iova(pd, addr, length, iova,
                               static_cast<int>(access));
}

PRELOAD_EXPORT int ibv_dereg_mr(struct ibv_mr *mr)
{
    FWD_ERRNO(dereg_mr, mr);
}

PRELOAD_EXPORT struct ibv_cq *ibv_create_cq(struct ibv_context *context,
                                            int cqe, void *cq_context,
                                            struct ibv_comp_channel *channel,
                                            int comp_vector)
{
    FWD_PTR(create_cq, context, cqe, cq_context, channel, comp_vector);
}

PRELOAD_EXPORT int ibv_destroy_cq(struct ibv_cq *cq)
{
    FWD_ERRNO(destroy_cq, cq);
}

PRELOAD_EXPORT struct ibv_comp_channel *
ibv_create_comp_channel(struct ibv_context *context)
{
    FWD_PTR(create_comp_channel, context);
}

PRELOAD_EXPORT int ibv_destroy_comp_channel(struct ibv_comp_channel *channel)
{
    FWD_ERRNO(destroy_comp_channel, channel);
}

PRELOAD_EXPORT int ibv_get_cq_event(struct ibv_comp_channel *channel,
                                    struct ibv_cq **cq, void **cq_context)
{
    FWD_M1(get_cq_event, channel, cq, cq_context);
}

PRELOAD_EXPORT void ibv_ack_cq_events(struct ibv_cq *cq, unsigned int nevents)
{
    FWD_VOID(ack_cq_events, cq, nevents);
}

PRELOAD_EXPORT int ibv_get_async_event(struct ibv_context *context,
                                       struct ibv_async_event *event)
{
    FWD_M1(get_async_event, context, event);
}

PRELOAD_EXPORT void ibv_ack_async_event(struct ibv_async_event *event)
{
    FWD_VOID(ack_async_event, event);
}

PRELOAD_EXPORT struct ibv_ah *ibv_create_ah(struct ibv_pd *pd,
                                            struct ibv_ah_attr *attr)
{
    FWD_PTR(create_ah, pd, attr);
}

PRELOAD_EXPORT int ibv_destroy_ah(struct ibv_ah *ah)
{
    FWD_ERRNO(destroy_ah, ah);
}

PRELOAD_EXPORT struct ibv_qp *ibv_create_qp(struct ibv_pd *pd,
                                            struct ibv_qp_init_attr *attr)
{
    FWD_PTR(create_qp, pd, attr);
}

PRELOAD_EXPORT int ibv_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr,
                                 int attr_mask)
{
    FWD_ERRNO(modify_qp, qp, attr, attr_mask);
}

PRELOAD_EXPORT int ibv_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr,
                                int attr_mask,
                                struct ibv_qp_init_attr *init_attr)
{
    FWD_ERRNO(query_qp, qp, attr, attr_mask, init_attr);
}

PRELOAD_EXPORT int ibv_destroy_qp(struct ibv_qp *qp)
{
    FWD_ERRNO(destroy_qp, qp);
}

PRELOAD_EXPORT struct ibv_qp_ex *ibv_qp_to_qp_ex(struct ibv_qp *qp)
{
    FWD_PTR(qp_to_qp_ex, qp);
}

PRELOAD_EXPORT struct ibv_srq *ibv_create_srq(struct ibv_pd *pd,
                                              struct ibv_srq_init_attr *attr)
{
    FWD_PTR(create_srq, pd, attr);
}

PRELOAD_EXPORT int ibv_destroy_srq(struct ibv_srq *srq)
{
    FWD_ERRNO(destroy_srq, srq);
}


/* ------------------------------------------------------------------------
 * libibverbs: strings
 */

PRELOAD_EXPORT const char *ibv_wc_status_str(enum ibv_wc_status status)
{
    switch (status) {
    case IBV_WC_SUCCESS:            return "success";
    case IBV_WC_LOC_LEN_ERR:        return "local length error";
    case IBV_WC_LOC_QP_OP_ERR:      return "local QP operation error";
    case IBV_WC_LOC_EEC_OP_ERR:     return "local EE context operation error";
    case IBV_WC_LOC_PROT_ERR:       return "local protection error";
    case IBV_WC_WR_FLUSH_ERR:       return "Work Request Flushed Error";
    case IBV_WC_MW_BIND_ERR:        return "memory management operation error";
    case IBV_WC_BAD_RESP_ERR:       return "bad response error";
    case IBV_WC_LOC_ACCESS_ERR:     return "local access error";
    case IBV_WC_REM_INV_REQ_ERR:    return "remote invalid request error";
    case IBV_WC_REM_ACCESS_ERR:     return "remote access error";
    case IBV_WC_REM_OP_ERR:         return "remote operation error";
    case IBV_WC_RETRY_EXC_ERR:      return "transport retry counter exceeded";
    case IBV_WC_RNR_RETRY_EXC_ERR:  return "RNR retry counter exceeded";
    case IBV_WC_LOC_RDD_VIOL_ERR:   return "local RDD violation error";
    case IBV_WC_REM_INV_RD_REQ_ERR: return "remote invalid RD request";
    case IBV_WC_REM_ABORT_ERR:      return "aborted error";
    case IBV_WC_INV_EECN_ERR:       return "invalid EE context number";
    case IBV_WC_INV_EEC_STATE_ERR:  return "invalid EE context state";
    case IBV_WC_FATAL_ERR:          return "fatal error";
    case IBV_WC_RESP_TIMEOUT_ERR:   return "response timeout error";
    case IBV_WC_GENERAL_ERR:        return "general error";
    case IBV_WC_TM_ERR:             return "TM error";
    case IBV_WC_TM_RNDV_INCOMPLETE: return "TM software rendezvous";
    default:                        return "unknown";
    }
}

PRELOAD_EXPORT const char *ibv_event_type_str(enum ibv_event_type event)
{
    switch (event) {
    case IBV_EVENT_CQ_ERR:              return "CQ error";
    case IBV_EVENT_QP_FATAL:            return "local work queue catastrophic error";
    case IBV_EVENT_QP_REQ_ERR:          return "invalid request local work queue error";
    case IBV_EVENT_QP_ACCESS_ERR:       return "local access violation work queue error";
    case IBV_EVENT_COMM_EST:            return "communication established";
    case IBV_EVENT_SQ_DRAINED:          return "send queue drained";
    case IBV_EVENT_PATH_MIG:            return "path migrated";
    case IBV_EVENT_PATH_MIG_ERR:        return "path migration request error";
    case IBV_EVENT_DEVICE_FATAL:        return "local catastrophic error";
    case IBV_EVENT_PORT_ACTIVE:         return "port active";
    case IBV_EVENT_PORT_ERR:            return "port error";
    case IBV_EVENT_LID_CHANGE:          return "LID change";
    case IBV_EVENT_PKEY_CHANGE:         return "P_Key change";
    case IBV_EVENT_SM_CHANGE:           return "SM change";
    case IBV_EVENT_SRQ_ERR:             return "SRQ catastrophic error";
    case IBV_EVENT_SRQ_LIMIT_REACHED:   return "SRQ limit reached";
    case IBV_EVENT_QP_LAST_WQE_REACHED: return "last WQE reached";
    case IBV_EVENT_CLIENT_REREGISTER:   return "client reregistration";
    case IBV_EVENT_GID_CHANGE:          return "GID table change";
    case IBV_EVENT_WQ_FATAL:            return "WQ fatal";
    default:                            return "unknown";
    }
}

PRELOAD_EXPORT const char *ibv_node_type_str(enum ibv_node_type node_type)
{
    switch (node_type) {
    case IBV_NODE_CA:         return "InfiniBand channel adapter";
    case IBV_NODE_SWITCH:     return "InfiniBand switch";
    case IBV_NODE_ROUTER:     return "InfiniBand router";
    case IBV_NODE_RNIC:       return "iWARP NIC";
    case IBV_NODE_USNIC:      return "usNIC";
    case IBV_NODE_USNIC_UDP:  return "usNIC UDP";
    case IBV_NODE_UNSPECIFIED: return "unspecified";
    default:                  return "unknown";
    }
}

PRELOAD_EXPORT const char *ibv_port_state_str(enum ibv_port_state port_state)
{
    switch (port_state) {
    case IBV_PORT_NOP:          return "PORT_NOP";
    case IBV_PORT_DOWN:         return "PORT_DOWN";
    case IBV_PORT_INIT:         return "PORT_INIT";
    case IBV_PORT_ARMED:        return "PORT_ARMED";
    case IBV_PORT_ACTIVE:       return "PORT_ACTIVE";
    case IBV_PORT_ACTIVE_DEFER: return "PORT_ACTIVE_DEFER";
    default:                    return "invalid state";
    }
}


/* ------------------------------------------------------------------------
 * libmlx5: direct verbs and DevX
 */

PRELOAD_EXPORT bool mlx5dv_is_supported(struct ibv_device *device)
{
    const model *m = get_model();

    return (m != nullptr) && m->glue->mlx5dv_is_supported(device);
}

PRELOAD_EXPORT struct ibv_context *
mlx5dv_open_device(struct ibv_device *device, struct mlx5dv_context_attr *attr)
{
    FWD_PTR(mlx5dv_open_device, device, attr);
}

PRELOAD_EXPORT int mlx5dv_query_device(struct ibv_context *context,
                                       struct mlx5dv_context *attrs)
{
    FWD_ERRNO(mlx5dv_query_device, context, attrs);
}

PRELOAD_EXPORT int mlx5dv_init_obj(struct mlx5dv_obj *obj, uint64_t obj_type)
{
    FWD_ERRNO(mlx5dv_init_obj, obj, obj_type);
}

PRELOAD_EXPORT struct ibv_qp *
mlx5dv_create_qp(struct ibv_context *context,
                 struct ibv_qp_init_attr_ex *qp_attr,
                 struct mlx5dv_qp_init_attr *mlx5_qp_attr)
{
    FWD_PTR(mlx5dv_create_qp, context, qp_attr, mlx5_qp_attr);
}

PRELOAD_EXPORT struct mlx5dv_qp_ex *
mlx5dv_qp_ex_from_ibv_qp_ex(struct ibv_qp_ex *qp)
{
    FWD_PTR(mlx5dv_qp_ex_from_ibv_qp_ex, qp);
}

PRELOAD_EXPORT struct mlx5dv_mkey *
mlx5dv_create_mkey(struct mlx5dv_mkey_init_attr *mkey_init_attr)
{
    FWD_PTR(mlx5dv_create_mkey, mkey_init_attr);
}

PRELOAD_EXPORT int mlx5dv_destroy_mkey(struct mlx5dv_mkey *mkey)
{
    FWD_ERRNO(mlx5dv_destroy_mkey, mkey);
}

PRELOAD_EXPORT int mlx5dv_devx_general_cmd(struct ibv_context *context,
                                           const void *in, size_t inlen,
                                           void *out, size_t outlen)
{
    FWD_ERRNO(devx_general_cmd, context, in, inlen, out, outlen);
}

PRELOAD_EXPORT struct mlx5dv_devx_obj *
mlx5dv_devx_obj_create(struct ibv_context *context, const void *in,
                       size_t inlen, void *out, size_t outlen)
{
    FWD_PTR(devx_obj_create, context, in, inlen, out, outlen);
}

PRELOAD_EXPORT int mlx5dv_devx_obj_query(struct mlx5dv_devx_obj *obj,
                                         const void *in, size_t inlen,
                                         void *out, size_t outlen)
{
    FWD_ERRNO(devx_obj_query, obj, in, inlen, out, outlen);
}

PRELOAD_EXPORT int mlx5dv_devx_obj_modify(struct mlx5dv_devx_obj *obj,
                                          const void *in, size_t inlen,
                                          void *out, size_t outlen)
{
    FWD_ERRNO(devx_obj_modify, obj, in, inlen, out, outlen);
}

PRELOAD_EXPORT int mlx5dv_devx_obj_destroy(struct mlx5dv_devx_obj *obj)
{
    FWD_ERRNO(devx_obj_destroy, obj);
}

PRELOAD_EXPORT struct mlx5dv_devx_umem *
mlx5dv_devx_umem_reg(struct ibv_context *context, void *addr, size_t size,
                     uint32_t access)
{
    FWD_PTR(devx_umem_reg, context, addr, size, access);
}

PRELOAD_EXPORT int mlx5dv_devx_umem_dereg(struct mlx5dv_devx_umem *umem)
{
    FWD_ERRNO(devx_umem_dereg, umem);
}

PRELOAD_EXPORT struct mlx5dv_devx_uar *
mlx5dv_devx_alloc_uar(struct ibv_context *context, uint32_t flags)
{
    FWD_PTR(devx_alloc_uar, context, flags);
}

PRELOAD_EXPORT void mlx5dv_devx_free_uar(struct mlx5dv_devx_uar *uar)
{
    FWD_VOID(devx_free_uar, uar);
}

PRELOAD_EXPORT int mlx5dv_devx_query_eqn(struct ibv_context *context,
                                         uint32_t vector, uint32_t *eqn)
{
    FWD_ERRNO(devx_query_eqn, context, vector, eqn);
}

/* The libmlx5 entry points only the drop-in front-end calls: the model's
 * drop-in table */

PRELOAD_EXPORT struct ibv_cq_ex *
mlx5dv_create_cq(struct ibv_context *context,
                 struct ibv_cq_init_attr_ex *cq_attr,
                 struct mlx5dv_cq_init_attr *mlx5_cq_attr)
{
    const model *m = get_model();

    return (m == nullptr) ? nullptr :
           m->dropin->create_cq(context, cq_attr, mlx5_cq_attr);
}

PRELOAD_EXPORT int mlx5dv_devx_qp_modify(struct ibv_qp *qp, const void *in,
                                         size_t inlen, void *out,
                                         size_t outlen)
{
    const model *m = get_model();

    return (m == nullptr) ? EOPNOTSUPP :
           m->dropin->devx_qp_modify(qp, in, inlen, out, outlen);
}

PRELOAD_EXPORT int mlx5dv_devx_qp_query(struct ibv_qp *qp, const void *in,
                                        size_t inlen, void *out, size_t outlen)
{
    const model *m = get_model();

    return (m == nullptr) ? EOPNOTSUPP :
           m->dropin->devx_qp_query(qp, in, inlen, out, outlen);
}

PRELOAD_EXPORT struct mlx5dv_devx_event_channel *
mlx5dv_devx_create_event_channel(
        struct ibv_context *context,
        enum mlx5dv_devx_create_event_channel_flags flags)
{
    const model *m = get_model();

    return (m == nullptr) ? nullptr :
           m->dropin->devx_create_event_channel(context, flags);
}

PRELOAD_EXPORT void
mlx5dv_devx_destroy_event_channel(struct mlx5dv_devx_event_channel *channel)
{
    const model *m = get_model();

    if (m != nullptr) {
        m->dropin->devx_destroy_event_channel(channel);
    }
}

PRELOAD_EXPORT int
mlx5dv_devx_subscribe_devx_event(struct mlx5dv_devx_event_channel *channel,
                                 struct mlx5dv_devx_obj *obj,
                                 uint16_t events_sz, uint16_t events_num[],
                                 uint64_t cookie)
{
    const model *m = get_model();

    return (m == nullptr) ? ENOSYS :
           m->dropin->devx_subscribe_devx_event(channel, obj, events_sz,
                                                events_num, cookie);
}

PRELOAD_EXPORT ssize_t
mlx5dv_devx_get_event(struct mlx5dv_devx_event_channel *channel,
                      struct mlx5dv_devx_async_event_hdr *event_data,
                      size_t event_resp_len)
{
    const model *m = get_model();

    return (m == nullptr) ? -1 :
           m->dropin->devx_get_event(channel, event_data, event_resp_len);
}
