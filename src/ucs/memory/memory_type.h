/*
 * Kinds of memory a buffer may live in. Bit n of a "mem_types" mask stands
 * for the memory type with value n.
 */
#ifndef UCS_MEMORY_MEMORY_TYPE_H_
#define UCS_MEMORY_MEMORY_TYPE_H_

#include <ucs/sys/compiler_def.h>

BEGIN_C_DECLS

typedef enum ucs_memory_type {
    UCS_MEMORY_TYPE_HOST,          /**< ordinary host memory */
    UCS_MEMORY_TYPE_CUDA,          /**< NVIDIA GPU memory */
    UCS_MEMORY_TYPE_CUDA_MANAGED,  /**< NVIDIA managed (unified) memory */
    UCS_MEMORY_TYPE_ROCM,          /**< AMD GPU memory */
    UCS_MEMORY_TYPE_ROCM_MANAGED,  /**< AMD managed memory */
    UCS_MEMORY_TYPE_RDMA,          /**< memory of an RDMA device */
    UCS_MEMORY_TYPE_ZE_HOST,       /**< oneAPI host memory */
    UCS_MEMORY_TYPE_ZE_DEVICE,     /**< oneAPI device memory */
    UCS_MEMORY_TYPE_ZE_MANAGED,    /**< oneAPI shared memory */
    UCS_MEMORY_TYPE_LAST,
    UCS_MEMORY_TYPE_UNKNOWN = UCS_MEMORY_TYPE_LAST
} ucs_memory_type_t;

/** Short names by memory type ("host", "cuda", ...), with
 *  ucs_memory_type_names[UCS_MEMORY_TYPE_UNKNOWN] = "unknown" */
extern const char *ucs_memory_type_names[];

END_C_DECLS

#endif
