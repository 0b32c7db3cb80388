/*
 * The counters of an emulated port, for tools (ucx_info -d), in plain C
 * types: the tool finds the function with dlsym() in the emulated device
 * library the glue table loaded (UCT_IB_GLUE_EMU_LIBRARY), so it links
 * neither that library nor anything C++.
 *
 * The counters are the emulator's in this process since the topology was
 * set or the counters were reset (uct_ib_emu_counters_reset()); a packet
 * counts as sent on the port of its sender, as delivered on the port of its
 * receiver, and as dropped on the port of its sender.
 */
#ifndef UCT_IB_EMU_API_PORT_STATS_H_
#define UCT_IB_EMU_API_PORT_STATS_H_

#include <ucs/sys/compiler_def.h>
#include <ucs/type/status.h>

#include <stdint.h>

BEGIN_C_DECLS

#define UCT_IB_EMU_PORT_STATS_VERSION 1
#define UCT_IB_EMU_PORT_STATS_LIBRARY "libucx_mlx5_emu.so" /* as the glue's */
#define UCT_IB_EMU_PORT_STATS_SYMBOL  "uct_ib_emu_query_port_stats"
#define UCT_IB_EMU_PORT_STATS_MAX     32 /* named entries of a breakdown */

/* One entry of a breakdown: what, and how many */
typedef struct uct_ib_emu_port_stat {
    char     name[64];
    uint64_t count;
} uct_ib_emu_port_stat_t;

typedef struct uct_ib_emu_port_stats {
    unsigned               version;           /* in: the one above */
    uint64_t               packets_sent;      /* requests and responses */
    uint64_t               packets_delivered;
    uint64_t               packets_dropped;   /* the sum of drops[] */
    uint64_t               retries;           /* after an ack timeout */
    uint64_t               rnr_naks;          /* received by requesters */
    uint64_t               err_cqes;          /* the sum of err_cqe[] */
    uint64_t               cq_overruns;       /* CQEs lost to a full CQ */

    /* The reasons and syndromes with a non-zero count, in their order */
    unsigned               num_drops;
    uct_ib_emu_port_stat_t drops[UCT_IB_EMU_PORT_STATS_MAX];
    unsigned               num_err_cqes;
    uct_ib_emu_port_stat_t err_cqe[UCT_IB_EMU_PORT_STATS_MAX];
} uct_ib_emu_port_stats_t;

typedef ucs_status_t (*uct_ib_emu_query_port_stats_func_t)(
        const char *dev_name, uct_ib_emu_port_stats_t *stats);

/**
 * The counters of emulated port @a dev_name ("mlx5_0:1").
 *
 * @return UCS_OK; UCS_ERR_INVALID_PARAM if stats->version is not
 *         UCT_IB_EMU_PORT_STATS_VERSION; UCS_ERR_NO_DEVICE if no emulated
 *         device has that port.
 */
ucs_status_t uct_ib_emu_query_port_stats(const char *dev_name,
                                         uct_ib_emu_port_stats_t *stats);

END_C_DECLS

#endif
