/*
 * A node of the statistics tree, as an opaque type (statistics are not
 * collected by this library; the handle is accepted and ignored).
 */
#ifndef UCS_STATS_STATS_FWD_H_
#define UCS_STATS_STATS_FWD_H_

typedef struct ucs_stats_node ucs_stats_node_t;

#endif
