/*
 * ucx_perftest: the data path benchmark of the UCT layer between two
 * processes (a server and a client given the server's host name), in the
 * shape of UCX's tool. This header is what its parts share: the options,
 * the table of tests, and the error printer.
 *
 *   perftest_options.cc  the command line and the usage text
 *   perftest_channel.cc  the TCP control channel (addresses, sync, end)
 *   perftest_uct.cc      the UCT objects of one side and their addresses
 *   perftest_report.cc   the result table and its progress lines
 *   perftest_run.cc      the test loops
 *   ucx_perftest.cc      main: the two roles put together
 */
#ifndef UCX_PERFTEST_H_
#define UCX_PERFTEST_H_

#include <ucs/type/status.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace perftest {

enum class test_kind {
    am_lat,
    am_bw,
    put_lat,
    put_bw,
    get_bw,
    add_lat,
    add_bw
};

/* One test: what it measures and who does what */
struct test_info {
    const char *name;
    test_kind  kind;
    bool       pingpong;   /* both sides send; half round trips reported */
    bool       am;         /* the server receives active messages */
    const char *summary;
};

/* The test called @a name, or NULL */
const test_info *find_test(const std::string &name);

/* Every test, @a count of them */
const test_info *all_tests(size_t *count);

constexpr uint16_t DEFAULT_PORT = 13337;

struct options {
    std::string server;                 /* empty: this process is the server */
    uint16_t    port        = DEFAULT_PORT;
    std::string test        = "am_lat";
    bool        test_given  = false;
    std::string tl          = "rc_mlx5";
    bool        tl_given    = false;
    std::string dev         = "mlx5_0:1";
    size_t      size        = 8;
    uint64_t    iterations  = 100000;
    uint64_t    warmup      = 1000;
    bool        final_only  = false;    /* no progress lines */
    unsigned    timeout_s   = 60;       /* the longest wait for the peer */
    std::string dump_dir    = ".";      /* where callgrind writes its dumps */
};

/* What the client tells the server: the test both of them run */
struct test_params {
    std::string test;
    std::string tl;
    size_t      size       = 0;
    uint64_t    iterations = 0;
    uint64_t    warmup     = 0;
};

/*
 * Parse the command line. 0: run; 1: done, exit 0 (-h printed the usage);
 * -1: a bad option, reported on stderr.
 */
int parse_options(int argc, char **argv, options *opts);

/* The manual page style usage text */
void print_usage(FILE *stream);

/* "ucx_perftest: <message>" on stderr, once per failure, at the place that
 * knows what went wrong */
void error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

} // namespace perftest

#endif
