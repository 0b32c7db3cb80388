/*
 * ucx_emu show: the picture of a fabric a person reads at a glance.
 *
 *  - a summary table, one row per host: alive (with its pid) or dead,
 *    isolated, QPs alive, the packet counters and the drops;
 *  - per host, a table of its ports (state, MTU, LID or MAC, the RoCE
 *    versions it drops) with their GIDs (index, type, address), and its
 *    drops by reason (only the reasons that happened);
 *  - the neighbour tables: per host how many entries, and the stale ones,
 *    those whose MAC is not the current MAC of the port that owns the GID
 *    (with @a all_neigh every entry).
 */
#ifndef UCX_EMU_SHOW_H_
#define UCX_EMU_SHOW_H_

#include <emu/api/fabric_ctl.h>

#include <cstdio>
#include <string>


namespace ucx_emu {

void print_fabric(FILE *out, const uct_ib_emu_fabric_info_t &info,
                  bool all_neigh);

/* ucx_emu qps: the latest connections of each host (or of @a host), one
 * row per QP that reached RTR, oldest first: its device, DevX or verbs,
 * the peer QP, the destination its INIT2RTR programmed (GID and MAC on
 * Ethernet, LID on InfiniBand), the port that has it now, and whether that
 * MAC is still the port's ("STALE" when it moved since) */
void print_connections(FILE *out, const uct_ib_emu_fabric_info_t &info,
                       const std::string &host);

} // namespace ucx_emu

#endif
