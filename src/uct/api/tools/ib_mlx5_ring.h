/*
 * The library's declared interface for its own tools that drive mlx5 queues
 * themselves, as an mlx5dv user does (ucx_emu_engine_bench), not a public
 * API and not installed: the formats they need beyond infiniband/mlx5dv.h,
 * such as the slots of a CQ doorbell record (UCT_MLX5_CQ_DBR_SET_CI). The
 * definitions are the ones the library and the emulated device share; this
 * header is a tool's one way to them.
 */
#ifndef UCT_API_TOOLS_IB_MLX5_RING_H_
#define UCT_API_TOOLS_IB_MLX5_RING_H_

#include <uct/ib/mlx5/dv/wqe_ext.h>

#endif
