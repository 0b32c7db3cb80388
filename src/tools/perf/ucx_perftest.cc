/*
 * ucx_perftest: the data path benchmark of the UCT transports between two
 * processes, in the shape of UCX's tool (see perftest.h for its parts and
 * "ucx_perftest -h" for its use).
 *
 *   server:  ucx_perftest [-x tl] [-d dev:port]
 *   client:  ucx_perftest <server> -t am_lat [-s 8] [-n 100000] ...
 *
 * The control connection carries, in order: the client's HELLO (the test
 * and its parameters), both sides' ADDR (device, endpoint, buffer address,
 * packed rkey), READY both ways once the endpoints are connected, then the
 * test, heartbeats, and the DONE / BYE of its end. A side that cannot go on
 * says "ERROR <why>" to the other, which prints it.
 */
#include "perftest.h"
#include "perftest_channel.h"
#include "perftest_run.h"
#include "perftest_uct.h"
#include "bench_probe.h"

#include <cstdio>
#include <sstream>

namespace perftest {

namespace {

constexpr unsigned PROTOCOL_VERSION = 1;

/* A line from the peer; its ERROR becomes ours */
ucs_status_t expect_line(channel *ch, const options &opts, const char *tag,
                         std::string *line, uct_side *s)
{
    ucs_status_t status;

    status = ch->recv_line(line, opts.timeout_s, [s] {
        if ((s != nullptr) && (s->worker != nullptr)) {
            s->progress();
        }
    });
    if (status != UCS_OK) {
        return status;
    }
    if (line->compare(0, 6, "ERROR ") == 0) {
        error("the peer %s gave up: %s", ch->peer().c_str(),
              line->c_str() + 6);
        return UCS_ERR_CANCELED;
    }
    if (line->compare(0, strlen(tag), tag) != 0) {
        error("expected %s from the peer %s, got '%.60s'", tag,
              ch->peer().c_str(), line->c_str());
        return UCS_ERR_INVALID_PARAM;
    }
    return UCS_OK;
}

/* Tell the peer why this side stops (best effort) */
void tell_error(channel *ch, const std::string &why)
{
    (void)ch->send_line("ERROR " + why);
}

ucs_status_t server_hello(channel *ch, const options &opts,
                          test_params *params)
{
    std::string  line, tag;
    unsigned     version = 0;
    ucs_status_t status;

    status = expect_line(ch, opts, "HELLO ", &line, nullptr);
    if (status != UCS_OK) {
        return status;
    }
    std::istringstream words(line);
    if (!(words >> tag >> version >> params->test >> params->tl >>
          params->size >> params->iterations >> params->warmup) ||
        (version != PROTOCOL_VERSION) || (find_test(params->test) == nullptr)) {
        error("the client %s speaks another protocol: '%.60s'",
              ch->peer().c_str(), line.c_str());
        tell_error(ch, "the server speaks protocol " +
                   std::to_string(PROTOCOL_VERSION) + " of ucx_perftest");
        return UCS_ERR_INVALID_PARAM;
    }
    if (opts.tl_given && (params->tl != opts.tl)) {
        error("the client %s runs %s, this server %s", ch->peer().c_str(),
              params->tl.c_str(), opts.tl.c_str());
        tell_error(ch, "the server runs " + opts.tl + ", not " + params->tl);
        return UCS_ERR_INVALID_PARAM;
    }
    return UCS_OK;
}

void print_banner(const options &opts, const test_info &test,
                  const uct_side &s, const std::string &peer)
{
    const char rule[] = "+--------------------------------------------------"
                        "----------------------------------------+";

    printf("%s\n", rule);
    printf("| %-88s |\n", (std::string("Test:         ") + test.name + ": " +
                           test.summary).c_str());
    printf("| %-88s |\n", ("Transport:    " + s.tl + " on " + s.dev +
                           (s.emulated() ? " (emulated fabric)" : "") +
                           ", server " + peer).c_str());
    printf("| %-88s |\n", ("Message size: " + std::to_string(opts.size) +
                           " bytes, " + std::to_string(opts.iterations) +
                           " iterations after " +
                           std::to_string(opts.warmup) + " warm-up").c_str());
    fflush(stdout);
}

int run(const options &opts)
{
    const bool   client = !opts.server.empty();
    channel      ch;
    uct_side     s;
    test_params  params;
    std::string  line, addr;
    ucs_status_t status;

    status = s.prepare();
    if (status != UCS_OK) {
        return 1;
    }

    if (client) {
        params.test       = opts.test;
        params.tl         = opts.tl;
        params.size       = opts.size;
        params.iterations = opts.iterations;
        params.warmup     = opts.warmup;
        status = ch.connect_to(opts.server, opts.port, opts.timeout_s);
        if (status == UCS_OK) {
            std::ostringstream hello;
            hello << "HELLO " << PROTOCOL_VERSION << " " << params.test << " "
                  << params.tl << " " << params.size << " "
                  << params.iterations << " " << params.warmup;
            status = ch.send_line(hello.str());
        }
    } else {
        status = ch.accept_one(opts.port, opts.timeout_s);
        if (status == UCS_OK) {
            status = server_hello(&ch, opts, &params);
        }
    }
    if (status != UCS_OK) {
        return 1;
    }

    const test_info *test = find_test(params.test);
    run_setup       setup = {test, params, opts.timeout_s, opts.final_only,
                             opts.dump_dir, &s, &ch};

    status = s.open(params.tl, opts.dev, buffer_size(*test, params));
    if (status == UCS_OK) {
        status = check_capabilities(setup);
    }
    if (status != UCS_OK) {
        tell_error(&ch, "cannot run " + params.test + " on " + params.tl +
                   "/" + opts.dev + " there: " + ucs_status_string(status));
        return 1;
    }

    /* Addresses both ways, then READY both ways once connected */
    if (((status = s.local_address(&addr)) != UCS_OK) ||
        ((status = ch.send_line(addr)) != UCS_OK) ||
        ((status = expect_line(&ch, opts, "ADDR ", &line, &s)) != UCS_OK)) {
        return 1;
    }
    status = s.connect(line);
    if (status != UCS_OK) {
        tell_error(&ch, std::string("cannot connect to this side: ") +
                   ucs_status_string(status));
        return 1;
    }
    if (((status = ch.send_line("READY")) != UCS_OK) ||
        ((status = expect_line(&ch, opts, "READY", &line, &s)) != UCS_OK)) {
        return 1;
    }

    if (client) {
        std::string why_not;
        if (!bench::instr::start(opts.dump_dir, &why_not) &&
            bench::instr::under_valgrind()) {
            fprintf(stderr, "ucx_perftest: instructions not counted: %s\n",
                    why_not.c_str());
        }
        print_banner(opts, *test, s, opts.server);
        status = run_client(setup);
    } else {
        printf("Running %s for the client %s on %s/%s\n", params.test.c_str(),
               ch.peer().c_str(), s.tl.c_str(), s.dev.c_str());
        fflush(stdout);
        status = run_server(setup);
    }
    return (status == UCS_OK) ? 0 : 1;
}

} // namespace

} // namespace perftest

int main(int argc, char **argv)
{
    perftest::options opts;

    switch (perftest::parse_options(argc, argv, &opts)) {
    case 0:
        return perftest::run(opts);
    case 1:
        return 0;
    default:
        return 2;
    }
}
