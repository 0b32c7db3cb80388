/*
 * The hwpath run of the suite (docs/testing.md): the library on its
 * default glue, rdma-core's calls, as on a cluster, with the drop-in
 * front-end (LD_PRELOAD=libucx_mlx5_emu_preload.so) standing in for the
 * NIC. The preload's model is the one the test links (one library, loaded
 * once), so tests still set the topology and read the device's records;
 * what a test cannot have there, it skips with the reason.
 */
#ifndef UCS_GTEST_HWPATH_H_
#define UCS_GTEST_HWPATH_H_

#include "subprocess.h"

#include <string>

namespace ucs {

/** Whether this run is the hwpath one (UCX_GTEST_GLUE=rdma-core); asked
 *  for without the preload loaded, the run stops with the reason. */
bool hwpath();

/** What a process a test starts needs to run on the device as this one
 *  does: on the hwpath the preload and rdma-core's glue, otherwise the
 *  emulated glue. */
env_changes_t glue_env();

} // namespace ucs

/* Skip a test that needs what only the emulated glue table gives */
#define UCS_SKIP_ON_HWPATH(_why) \
    do { \
        if (ucs::hwpath()) { \
            GTEST_SKIP() << "hwpath: " << _why; \
        } \
    } while (0)

#endif
