/*
 * ucx_perftest between two processes on the emulated fabric: a server and
 * a client (host name "localhost", a free TCP port), on a fabric of the
 * test's own, run a test with few iterations; the client's table must end
 * with a final line of sane numbers, and both must exit 0. A server that
 * dies mid-run ends the client with an error, in bounded time.
 */
#include <emu/api/fabric_ctl.h>

#include <common/hwpath.h>
#include <common/subprocess.h>

#include <gtest/gtest.h>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmath>
#include <memory>
#include <sstream>
#include <tuple>

namespace {

constexpr double PROCESS_LIMIT = 120; /* seconds, scaled like the tests */

/* A TCP port nobody listens on right now */
unsigned free_port()
{
    struct sockaddr_in addr = {};
    socklen_t          len  = sizeof(addr);
    int                fd   = socket(AF_INET, SOCK_STREAM, 0);
    unsigned           port = 0;

    addr.sin_family = AF_INET;
    if ((fd >= 0) &&
        (bind(fd, reinterpret_cast<struct sockaddr*>(&addr), sizeof(addr)) ==
         0) &&
        (getsockname(fd, reinterpret_cast<struct sockaddr*>(&addr), &len) ==
         0)) {
        port = ntohs(addr.sin_port);
    }
    if (fd >= 0) {
        close(fd);
    }
    return port;
}

/* The numbers of the table's "Final:" line */
struct final_line {
    bool     found = false;
    uint64_t iterations = 0;
    double   lat_typical = 0, lat_average = 0, lat_overall = 0;
    double   bw_average = 0, bw_overall = 0;
    double   rate_average = 0, rate_overall = 0;
};

final_line parse_final(const std::string &out)
{
    final_line f;
    size_t     at = out.rfind("\nFinal:");

    if (at != std::string::npos) {
        std::istringstream words(out.substr(at + 7));
        f.found = bool(words >> f.iterations >> f.lat_typical >>
                       f.lat_average >> f.lat_overall >> f.bw_average >>
                       f.bw_overall >> f.rate_average >> f.rate_overall);
    }
    return f;
}

class test_perftest_base : public testing::Test {
protected:
    void SetUp() override
    {
        static unsigned serial;

        m_fabric = "gtest-perf-" + std::to_string(getpid()) + "-" +
                   std::to_string(serial++);
        m_port   = free_port();
        ASSERT_NE(0u, m_port);
    }

    void TearDown() override
    {
        m_server.reset();
        m_client.reset();
        if (uct_ib_emu_fabric_exists(m_fabric)) {
            uct_ib_emu_fabric_destroy(m_fabric, true);
        }
    }

    ucs::env_changes_t env() const
    {
        const char         *ld = getenv("LD_LIBRARY_PATH");
        ucs::env_changes_t env = {
                {"UCX_MODULE_DIR", GTEST_UCT_MODULE_DIR},
                {"LD_LIBRARY_PATH", std::string(GTEST_EMU_LIB_DIR) +
                                    ((ld != nullptr) ? std::string(":") + ld :
                                                       std::string())},
                {"UCX_IB_EMU_FABRIC", m_fabric},
                {"UCX_RC_TIMEOUT", "100ms"},
                {"UCX_WARN_UNUSED_ENV_VARS", "n"}};

        for (const auto &kv : ucs::glue_env()) {
            env.insert(kv);
        }
        return env;
    }

    void start(const std::string &tl, const std::vector<std::string> &args)
    {
        std::vector<std::string> server = {GTEST_UCX_PERFTEST, "-p",
                                           std::to_string(m_port), "-x", tl,
                                           "-T", "30"};
        std::vector<std::string> client = {GTEST_UCX_PERFTEST, "localhost",
                                           "-p", std::to_string(m_port),
                                           "-x", tl, "-T", "30"};

        client.insert(client.end(), args.begin(), args.end());
        m_server.reset(new ucs::background_program());
        ASSERT_TRUE(m_server->start(server, env()));
        ASSERT_NE("", m_server->wait_line("Waiting for connection",
                                          PROCESS_LIMIT))
                << m_server->output() << m_server->errors();
        m_client.reset(new ucs::background_program());
        ASSERT_TRUE(m_client->start(client, env()));
    }

    std::string                             m_fabric;
    unsigned                                m_port = 0;
    std::unique_ptr<ucs::background_program> m_server, m_client;
};


/* test, transport */
class test_perftest : public test_perftest_base,
                      public testing::WithParamInterface<
                              std::tuple<std::string, std::string>> {
};

TEST_P(test_perftest, final_line_has_sane_numbers)
{
    const std::string &test = std::get<0>(GetParam());
    const std::string &tl   = std::get<1>(GetParam());

    start(tl, {"-t", test, "-s", "8", "-n", "300", "-w", "20"});
    EXPECT_EQ(0, m_client->wait_exit(PROCESS_LIMIT)) << "client stdout:\n"
                                        << m_client->output() << "stderr:\n"
                                        << m_client->errors();
    EXPECT_EQ(0, m_server->wait_exit(PROCESS_LIMIT)) << "server stdout:\n"
                                        << m_server->output() << "stderr:\n"
                                        << m_server->errors();

    const std::string &out = m_client->output();
    EXPECT_NE(std::string::npos, out.find("| # iterations | typical | "
                                          "average | overall |"))
            << out;
    final_line f = parse_final(out);
    ASSERT_TRUE(f.found) << out;
    EXPECT_EQ(300u, f.iterations);
    for (double v : {f.lat_typical, f.lat_average, f.lat_overall,
                     f.bw_average, f.bw_overall, f.rate_average,
                     f.rate_overall}) {
        EXPECT_TRUE(std::isfinite(v)) << out;
        EXPECT_GE(v, 0.0) << out;
    }
    EXPECT_GT(f.lat_overall, 0.0) << out;
    EXPECT_GT(f.rate_overall, 0.0) << out;
    /* 8 bytes a message: bandwidth and rate agree */
    EXPECT_NEAR(f.bw_overall, f.rate_overall * 8 / (1024.0 * 1024.0),
                0.01 + f.bw_overall * 0.01) << out;
    /* ping-pongs report half round trips: rate = 1 / (2 latency) */
    const double factor = (test == "am_lat") || (test == "put_lat") ? 2.0 : 1.0;
    EXPECT_NEAR(1e6 / (factor * f.lat_overall), f.rate_overall,
                f.rate_overall * 0.02) << out;
    EXPECT_TRUE(m_client->errors().empty()) << m_client->errors();
}

INSTANTIATE_TEST_SUITE_P(
        perftest, test_perftest,
        testing::Combine(testing::Values("am_lat", "put_bw", "get_bw",
                                         "add_lat"),
                         testing::Values("rc_mlx5", "rc_verbs")),
        [](const testing::TestParamInfo<test_perftest::ParamType> &info) {
            return std::get<0>(info.param) + "_" + std::get<1>(info.param);
        });


class test_perftest_cli : public test_perftest_base {
};

TEST_F(test_perftest_cli, a_vanished_server_ends_the_client_with_an_error)
{
    start("rc_mlx5", {"-t", "am_bw", "-n", "100000000", "-w", "0"});
    ASSERT_NE("", m_client->wait_line("| # iterations", PROCESS_LIMIT))
            << m_client->output() << m_client->errors();

    using steady      = std::chrono::steady_clock;
    const auto killed = steady::now();
    m_server->kill_and_reap();
    EXPECT_EQ(1, m_client->wait_exit(PROCESS_LIMIT)) << m_client->output();
    EXPECT_LT(std::chrono::duration<double>(steady::now() - killed).count(),
              60.0);
    EXPECT_NE(std::string::npos, m_client->errors().find("ucx_perftest: "))
            << m_client->errors();
}

TEST_F(test_perftest_cli, usage_and_bad_options)
{
    ucs::run_result help = ucs::run_program({GTEST_UCX_PERFTEST, "-h"},
                                            PROCESS_LIMIT, env());
    EXPECT_EQ(0, help.status);
    for (const char *section : {"NAME", "SYNOPSIS", "DESCRIPTION", "TESTS",
                                "OPTIONS", "OUTPUT", "EXIT STATUS"}) {
        EXPECT_NE(std::string::npos, ("\n" + help.out).find(
                          std::string("\n") + section + "\n"))
                << section << " in:\n" << help.out;
    }

    ucs::run_result bad = ucs::run_program({GTEST_UCX_PERFTEST, "localhost",
                                            "-t", "nosuch"},
                                           PROCESS_LIMIT, env());
    EXPECT_EQ(2, bad.status);
    EXPECT_NE(std::string::npos, bad.err.find("-t nosuch: no such test"))
            << bad.err;

    /* nobody listens: the client gives up after -T */
    ucs::run_result alone = ucs::run_program(
            {GTEST_UCX_PERFTEST, "localhost", "-p", std::to_string(m_port),
             "-t", "am_lat", "-T", "1"}, PROCESS_LIMIT, env());
    EXPECT_EQ(1, alone.status);
    EXPECT_NE(std::string::npos, alone.err.find("connect(localhost:" +
                                                std::to_string(m_port) +
                                                ") failed"))
            << alone.err;
}

} // namespace
