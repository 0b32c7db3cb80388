/*
 * What the drop-in front-end (preload/) needs from the model beyond the glue
 * table: the rdma-core entry points our library never calls, and the sysfs
 * attributes rdma-core programs read about a device. Plain C, found by the
 * preload library with dlsym(UCT_IB_EMU_DROPIN_SYMBOL) in the same
 * libucx_mlx5_emu.so that exports the glue table, so both front-ends drive
 * one model.
 */
#ifndef UCT_IB_EMU_API_DROPIN_H_
#define UCT_IB_EMU_API_DROPIN_H_

#include <infiniband/verbs.h>
#include <infiniband/mlx5dv.h>
#include <signal.h>
#include <stddef.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#define UCT_IB_EMU_DROPIN_VERSION 5
#define UCT_IB_EMU_DROPIN_SYMBOL  "uct_ib_emu_dropin_ops"

typedef struct uct_ib_emu_dropin_ops {
    unsigned version; /* UCT_IB_EMU_DROPIN_VERSION */

    /* ibv_get_device_guid: the node GUID, big-endian; 0 with errno ENODEV
     * for a device that is not emulated */
    __be64 (*get_device_guid)(struct ibv_device *device);

    /* ibv_get_device_index: the device's index, or -1 (ENODEV) */
    int (*get_device_index)(struct ibv_device *device);

    /* ibv_query_pkey: 0, or -1 with errno (EINVAL: bad context, port or
     * index) */
    int (*query_pkey)(struct ibv_context *context, uint8_t port_num,
                      int index, __be16 *pkey);

    /* The sysfs file <dir>/<file> of an emulated device (dir is its
     * ibdev_path, its dev_path, or its PCI function's directory, which
     * <ibdev_path>/device/uevent names in PCI_SLOT_NAME, under
     * /sys/devices/pci0000:e0/): *handled set to 1 and the content, without
     * its trailing newline, copied NUL-terminated into buf (truncated to
     * size), returning its length, or -1 with errno ENOENT for a file the
     * device does not have. *handled 0 (and -1, ENOENT) when dir belongs to
     * no emulated device: the caller reads the real file. */
    ssize_t (*sysfs_read)(const char *dir, const char *file, char *buf,
                          size_t size, int *handled);

    /* mlx5dv_create_cq: a CQ of 64- or 128-byte CQEs; NULL with errno
     * (EINVAL: bad context or attributes; EOPNOTSUPP: CQE compression,
     * padding or flags the model has not) */
    struct ibv_cq_ex *(*create_cq)(struct ibv_context *context,
                                   struct ibv_cq_init_attr_ex *cq_attr,
                                   struct mlx5dv_cq_init_attr *mlx5_cq_attr);

    /* DevX event channels, with rdma-core's conventions */
    struct mlx5dv_devx_event_channel *(*devx_create_event_channel)(
            struct ibv_context *context, uint32_t flags);
    void (*devx_destroy_event_channel)(
            struct mlx5dv_devx_event_channel *channel);
    int (*devx_subscribe_devx_event)(
            struct mlx5dv_devx_event_channel *channel,
            struct mlx5dv_devx_obj *obj, uint16_t events_sz,
            const uint16_t *events_num, uint64_t cookie);
    ssize_t (*devx_get_event)(struct mlx5dv_devx_event_channel *channel,
                              struct mlx5dv_devx_async_event_hdr *event_data,
                              size_t event_resp_len);

    /* mlx5dv_devx_qp_modify/query: a DevX command on a verbs QP; 0 or an
     * errno (EREMOTEIO: the firmware failed it, status in out) */
    int (*devx_qp_modify)(struct ibv_qp *qp, const void *in, size_t inlen,
                          void *out, size_t outlen);
    int (*devx_qp_query)(struct ibv_qp *qp, const void *in, size_t inlen,
                         void *out, size_t outlen);

    /* ibv_modify_srq (the limit armed or disarmed; EINVAL for a resize,
     * which mlx5 refuses) and ibv_query_srq: 0 or an errno */
    int (*modify_srq)(struct ibv_srq *srq, struct ibv_srq_attr *attr,
                      int attr_mask);
    int (*query_srq)(struct ibv_srq *srq, struct ibv_srq_attr *attr);

    /* ibv_resize_cq: 0 or an errno (EINVAL: the entries not yet polled do
     * not fit, or a size beyond the device's) */
    int (*resize_cq)(struct ibv_cq *cq, int cqe);

    /* ibv_rereg_mr: 0, or enum ibv_rereg_mr_err_code with errno set
     * (IBV_REREG_MR_ERR_INPUT: flags, addresses or the PD refused, the MR
     * unchanged; IBV_REREG_MR_ERR_CMD: the device refused, unchanged) */
    int (*rereg_mr)(struct ibv_mr *mr, int flags, struct ibv_pd *pd,
                    void *addr, size_t length, int access);
} uct_ib_emu_dropin_ops_t;

extern const uct_ib_emu_dropin_ops_t uct_ib_emu_dropin_ops;

/*
 * The program's sigaction() of SIGSEGV or SIGBUS. The model catches them
 * for its accesses to memory the program registered (model/dma.h) and runs
 * the program's disposition for every other fault. 0: recorded as the
 * program's, the old one in *old; ENOENT: the model does not catch @a sig,
 * the C library's sigaction is the one to call.
 */
#define UCT_IB_EMU_DROPIN_SIGACTION_SYMBOL "uct_ib_emu_dropin_sigaction"

typedef int (*uct_ib_emu_dropin_sigaction_func_t)(int sig,
                                                  const struct sigaction *act,
                                                  struct sigaction *old);

int uct_ib_emu_dropin_sigaction(int sig, const struct sigaction *act,
                                struct sigaction *old);

#ifdef __cplusplus
}
#endif

#endif
