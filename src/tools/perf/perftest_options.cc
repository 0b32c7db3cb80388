/*
 * ucx_perftest's command line: the options (UCX's letters), the tests, and
 * the usage text.
 */
#include "perftest.h"

#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace perftest {

namespace {

const test_info tests[] = {
    {"am_lat",  test_kind::am_lat,  true,  true,
     "active message latency (ping-pong, half round trip)"},
    {"am_bw",   test_kind::am_bw,   false, true,
     "active message bandwidth and message rate (one way)"},
    {"put_lat", test_kind::put_lat, true,  false,
     "put latency (ping-pong on memory, half round trip)"},
    {"put_bw",  test_kind::put_bw,  false, false,
     "put bandwidth and message rate (one way)"},
    {"get_bw",  test_kind::get_bw,  false, false,
     "get bandwidth and message rate (reads of the server's memory)"},
    {"add_lat", test_kind::add_lat, false, false,
     "atomic fetch-and-add latency (the whole round trip)"},
    {"add_bw",  test_kind::add_bw,  false, false,
     "atomic add message rate (posted, one way)"},
};

/* An unsigned number in [min, max], or false with the reason on stderr */
bool parse_number(char opt, const char *arg, unsigned long long min,
                  unsigned long long max, unsigned long long *value_p)
{
    char               *end;
    unsigned long long value;

    errno = 0;
    value = strtoull(arg, &end, 0);
    if ((errno != 0) || (end == arg) || (*end != '\0') || (arg[0] == '-') ||
        (value < min) || (value > max)) {
        error("-%c %s: not a number from %llu to %llu", opt, arg, min, max);
        return false;
    }
    *value_p = value;
    return true;
}

} // namespace

const test_info *find_test(const std::string &name)
{
    for (const auto &t : tests) {
        if (name == t.name) {
            return &t;
        }
    }
    return nullptr;
}

const test_info *all_tests(size_t *count)
{
    *count = sizeof(tests) / sizeof(tests[0]);
    return tests;
}

void error(const char *fmt, ...)
{
    va_list ap;
    int     saved = errno; /* %m still names the failed call */

    fprintf(stderr, "ucx_perftest: ");
    va_start(ap, fmt);
    errno = saved;
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n");
}

void print_usage(FILE *stream)
{
    size_t count;
    const test_info *t = all_tests(&count);

    fprintf(stream,
"NAME\n"
"    ucx_perftest - data path benchmark of the UCT transports\n"
"\n"
"SYNOPSIS\n"
"    ucx_perftest [-x tl] [-d dev:port] [-p port] [-T seconds]\n"
"    ucx_perftest server-host -t test [-x tl] [-d dev:port] [-p port]\n"
"                 [-s size] [-n iterations] [-w warmup] [-f] [-T seconds]\n"
"\n"
"DESCRIPTION\n"
"    Measures one UCT operation between two processes. Started without a\n"
"    host name, ucx_perftest is the server: it listens on a TCP port and\n"
"    runs the test the client asks for. Started with the server's host\n"
"    name, it is the client: it connects, sends the test's parameters, and\n"
"    both processes exchange their device, endpoint and memory addresses\n"
"    (with the packed remote key) over the TCP connection, connect their\n"
"    endpoints and run the test. The client prints the results.\n"
"\n"
"    Latency tests (*_lat) that are ping-pongs report half the round trip;\n"
"    add_lat reports the whole round trip of a fetch-and-add. Bandwidth\n"
"    tests (*_bw) stream operations one way, waiting by progress when the\n"
"    transport has no resources, and end with a flush.\n"
"\n"
"    On the emulated device (UCX_IB_GLUE=emulated) two processes join the\n"
"    same emulated fabric (UCX_IB_EMU_FABRIC) as two hosts; there a wait\n"
"    that finds nothing 16 times in a row yields the CPU to the emulator's\n"
"    threads (the NICs share the cores with the programs). Run under\n"
"      valgrind --tool=callgrind --collect-atstart=no ucx_perftest ...\n"
"    from the directory callgrind writes its dumps to, it also prints the\n"
"    library instructions per operation (the library's objects only).\n"
"\n"
"TESTS\n");
    for (size_t i = 0; i < count; ++i) {
        fprintf(stream, "    %-9s%s\n", t[i].name, t[i].summary);
    }
    fprintf(stream,
"\n"
"OPTIONS\n"
"    -t test        the test to run (client; see TESTS)\n"
"    -x tl          transport: rc_mlx5 (default) or rc_verbs; a server\n"
"                   given no -x takes the client's\n"
"    -d dev:port    the local device and port (default mlx5_0:1)\n"
"    -p port        the server's TCP port (default %u)\n"
"    -s size        message size in bytes (default 8)\n"
"    -n iterations  measured iterations (default 100000)\n"
"    -w warmup      iterations before the measurement (default 1000)\n"
"    -f             print only the final line of the table\n"
"    -T seconds     the longest wait for the peer: to connect, and for a\n"
"                   sign of life during the test (default 60)\n"
"    -C directory   where callgrind writes its dumps (default .)\n"
"    -h             this text\n"
"\n"
"OUTPUT\n"
"    A table with a line every second and a final line: the iterations\n"
"    done; the latency in microseconds, typical (the median of the last\n"
"    interval), average (of the last interval) and overall (since the\n"
"    start); the bandwidth in MB/s (2^20 bytes) and the message rate in\n"
"    messages per second, average and overall.\n"
"\n"
"EXIT STATUS\n"
"    0 when the test ran to its end on both sides; 1 on any failure (the\n"
"    reason on stderr, also when the peer vanished or went silent for the\n"
"    -T limit); 2 on a bad command line.\n"
"\n"
"EXAMPLES\n"
"    UCX_IB_GLUE=emulated ucx_perftest &\n"
"    UCX_IB_GLUE=emulated ucx_perftest localhost -t am_bw -s 8 -n 1000000\n",
            DEFAULT_PORT);
}

int parse_options(int argc, char **argv, options *opts)
{
    unsigned long long value;
    int                c;

    opterr = 0;
    while ((c = getopt(argc, argv, ":t:x:d:p:s:n:w:fT:C:h")) != -1) {
        switch (c) {
        case 't':
            if (find_test(optarg) == nullptr) {
                error("-t %s: no such test (ucx_perftest -h lists them)",
                      optarg);
                return -1;
            }
            opts->test       = optarg;
            opts->test_given = true;
            break;
        case 'x':
            opts->tl       = optarg;
            opts->tl_given = true;
            break;
        case 'd':
            if (strchr(optarg, ':') == nullptr) {
                error("-d %s: expected dev:port, e.g. mlx5_0:1", optarg);
                return -1;
            }
            opts->dev = optarg;
            break;
        case 'p':
            if (!parse_number('p', optarg, 1, 65535, &value)) {
                return -1;
            }
            opts->port = uint16_t(value);
            break;
        case 's':
            if (!parse_number('s', optarg, 1, 1ull << 30, &value)) {
                return -1;
            }
            opts->size = size_t(value);
            break;
        case 'n':
            if (!parse_number('n', optarg, 1, 1ull << 40, &value)) {
                return -1;
            }
            opts->iterations = value;
            break;
        case 'w':
            if (!parse_number('w', optarg, 0, 1ull << 40, &value)) {
                return -1;
            }
            opts->warmup = value;
            break;
        case 'f':
            opts->final_only = true;
            break;
        case 'T':
            if (!parse_number('T', optarg, 1, 86400, &value)) {
                return -1;
            }
            opts->timeout_s = unsigned(value);
            break;
        case 'C':
            opts->dump_dir = optarg;
            break;
        case 'h':
            print_usage(stdout);
            return 1;
        case ':':
            error("-%c needs a value (ucx_perftest -h)", optopt);
            return -1;
        default:
            error("-%c: unknown option (ucx_perftest -h)", optopt);
            return -1;
        }
    }

    if (optind + 1 < argc) {
        error("one server host name at most, got '%s' and '%s'",
              argv[optind], argv[optind + 1]);
        return -1;
    }
    if (optind < argc) {
        opts->server = argv[optind];
        if (!opts->test_given) {
            error("the client needs a test: -t am_lat, am_bw, put_lat, "
                  "put_bw, get_bw, add_lat or add_bw");
            return -1;
        }
    }
    return 0;
}

} // namespace perftest
