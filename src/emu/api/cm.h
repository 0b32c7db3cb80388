/*
 * The connection manager of the emulated fabric, as the drop-in serves
 * librdmacm's entry points with it (docs/drop-in.md, "librdmacm"): the
 * preload library finds this table in the model by its symbol and forwards
 * each rdma_* call to its slot. The slots have librdmacm's prototypes and
 * conventions (0, or -1 with errno; NULL with errno), and its public types
 * (rdma/rdma_cma.h).
 */
#ifndef UCT_IB_EMU_API_CM_H_
#define UCT_IB_EMU_API_CM_H_

#include <rdma/rdma_cma.h>

#ifdef __cplusplus
extern "C" {
#endif

#define UCT_IB_EMU_CM_VERSION 1
#define UCT_IB_EMU_CM_SYMBOL  "uct_ib_emu_cm_ops"

typedef struct uct_ib_emu_cm_ops {
    unsigned version; /* UCT_IB_EMU_CM_VERSION */

    struct rdma_event_channel *(*create_event_channel)(void);
    void (*destroy_event_channel)(struct rdma_event_channel *channel);
    int (*create_id)(struct rdma_event_channel *channel,
                     struct rdma_cm_id **id, void *context,
                     enum rdma_port_space ps);
    int (*destroy_id)(struct rdma_cm_id *id);
    int (*migrate_id)(struct rdma_cm_id *id,
                      struct rdma_event_channel *channel);
    int (*set_option)(struct rdma_cm_id *id, int level, int optname,
                      void *optval, size_t optlen);

    int (*bind_addr)(struct rdma_cm_id *id, struct sockaddr *addr);
    int (*resolve_addr)(struct rdma_cm_id *id, struct sockaddr *src_addr,
                        struct sockaddr *dst_addr, int timeout_ms);
    int (*resolve_route)(struct rdma_cm_id *id, int timeout_ms);

    int (*create_qp)(struct rdma_cm_id *id, struct ibv_pd *pd,
                     struct ibv_qp_init_attr *qp_init_attr);
    void (*destroy_qp)(struct rdma_cm_id *id);
    int (*init_qp_attr)(struct rdma_cm_id *id, struct ibv_qp_attr *qp_attr,
                        int *qp_attr_mask);

    int (*listen)(struct rdma_cm_id *id, int backlog);
    int (*connect)(struct rdma_cm_id *id, struct rdma_conn_param *param);
    int (*establish)(struct rdma_cm_id *id);
    int (*accept)(struct rdma_cm_id *id, struct rdma_conn_param *param);
    int (*reject)(struct rdma_cm_id *id, const void *private_data,
                  uint8_t private_data_len);
    int (*disconnect)(struct rdma_cm_id *id);

    int (*get_cm_event)(struct rdma_event_channel *channel,
                        struct rdma_cm_event **event);
    int (*ack_cm_event)(struct rdma_cm_event *event);

    /* The synchronous interface: an id of no channel waits for its events */
    int (*create_ep)(struct rdma_cm_id **id, struct rdma_addrinfo *res,
                     struct ibv_pd *pd, struct ibv_qp_init_attr *qp_init_attr);
    void (*destroy_ep)(struct rdma_cm_id *id);
    int (*get_request)(struct rdma_cm_id *listen, struct rdma_cm_id **id);

    struct ibv_context **(*get_devices)(int *num_devices);
    void (*free_devices)(struct ibv_context **list);
} uct_ib_emu_cm_ops_t;

/* The model's table (UCT_IB_EMU_CM_SYMBOL) */
extern const uct_ib_emu_cm_ops_t uct_ib_emu_cm_ops;

/* Close what the connection manager keeps open for the process (the
 * devices its ids used, as librdmacm keeps them): 0, or EBUSY while an id
 * or a channel is left. The emulator's own tests call it last. */
int uct_ib_emu_cm_release(void);

#ifdef __cplusplus
}
#endif

#endif
