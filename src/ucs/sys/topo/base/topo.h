/*
 * System device identifiers: a small index standing for a PCI device (a NIC,
 * a GPU) in topology queries.
 */
#ifndef UCS_SYS_TOPO_BASE_TOPO_H_
#define UCS_SYS_TOPO_BASE_TOPO_H_

#include <ucs/sys/compiler_def.h>
#include <stdint.h>

BEGIN_C_DECLS

typedef uint8_t ucs_sys_device_t;

/** The device is not known (or the resource has none). */
#define UCS_SYS_DEVICE_ID_UNKNOWN UINT8_MAX

END_C_DECLS

#endif
