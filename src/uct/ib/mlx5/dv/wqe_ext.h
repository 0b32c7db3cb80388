/*
 * Work queue and completion queue formats that infiniband/mlx5dv.h does not
 * declare (the rest comes from mlx5dv.h, never re-declared): the masked
 * (extended) atomic segments, the slots of a CQ doorbell record, the
 * tag-matching operations and CQE codes. Shared by the library and the
 * emulated device, so both read one definition.
 */
#ifndef UCT_IB_MLX5_DV_WQE_EXT_H_
#define UCT_IB_MLX5_DV_WQE_EXT_H_

#include <infiniband/mlx5dv.h>

#include <stddef.h>
#include <stdint.h>


/* CQ doorbell record: two big-endian dwords */
enum {
    UCT_MLX5_CQ_DBR_SET_CI = 0, /* consumer index, 24 bits */
    UCT_MLX5_CQ_DBR_ARM    = 1  /* arm sequence number, command, index */
};

/* Hardware tag matching: the operation in the upper nibble of a
 * TAG_MATCHING WQE's mlx5_wqe_tm_seg.opcode, its flags, and the CQE's app
 * and app_op of what the XRQ completes */
enum {
    UCT_MLX5_TM_OP_NOP           = 0x0,
    UCT_MLX5_TM_OP_APPEND        = 0x1,
    UCT_MLX5_TM_OP_REMOVE        = 0x2,
    UCT_MLX5_TM_FLAG_SW_CNT      = 1 << 6, /* only if sw_cnt is current */
    UCT_MLX5_TM_FLAG_CQE_REQ     = 1 << 7  /* complete with a CQE */
};

enum {
    UCT_MLX5_CQE_APP_TAG_MATCHING         = 1,
    UCT_MLX5_CQE_APP_OP_TM_CONSUMED       = 0x1, /* an entry consumed */
    UCT_MLX5_CQE_APP_OP_TM_EXPECTED       = 0x2, /* its message arrived */
    UCT_MLX5_CQE_APP_OP_TM_UNEXPECTED     = 0x3,
    UCT_MLX5_CQE_APP_OP_TM_NO_TAG         = 0x4,
    UCT_MLX5_CQE_APP_OP_TM_APPEND         = 0x5,
    UCT_MLX5_CQE_APP_OP_TM_REMOVE         = 0x6,
    UCT_MLX5_CQE_APP_OP_TM_NOOP           = 0x7,
    UCT_MLX5_CQE_APP_OP_TM_CONSUMED_MSG   = 0xa  /* both at once */
};

/* Control segment opmod of a masked atomic: 8 | (log2(size) - 2) */
#define UCT_MLX5_OPMOD_EXT_ATOMIC(_log_size) (0x8 | ((_log_size) - 2))

/* Masked compare-and-swap on 4 bytes: one 16-byte segment */
struct uct_mlx5_masked_cs32_seg {
    __be32 swap;
    __be32 compare;
    __be32 swap_mask;
    __be32 compare_mask;
};

/* Masked fetch-and-add on 4 bytes; field_boundary marks the most
 * significant bit of each field (carries stop there). Padded to 16 bytes */
struct uct_mlx5_masked_fa32_seg {
    __be32  add;
    __be32  field_boundary;
    uint8_t reserved[8];
};

/* Masked compare-and-swap on 8 bytes: two 16-byte segments */
struct uct_mlx5_masked_cs64_seg {
    __be64 swap;
    __be64 compare;
    __be64 swap_mask;
    __be64 compare_mask;
};

/* Masked fetch-and-add on 8 bytes: one 16-byte segment */
struct uct_mlx5_masked_fa64_seg {
    __be64 add;
    __be64 field_boundary;
};

#ifdef __cplusplus
static_assert(sizeof(struct uct_mlx5_masked_cs32_seg) == 16, "one segment");
static_assert(sizeof(struct uct_mlx5_masked_fa32_seg) == 16, "one segment");
static_assert(sizeof(struct uct_mlx5_masked_cs64_seg) == 32, "two segments");
static_assert(sizeof(struct uct_mlx5_masked_fa64_seg) == 16, "one segment");
#endif

#endif
