/*
 * fabric_peer's cached-AH baseline connect (fabric_peer_baseline.cc).
 */
#ifndef FABRIC_PEER_BASELINE_H_
#define FABRIC_PEER_BASELINE_H_

#include <uct/api/uct.h>

/* uct_ep_connect_to_ep() of an rc_mlx5 endpoint, with the address vector
 * of an AH cached per destination */
ucs_status_t fabric_peer_baseline_connect(uct_ep_h ep,
                                          const uct_device_addr_t *dev_addr,
                                          const uct_ep_addr_t *ep_addr);

/* Destroy the cached AHs (before the interfaces close) */
void fabric_peer_baseline_cleanup();

#endif
