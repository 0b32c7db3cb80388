# UCX_CHECK_RDMA_CORE: libibverbs, libmlx5 and every mlx5dv/DevX symbol the
# transport uses, one check each. rdma-core is mandatory.
AC_DEFUN([UCX_MLX5DV_SYMBOLS], [
    mlx5dv_is_supported, mlx5dv_open_device, mlx5dv_query_device,
    mlx5dv_init_obj, mlx5dv_create_qp,
    mlx5dv_devx_general_cmd,
    mlx5dv_devx_obj_create, mlx5dv_devx_obj_query,
    mlx5dv_devx_obj_modify, mlx5dv_devx_obj_destroy,
    mlx5dv_devx_umem_reg, mlx5dv_devx_umem_dereg,
    mlx5dv_devx_alloc_uar, mlx5dv_devx_free_uar,
    mlx5dv_devx_query_eqn,
    mlx5dv_create_mkey, mlx5dv_destroy_mkey, mlx5dv_qp_ex_from_ibv_qp_ex,
    MLX5DV_CONTEXT_FLAGS_DEVX, MLX5DV_OBJ_AH, MLX5DV_OBJ_PD,
    MLX5DV_QP_EX_WITH_MR_LIST
])

AC_DEFUN([UCX_CHECK_RDMA_CORE], [
    ucx_rdma_core_hint="install rdma-core development files: apt-get install libibverbs-dev ibverbs-providers librdmacm-dev"

    AC_CHECK_HEADER([infiniband/verbs.h], [],
        [AC_MSG_ERROR([infiniband/verbs.h not found; $ucx_rdma_core_hint])])
    AC_CHECK_LIB([ibverbs], [ibv_get_device_list],
        [ucx_have_ibverbs=yes],
        [AC_MSG_ERROR([libibverbs not found; $ucx_rdma_core_hint])])
    AC_CHECK_HEADER([infiniband/mlx5dv.h], [],
        [AC_MSG_ERROR([infiniband/mlx5dv.h not found; $ucx_rdma_core_hint])])
    dnl the drop-in serves librdmacm's entry points with its public types
    AC_CHECK_HEADER([rdma/rdma_cma.h], [],
        [AC_MSG_ERROR([rdma/rdma_cma.h not found; install librdmacm's development files: apt-get install librdmacm-dev])])
    AC_CHECK_LIB([mlx5], [mlx5dv_open_device],
        [ucx_have_mlx5dv=yes],
        [AC_MSG_ERROR([libmlx5 not found; $ucx_rdma_core_hint])],
        [-libverbs])

    ucx_mlx5dv_found=0
    ucx_mlx5dv_missing=
    m4_foreach([sym], [UCX_MLX5DV_SYMBOLS], [
        AC_CHECK_DECL(m4_normalize(sym),
            [ucx_mlx5dv_found=$((ucx_mlx5dv_found + 1))
             AC_DEFINE([HAVE_DECL_]m4_toupper(m4_normalize(sym)), [1],
                       [Define if ]m4_normalize(sym)[ is declared])],
            [ucx_mlx5dv_missing="$ucx_mlx5dv_missing m4_normalize(sym)"],
            [[#include <infiniband/mlx5dv.h>]])
    ])
    AS_IF([test -n "$ucx_mlx5dv_missing"],
          [AC_MSG_ERROR([rdma-core is too old, missing:$ucx_mlx5dv_missing; $ucx_rdma_core_hint (rdma-core >= 44)])])

    IBVERBS_LIBS="-libverbs"
    MLX5_LIBS="-lmlx5 -libverbs"
    AC_SUBST([IBVERBS_LIBS])
    AC_SUBST([MLX5_LIBS])
])
