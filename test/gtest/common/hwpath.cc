#include "hwpath.h"

#include <link.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace ucs {

namespace {

constexpr const char *PRELOAD_NAME = "libucx_mlx5_emu_preload.so";

/* The path of the loaded preload library, or "" */
std::string loaded_preload()
{
    std::string path;

    dl_iterate_phdr([](struct dl_phdr_info *info, size_t, void *arg) {
        const char *name = info->dlpi_name;

        if ((name != nullptr) && (strstr(name, PRELOAD_NAME) != nullptr)) {
            *static_cast<std::string*>(arg) = name;
            return 1;
        }
        return 0;
    }, &path);
    return path;
}

} // namespace

bool hwpath()
{
    static const bool on = [] {
        const char *glue = getenv("UCX_GTEST_GLUE");

        if ((glue == nullptr) || (strcmp(glue, "rdma-core") != 0)) {
            return false;
        }
        if (loaded_preload().empty()) {
            fprintf(stderr, "UCX_GTEST_GLUE=rdma-core needs the drop-in "
                    "front-end: LD_PRELOAD=<libdir>/%s\n", PRELOAD_NAME);
            abort();
        }
        return true;
    }();

    return on;
}

env_changes_t glue_env()
{
    if (!hwpath()) {
        return {{"UCX_IB_GLUE", "emulated"}};
    }
    return {{"UCX_IB_GLUE", ""}, {"LD_PRELOAD", loaded_preload()}};
}

} // namespace ucs
