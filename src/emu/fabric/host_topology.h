/*
 * The devices of a fabric host (host_topology.cc): what a host has, as its
 * shared record holds it, and the numbers that must be unique across the
 * fabric. Includes only model/ and fabric/.
 */
#ifndef UCT_IB_EMU_FABRIC_HOST_TOPOLOGY_H_
#define UCT_IB_EMU_FABRIC_HOST_TOPOLOGY_H_

#include <emu/fabric/shm_fabric.h>
#include <emu/model/model.h>


namespace uct_ib_emu {

/* The default devices of fabric host h (host 0: the in-process default
 * topology), a host record filled with them, and the topology a record
 * describes */
uct_ib_emu_topology_t host_default_topology(unsigned h);
void fill_host_devices(fab::host_rec *rec, unsigned h);
uct_ib_emu_topology_t host_topology(const fab::host_rec &rec);

/* Fabric-wide unique numbers of a device's QPs and memory keys (they carry
 * the host) */
uint32_t alloc_qpn(device *dev);
uint32_t alloc_mkey_index(device *dev);

} // namespace uct_ib_emu

#endif
