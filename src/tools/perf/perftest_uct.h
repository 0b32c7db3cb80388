/*
 * The UCT objects of one side of ucx_perftest: the ib component, a worker,
 * the memory domain, the interface on dev:port, one endpoint, a registered
 * buffer, and the peer's memory (its address and unpacked remote key). The
 * destructor releases whatever was created, in reverse order.
 */
#ifndef UCX_PERFTEST_UCT_H_
#define UCX_PERFTEST_UCT_H_

#include "perftest.h"

#include <uct/api/uct.h>

#include <string>
#include <vector>

namespace perftest {

constexpr uint8_t AM_ID = 1;

class uct_side {
public:
    uct_side() = default;
    uct_side(const uct_side&) = delete;
    uct_side &operator=(const uct_side&) = delete;
    ~uct_side();

    /*
     * Open @a tl on @a dev ("mlx5_0:1") with a buffer of @a buf_size bytes
     * registered for remote access, and an endpoint. AMs of AM_ID count
     * into am_received.
     */
    [[nodiscard]] ucs_status_t open(const std::string &tl,
                                    const std::string &dev, size_t buf_size);

    /* "ADDR <device> <ep> <buffer address> <packed rkey>", hex */
    [[nodiscard]] ucs_status_t local_address(std::string *line_p) const;

    /* Connect the endpoint to the peer's ADDR line, take its memory */
    [[nodiscard]] ucs_status_t connect(const std::string &line);

    /* Complete everything posted, progressing; bounded by @a timeout_s */
    [[nodiscard]] ucs_status_t flush(unsigned timeout_s);

    unsigned progress()
    {
        return uct_worker_progress(worker);
    }

    /*
     * Find the ib component, which chooses its device table then, and warn
     * about the UCX_ variables that no component reads: before waiting for
     * a peer, so that a wrong setting fails or shows at once. Open does it
     * if it was not done.
     */
    [[nodiscard]] ucs_status_t prepare();

    /* Whether the emulated device is behind the glue table */
    bool emulated() const;

    std::string              tl, dev;
    uct_component_h          ib         = nullptr;
    uct_worker_h             worker     = nullptr;
    uct_md_h                 md         = nullptr;
    uct_iface_h              iface      = nullptr;
    uct_ep_h                 ep         = nullptr;
    uct_iface_attr_t         attr       = {};
    uint8_t                  *buf       = nullptr;
    size_t                   buf_size   = 0;
    uct_mem_h                memh       = nullptr;
    uint64_t                 remote_addr = 0;
    uct_rkey_bundle_t        rkey       = {};
    bool                     have_rkey  = false;

    /* what arrived and what failed; written by callbacks */
    volatile uint64_t        am_received = 0;
    ucs_status_t             ep_error    = UCS_OK;
};

} // namespace perftest

#endif
