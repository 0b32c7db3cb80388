/*
 * Work queue and completion queue formats that infiniband/mlx5dv.h does not
 * declare (the rest comes from mlx5dv.h, never re-declared): the masked
 * (extended) atomic segments and the slots of a CQ doorbell record. Shared
 * by the library and the emulated device, so both read one definition.
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
