#include <ucs/memory/memory_type.h>

/* In the order of ucs_memory_type_t */
const char *ucs_memory_type_names[] = {
    "host",
    "cuda",
    "cuda-managed",
    "rocm",
    "rocm-managed",
    "rdma",
    "ze-host",
    "ze-device",
    "ze-managed",
    "unknown"
};

static_assert(sizeof(ucs_memory_type_names) / sizeof(ucs_memory_type_names[0]) ==
              UCS_MEMORY_TYPE_LAST + 1, "a name for every memory type");
