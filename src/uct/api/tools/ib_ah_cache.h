/*
 * The library's declared interface for its own tools and tests
 * (ucx_connect_bench, the AH cache tests), not a public API and not
 * installed: what the validated AV cache of an IB memory domain
 * (UCX_IB_AH_CACHE=validated) has done. Implemented in uct/ib/base/ib_md.cc;
 * a tool using it links libuct_ib.
 */
#ifndef UCT_API_TOOLS_IB_AH_CACHE_H_
#define UCT_API_TOOLS_IB_AH_CACHE_H_

#include <uct/api/uct.h>

#include <stddef.h>
#include <stdint.h>

BEGIN_C_DECLS

typedef struct uct_ib_av_cache_stats {
    uint64_t lookups;      /* connects that asked the cache */
    uint64_t hits;
    uint64_t ah_creates;   /* transient AHs made for misses */
    uint64_t uncached;     /* misses not cached: neighbour not confirmed,
                              cache full, or fallen back */
    uint64_t invalidated;  /* entries dropped by neighbour events */
    uint64_t events;       /* neighbour messages read */
    size_t   entries;      /* cached now */
    int      transient;    /* fell back: every lookup makes an AH */
} uct_ib_av_cache_stats_t;

/** What @a md's cache has done; UCS_ERR_UNSUPPORTED if it has none (not an
 *  IB md, AH_CACHE=transient, or no RoCE port). */
ucs_status_t uct_ib_md_av_cache_stats(uct_md_h md,
                                      uct_ib_av_cache_stats_t *stats);

END_C_DECLS

#endif
