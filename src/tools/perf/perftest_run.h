/*
 * The test loops of ucx_perftest: the client's, which measures, and the
 * server's, which answers (ping-pongs), receives (am_bw) or only keeps its
 * side alive (put, get, atomics). Both end with the same handshake on the
 * control channel: the client's "DONE", the server's "BYE <AMs received>
 * <first word of its buffer>", which the client checks.
 *
 * Every wait is bounded: an endpoint failure, the peer closing the control
 * connection, or no progress for the -T limit ends the run with an error.
 */
#ifndef UCX_PERFTEST_RUN_H_
#define UCX_PERFTEST_RUN_H_

#include "perftest.h"

namespace perftest {

class channel;
class uct_side;

struct run_setup {
    const test_info *test;
    test_params     params;
    unsigned        timeout_s;
    bool            final_only;
    std::string     dump_dir;
    uct_side        *uct;
    channel         *ch;
};

/* The buffer each side registers for @a params */
size_t buffer_size(const test_info &test, const test_params &params);

/* Whether @a s can run the test; the reason on stderr if not */
[[nodiscard]] ucs_status_t check_capabilities(const run_setup &setup);

/* The client: runs, prints the table (and the instructions under
 * callgrind) */
[[nodiscard]] ucs_status_t run_client(const run_setup &setup);

/* The server's half of the same test */
[[nodiscard]] ucs_status_t run_server(const run_setup &setup);

} // namespace perftest

#endif
