/*
 * The cross-process emulated fabric (docs/architecture.md, section 8), with
 * real processes: each test makes a fabric of its own, starts fabric_peer
 * processes as its hosts (fork/exec, bounded in time, always reaped), and
 * checks what they report, what the fabric's registry shows, and that nothing
 * is left in shared memory afterwards.
 */
#include <common/hwpath.h>
#include <common/subprocess.h>
#include <emu/api/fabric_ctl.h>
#include <emu/api/fabric_test.h>

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <functional>
#include <map>
#include <string>
#include <tuple>
#include <vector>

namespace {

constexpr double PROCESS_LIMIT = 120; /* seconds, scaled like the tests */

/* A fabric_peer process */
typedef ucs::background_program host_process;

std::unique_ptr<host_process>
start_host(const std::vector<std::string> &args,
           const ucs::env_changes_t &env, int keep_fd)
{
    std::unique_ptr<host_process> p(new host_process());
    std::vector<std::string> argv = {GTEST_FABRIC_PEER};

    argv.insert(argv.end(), args.begin(), args.end());
    EXPECT_TRUE(p->start(argv, env, keep_fd));
    return p;
}

std::string shm_path(const std::string &fabric)
{
    return uct_ib_emu_fabric_shm_path(fabric);
}

class test_fabric_base : public testing::Test {
protected:
    void SetUp() override
    {
        static unsigned serial;

        m_fabric = "gtest-" + std::to_string(getpid()) + "-" +
                   std::to_string(serial++);
    }

    void TearDown() override
    {
        m_hosts.clear(); /* killed and reaped */
        for (int fd : m_fds) {
            close(fd);
        }
        m_fds.clear();
        if (uct_ib_emu_fabric_exists(m_fabric)) {
            uct_ib_emu_fabric_destroy(m_fabric, true);
        }
    }

    ucs::env_changes_t host_env(const std::string &host)
    {
        ucs::env_changes_t env = {{"UCX_MODULE_DIR", GTEST_UCT_MODULE_DIR},
                {"UCX_IB_EMU_FABRIC", m_fabric},
                {"UCX_IB_EMU_HOST", host},
                {"UCX_RC_TIMEOUT", "100ms"},
                {"UCX_WARN_UNUSED_ENV_VARS", "n"}};

        for (const auto &kv : ucs::glue_env()) {
            env.insert(kv);
        }
        for (const auto &kv : m_extra_env) {
            env[kv.first] = kv.second; /* a test's own settings win */
        }
        return env;
    }

    /* A server (host0) and a client (host1) connected by a socket pair */
    void start_pair(const std::string &tl, const std::string &dev,
                    const std::string &scenario, unsigned count)
    {
        int sv[2];

        ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
        m_fds.push_back(sv[0]);
        m_fds.push_back(sv[1]);
        for (int i = 0; i < 2; ++i) {
            std::vector<std::string> args = {
                "--role", i ? "client" : "server", "--fd",
                std::to_string(sv[i]), "--tl", tl, "--dev", dev,
                "--scenario", scenario, "--count", std::to_string(count),
                "--baseline", m_baseline ? "1" : "0",
                "--ah-cache", m_ah_cache};
            m_hosts.push_back(start_host(args,
                                         host_env(i ? "host1" : "host0"),
                                         sv[i]));
        }
        close(sv[0]);
        close(sv[1]);
        m_fds.clear();
    }

    host_process &server()
    {
        return *m_hosts[0];
    }

    host_process &client()
    {
        return *m_hosts[1];
    }

    void expect_exit_ok(host_process &p, const char *who)
    {
        EXPECT_EQ(0, p.wait_exit(PROCESS_LIMIT))
                << who << " stdout:\n" << p.output() << "stderr:\n"
                << p.errors();
    }

    /* The MAC that @a host's newest INIT2RTR programmed, and how many it
     * made, from the fabric's registry */
    std::string last_rmac(const std::string &host, size_t *count_p)
    {
        uct_ib_emu_fabric_info_t info;
        char mac[32];

        *count_p = 0;
        EXPECT_EQ(UCS_OK, uct_ib_emu_fabric_info(m_fabric, &info));
        for (const auto &h : info.hosts) {
            if ((h.name != host) || h.conns.empty()) {
                continue;
            }
            const auto &m = h.conns.back().rmac;
            snprintf(mac, sizeof(mac), "%02x:%02x:%02x:%02x:%02x:%02x", m[0],
                     m[1], m[2], m[3], m[4], m[5]);
            *count_p = h.conns.size();
            return mac;
        }
        return "";
    }

    void expect_nothing_left()
    {
        EXPECT_NE(0, access(shm_path(m_fabric).c_str(), F_OK))
                << shm_path(m_fabric) << " is left behind";
    }

    std::string                                m_fabric;
    bool                                       m_baseline = false;
    std::string                                m_ah_cache = "transient";
    ucs::env_changes_t                         m_extra_env;
    std::vector<std::unique_ptr<host_process>> m_hosts;
    std::vector<int>                           m_fds;
};


/* transport, device */
class test_fabric : public test_fabric_base,
                    public testing::WithParamInterface<
                            std::tuple<std::string, std::string>> {
protected:
    const std::string &tl() const
    {
        return std::get<0>(GetParam());
    }

    /* roce_v2 (the GID auto selects), roce_v1 (GID index 0) or ib */
    const std::string &link() const
    {
        return std::get<1>(GetParam());
    }

    std::string dev() const
    {
        return roce() ? "mlx5_0:1" : "mlx5_2:1";
    }

    bool roce() const
    {
        return link() != "ib";
    }

    void SetUp() override
    {
        test_fabric_base::SetUp();
        if (link() == "roce_v1") {
            m_extra_env["UCX_IB_GID_INDEX"] = "0";
        }
    }
};

TEST_P(test_fabric, two_hosts_exchange_ams_rma_and_atomics)
{
    start_pair(tl(), dev(), "traffic", 1000);
    expect_exit_ok(server(), "server");
    expect_exit_ok(client(), "client");
    /* on the hwpath each host calls rdma-core, which the preload serves */
    for (host_process *p : {&server(), &client()}) {
        EXPECT_EQ(ucs::hwpath() ? "rdma-core" : "emulated", p->result("glue"));
    }

    EXPECT_EQ(m_fabric + " host0", server().result("joined"));
    EXPECT_EQ(m_fabric + " host1", client().result("joined"));
    EXPECT_EQ("1000 in-order", client().result("am_received_by_server"));
    EXPECT_EQ("1000 in-order", client().result("am_received_by_client"));
    EXPECT_EQ("ok", client().result("put_get"));
    EXPECT_EQ("5", client().result("fetch_add"));
    EXPECT_EQ("15", client().result("cswap"));
    EXPECT_EQ("ok", client().result("atomics"));
    expect_nothing_left();
}

TEST_P(test_fabric, peer_mac_moved_mid_stream_then_reconnect)
{
    if (!roce()) {
        GTEST_SKIP() << "InfiniBand routes by LID: no MAC to move";
    }

    /* kept after the hosts leave, to read what their QPs carried */
    ASSERT_EQ(UCS_OK, uct_ib_emu_fabric_create(m_fabric, 2));
    start_pair(tl(), dev(), "mac_move", 300);
    expect_exit_ok(server(), "server");
    expect_exit_ok(client(), "client");

    EXPECT_EQ("host0", client().result("mac_moved"));
    EXPECT_EQ(ucs_status_string(UCS_ERR_ENDPOINT_TIMEOUT),
              client().result("live_endpoint"));
    /* 8 transmissions 134 ms apart, give or take scheduling */
    EXPECT_LT(std::stod("0" + client().result("failed_after_s")), 30.0);
    EXPECT_EQ("first try", client().result("reconnect"));
    /* the new endpoint's QP carries the MAC the server's port has now */
    EXPECT_EQ("02:c9:ee:00:00:01", client().result("new_ep_rmac"));
    EXPECT_EQ("100 in-order", client().result("am_received_by_server"));
    EXPECT_EQ("100 in-order", client().result("am_received_by_client"));

    /* the registry holds what each INIT2RTR programmed: the first QP and
     * the reconnect's */
    size_t conns;
    EXPECT_EQ("02:c9:ee:00:00:01", last_rmac("host1", &conns));
    EXPECT_EQ(2u, conns);
    EXPECT_EQ(UCS_OK, uct_ib_emu_fabric_destroy(m_fabric, false));
    expect_nothing_left();
}

/* host1 listens; the changes are made on the registry as ucx_emu makes
 * them. host1's two RoCE ports (mlx5_0, mlx5_1) are on eth0 with host0's,
 * so each changed address is told once per port */
TEST_P(test_fabric, neighbour_events_reach_the_listening_host)
{
    if (!roce() || (tl() != "rc_mlx5")) {
        GTEST_SKIP() << "neighbours are an Ethernet segment's";
    }
    UCS_SKIP_ON_HWPATH("the hosts' neighbour listener is this machine's "
                       "kernel socket, which hears nothing of the emulated "
                       "fabric's tables");

    ASSERT_EQ(UCS_OK, uct_ib_emu_fabric_create(m_fabric, 2));
    start_pair(tl(), dev(), "neigh_events", 0);
    expect_exit_ok(server(), "server");
    expect_exit_ok(client(), "client");

    /* host0's mlx5_0 has two addresses (IPv4, link-local) */
    EXPECT_EQ("4 new, 0 failed, 0 del, mac 02:c9:ee:00:00:02",
              client().result("mac_move"));
    EXPECT_EQ("2 new, 0 failed, 0 del, mac 02:c9:ee:00:00:03",
              client().result("neigh_set"));
    EXPECT_EQ("0 new, 0 failed, 0 del", client().result("neigh_set_elsewhere"))
            << "host0's table is not host1's";
    EXPECT_EQ("0 new, 4 failed, 0 del", client().result("peer_port_down"));
    EXPECT_EQ("4 new, 0 failed, 0 del, mac 02:c9:ee:00:00:03",
              client().result("peer_port_up"))
            << "the entries as host1's table has them (one stale)";
    /* host1's table: 2 hosts x 2 ports x 2 addresses, told on 2 ports */
    EXPECT_EQ("0 new, 0 failed, 16 del", client().result("own_port_down"));
    EXPECT_EQ(UCS_OK, uct_ib_emu_fabric_destroy(m_fabric, false));
    expect_nothing_left();
}

/* The move is another process's registry edit: the client's cache learns
 * it only from the neighbour event its host receives */
TEST_P(test_fabric, validated_cache_reconnects_to_the_moved_mac)
{
    if (!roce() || (tl() != "rc_mlx5")) {
        GTEST_SKIP() << "the AV cache serves rc_mlx5 DevX connects over RoCE";
    }

    m_ah_cache = "validated";
    ASSERT_EQ(UCS_OK, uct_ib_emu_fabric_create(m_fabric, 2));
    start_pair(tl(), dev(), "mac_move", 100);
    expect_exit_ok(server(), "server");
    expect_exit_ok(client(), "client");

    EXPECT_EQ("host0", client().result("mac_moved"));
    EXPECT_EQ("first try", client().result("reconnect"));
    EXPECT_EQ("02:c9:ee:00:00:01", client().result("new_ep_rmac"));
    /* two connects to one destination: the second one after the move,
     * whose event dropped the entry. On the hwpath the listener is this
     * machine's kernel, whose neighbour table has none of the fabric's
     * addresses: nothing is confirmed, so nothing is cached, and every
     * connect resolves through a transient AH */
    EXPECT_EQ(ucs::hwpath() ?
              "lookups 2 hits 0 ah_creates 2 invalidated 0 uncached 2" :
              "lookups 2 hits 0 ah_creates 2 invalidated 1 uncached 0",
              client().result("av_cache"));
    EXPECT_EQ(UCS_OK, uct_ib_emu_fabric_destroy(m_fabric, false));
    expect_nothing_left();
}

TEST_P(test_fabric, cached_ah_baseline_keeps_failing_after_a_mac_move)
{
    if (!roce() || (tl() != "rc_mlx5")) {
        GTEST_SKIP() << "the baseline connects rc_mlx5 DevX QPs over RoCE";
    }

    m_baseline = true;
    ASSERT_EQ(UCS_OK, uct_ib_emu_fabric_create(m_fabric, 2));
    start_pair(tl(), dev(), "mac_move", 100);
    expect_exit_ok(server(), "server");
    expect_exit_ok(client(), "client");

    EXPECT_EQ(ucs_status_string(UCS_ERR_ENDPOINT_TIMEOUT),
              client().result("live_endpoint"));
    /* every reconnect takes the AV cached before the move */
    EXPECT_EQ("02:c9:00:00:00:01", client().result("new_ep_rmac"));
    EXPECT_EQ("2/2", client().result("baseline_reconnects_failed"));
    size_t conns;
    EXPECT_EQ("02:c9:00:00:00:01", last_rmac("host1", &conns));
    EXPECT_EQ(3u, conns);
    EXPECT_EQ(UCS_OK, uct_ib_emu_fabric_destroy(m_fabric, false));
    expect_nothing_left();
}

TEST_P(test_fabric, peer_killed_survivor_fails_in_bounded_time)
{
    start_pair(tl(), dev(), "peer_killed", 100);
    ASSERT_NE("", client().wait_line("RESULT ready_to_kill", PROCESS_LIMIT))
            << client().output() << client().errors();

    server().kill_and_reap();
    client().say("GO");
    expect_exit_ok(client(), "client");

    EXPECT_EQ(ucs_status_string(UCS_ERR_ENDPOINT_TIMEOUT),
              client().result("live_endpoint"));
    EXPECT_LT(std::stod("0" + client().result("failed_after_s")), 30.0);
    /* the survivor was the last member: it removed the fabric */
    expect_nothing_left();
}

/*
 * UCX_RC_TIMEOUT=100ms is 4.096 us * 2^15 = 134 ms on the wire; with
 * UCX_RC_RETRY_COUNT 7 a request goes out 8 times, so a QP whose peer is
 * gone fails after 7 timeouts at the earliest and 8 at the latest, plus
 * the engine passes that notice it (a second here, for loaded machines).
 */
constexpr double wire_timeout_s = 4.096e-6 * (1 << 15);

void expect_fault_handled(host_process &client)
{
    /* every AM both ways arrived once, in order, and no error */
    EXPECT_EQ("nothing lost", client.result("short_fault"));
    EXPECT_EQ("0", client.result("short_fault_ep_errors"));

    EXPECT_EQ(ucs_status_string(UCS_ERR_ENDPOINT_TIMEOUT),
              client.result("long_fault_endpoint"));
    const double secs = std::stod("0" +
                                  client.result("long_fault_failed_after_s"));
    EXPECT_GT(secs, 7 * wire_timeout_s);
    EXPECT_LT(secs, 8 * wire_timeout_s + 1.0);
    EXPECT_EQ("1", client.result("long_fault_ep_errors"));
    EXPECT_EQ("first try", client.result("reconnect"));
}

TEST_P(test_fabric, large_zcopy_transfers_complete_without_a_resend)
{
    /* the default ack timeout: what a slow (sanitized) receiver takes to
     * process what the sockets buffer is not a lost packet */
    m_extra_env["UCX_RC_TIMEOUT"] = "1s";
    start_pair(tl(), dev(), "bulk", 0);
    expect_exit_ok(server(), "server");
    expect_exit_ok(client(), "client");

    /* 64 KiB, 1 MiB and 16 MiB puts, each read back by a get */
    EXPECT_EQ("ok", client().result("bulk_data"));
    EXPECT_EQ("0", client().result("bulk_retries"));
    EXPECT_EQ("0", client().result("bulk_drops"));
    const double sent   = std::stod("0" + client().result("bulk_packets"));
    const double needed = std::stod("0" +
                                    client().result("bulk_packets_needed"));
    EXPECT_GT(needed, 0);
    EXPECT_LE(sent, 1.1 * needed) << "packets sent beyond those needed";
    expect_nothing_left();
}

TEST_P(test_fabric, port_flap_within_the_retry_budget_loses_nothing)
{
    start_pair(tl(), dev(), "flap", 200);
    expect_exit_ok(server(), "server");
    expect_exit_ok(client(), "client");
    expect_fault_handled(client());
    expect_nothing_left();
}

TEST_P(test_fabric, isolation_within_the_retry_budget_loses_nothing)
{
    start_pair(tl(), dev(), "isolate", 200);
    expect_exit_ok(server(), "server");
    expect_exit_ok(client(), "client");
    expect_fault_handled(client());
    expect_nothing_left();
}

INSTANTIATE_TEST_SUITE_P(
        fabric, test_fabric,
        testing::Combine(testing::Values("rc_mlx5", "rc_verbs"),
                         testing::Values("roce_v2", "roce_v1", "ib")),
        [](const testing::TestParamInfo<test_fabric::ParamType> &info) {
            return std::get<0>(info.param) + "_" + std::get<1>(info.param);
        });


/* The fabric's segment damaged under two live members */
class test_fabric_damage : public test_fabric_base {
protected:
    /* Stream between two hosts, let @a damage hit the segment, and check
     * that each member says so once, fails its QPs, and leaves nothing */
    void expect_members_survive(const std::function<void(int fd)> &damage)
    {
        start_pair("rc_mlx5", "mlx5_0:1", "damage", 100);
        ASSERT_NE("", client().wait_line("RESULT ready_to_damage",
                                         PROCESS_LIMIT))
                << client().output() << client().errors();

        int fd = open(shm_path(m_fabric).c_str(), O_RDWR);
        ASSERT_GE(fd, 0) << shm_path(m_fabric);
        damage(fd);
        close(fd);
        client().say("GO");

        /* no SIGBUS, no hang: both exit, each with one line naming it */
        expect_exit_ok(client(), "client");
        expect_exit_ok(server(), "server");
        EXPECT_EQ(ucs_status_string(UCS_ERR_ENDPOINT_TIMEOUT),
                  client().result("live_endpoint"));
        EXPECT_LT(std::stod("0" + client().result("failed_after_s")), 30.0);
        for (host_process *p : {&server(), &client()}) {
            EXPECT_EQ(1u, count(p->errors(), "fabric " + m_fabric +
                                ": its segment " + shm_path(m_fabric) +
                                " is damaged (")) << p->errors();
        }
        /* the last member out removed what nobody can use */
        expect_nothing_left();
    }

    static unsigned count(const std::string &text, const std::string &what)
    {
        unsigned n = 0;

        for (size_t at = text.find(what); at != std::string::npos;
             at = text.find(what, at + 1)) {
            ++n;
        }
        return n;
    }
};

TEST_F(test_fabric_damage, truncated_segment)
{
    expect_members_survive([](int fd) { ASSERT_EQ(0, ftruncate(fd, 4096)); });
}

TEST_F(test_fabric_damage, scribbled_host_count)
{
    expect_members_survive([](int fd) {
        const uint32_t nhosts = 0x7fffffff; /* after magic, version, size */
        ASSERT_EQ(4, pwrite(fd, &nhosts, sizeof(nhosts), 12));
    });
}

TEST_F(test_fabric_damage, random_bytes_over_the_registry)
{
    expect_members_survive([](int fd) {
        std::vector<uint8_t> noise(65536);
        uint32_t x = 0x9e3779b9;

        for (uint8_t &b : noise) {
            x ^= x << 13; x ^= x >> 17; x ^= x << 5;
            b  = uint8_t(x);
        }
        ASSERT_EQ(ssize_t(noise.size()),
                  pwrite(fd, noise.data(), noise.size(), 0));
    });
}

/*
 * One message far larger than the link's window between two hosts, put and
 * read back: every byte checked, no resend, and neither side's memory grows
 * with the message (the requester makes a put's packets, and the responder
 * a read's answer, as the link takes them)
 */
class test_fabric_huge : public test_fabric_base {
protected:
    void put_and_get(unsigned mib)
    {
        /* what a window is worth: 64 frames of 60 KiB queued for a link,
         * with the allocator's slack */
        const uint64_t bound_kib = 32 * 1024;

        m_extra_env["UCX_RC_TIMEOUT"] = "1s";
#ifdef __SANITIZE_ADDRESS__
        /* ASan keeps what is freed in a quarantine of 256 MiB, which would
         * count as growth: the peers keep 16 MiB */
        const char *asan = getenv("ASAN_OPTIONS");
        m_extra_env["ASAN_OPTIONS"] = std::string((asan != nullptr) ? asan :
                                                  "") +
                                      ":quarantine_size_mb=16";
#endif
        start_pair("rc_mlx5", "mlx5_0:1", "huge", mib);
        expect_exit_ok(server(), "server");
        expect_exit_ok(client(), "client");

        EXPECT_EQ("ok", client().result("huge_data"));
        EXPECT_EQ("0", client().result("huge_retries"));
        EXPECT_EQ("0", client().result("huge_drops"));
        EXPECT_LE(std::stod("0" + client().result("huge_packets")),
                  1.1 * std::stod("0" + client().result("huge_packets_needed")))
                << "packets sent beyond those needed";
        EXPECT_LT(std::stoull("0" + client().result("huge_client_growth_kib")),
                  bound_kib) << "the requester's memory grew with a put";
        EXPECT_LT(std::stoull("0" + client().result("huge_server_growth_kib")),
                  bound_kib) << "the responder's memory grew with a read";
        EXPECT_NE("", client().result("huge_server_growth_kib"));
        expect_nothing_left();
    }
};

TEST_F(test_fabric_huge, a_256_mib_put_and_get_in_bounded_memory)
{
    put_and_get(256);
}

TEST_F(test_fabric_huge, a_1_gib_put_and_get_under_asan)
{
#ifndef __SANITIZE_ADDRESS__
    GTEST_SKIP() << "1 GiB each way is the asan leg's (--enable-asan)";
#endif
    put_and_get(1024);
}

class test_fabric_join : public test_fabric_base {
protected:
    /* Start one "list" process as @a host; its device count */
    std::string devices_seen(const std::string &host,
                             const ucs::env_changes_t &extra = {})
    {
        auto env = host_env(host);

        for (const auto &kv : extra) {
            env[kv.first] = kv.second;
        }
        m_hosts.push_back(start_host({"--role", "client", "--scenario",
                                      "list"}, env, -1));
        m_last = m_hosts.back().get();
        m_last->wait_exit(PROCESS_LIMIT);
        return m_last->result("devices");
    }

    /* How many lines of the last process's stderr mention @a text */
    unsigned errors_naming(const std::string &text) const
    {
        unsigned count = 0;
        size_t at      = 0;

        while ((at = m_last->errors().find(text, at)) != std::string::npos) {
            ++count;
            ++at;
        }
        return count;
    }

    host_process *m_last = nullptr;
};

TEST_F(test_fabric_join, a_host_sees_its_own_devices)
{
    EXPECT_EQ("4", devices_seen("host2"));
    expect_nothing_left();
}

TEST_F(test_fabric_join, unknown_host_is_one_clear_error_and_no_devices)
{
    EXPECT_EQ("0", devices_seen("nosuchhost"));
    EXPECT_EQ(1u, errors_naming("has no host 'nosuchhost'")) << m_last->errors();
    expect_nothing_left();
}

TEST_F(test_fabric_join, malformed_fabric_name_is_refused)
{
    EXPECT_EQ("0", devices_seen("auto", {{"UCX_IB_EMU_FABRIC", "bad/name"}}));
    EXPECT_EQ(1u, errors_naming("UCX_IB_EMU_FABRIC=bad/name")) << m_last->errors();
}

TEST_F(test_fabric_join, host_count_out_of_range_is_refused_by_name)
{
    for (const char *value : {"0", "17", "inf"}) {
        SCOPED_TRACE(value);
        EXPECT_EQ("0", devices_seen("auto", {{"UCX_IB_EMU_HOSTS", value}}));
        EXPECT_EQ(1u, errors_naming(std::string("UCX_IB_EMU_HOSTS=") + value +
                                    ": a fabric has 1 to 16 hosts, or "
                                    "\"auto\"")) << m_last->errors();
    }
    expect_nothing_left();

    EXPECT_EQ("4", devices_seen("auto", {{"UCX_IB_EMU_HOSTS", "auto"}}));
    EXPECT_EQ("4", devices_seen("auto", {{"UCX_IB_EMU_HOSTS", "16"}}));
}

TEST_F(test_fabric_join, full_fabric_is_refused)
{
    int held;

    ASSERT_EQ(UCS_OK, uct_ib_emu_fabric_create(m_fabric, 1));
    /* what a live member holds: host0's socket name */
    held = uct_ib_emu_fabric_test_hold_host(m_fabric, 0);
    ASSERT_GE(held, 0);

    EXPECT_EQ("0", devices_seen("auto"));
    EXPECT_EQ(1u, errors_naming("is full")) << m_last->errors();
    EXPECT_EQ("0", devices_seen("host0"));
    EXPECT_EQ(1u, errors_naming("host host0 is taken by another process"))
            << m_last->errors();
    close(held);

    /* the host is free again */
    EXPECT_EQ("4", devices_seen("auto"));
    EXPECT_EQ(UCS_OK, uct_ib_emu_fabric_destroy(m_fabric, false));
    expect_nothing_left();
}

TEST_F(test_fabric_join, another_version_is_refused_naming_it)
{
    uct_ib_emu_fabric_info_t info;

    ASSERT_EQ(UCS_OK, uct_ib_emu_fabric_test_plant_version(m_fabric, 99));

    EXPECT_EQ("0", devices_seen("auto"));
    EXPECT_EQ(1u, errors_naming("version 99")) << m_last->errors();
    EXPECT_NE(UCS_OK, uct_ib_emu_fabric_info(m_fabric, &info));
    EXPECT_EQ(UCS_OK, uct_ib_emu_fabric_destroy(m_fabric, false));
    expect_nothing_left();
}

TEST_F(test_fabric_join, another_topology_is_refused_naming_it)
{
    ASSERT_EQ(UCS_OK, uct_ib_emu_fabric_create(m_fabric, 2));

    EXPECT_EQ("0", devices_seen("auto", {{"UCX_IB_EMU_HOSTS", "3"}}));
    EXPECT_EQ(1u, errors_naming("fabric " + m_fabric +
                                " has 2 hosts, not the 3 asked for"))
            << m_last->errors();
    EXPECT_EQ("4", devices_seen("auto", {{"UCX_IB_EMU_HOSTS", "2"}}));
}

TEST_F(test_fabric_join, stale_fabric_is_recycled)
{
    uct_ib_emu_fabric_info_t info;

    /* a member that died without leaving: joined, its socket unbound */
    ASSERT_EQ(UCS_OK, uct_ib_emu_fabric_create(m_fabric, 2));
    ASSERT_EQ(UCS_OK, uct_ib_emu_fabric_test_dead_member(
                              m_fabric, "host0", {0x06, 0xc9, 0, 0, 0, 1}));

    EXPECT_EQ("4", devices_seen("host0"));
    ASSERT_EQ(UCS_OK, uct_ib_emu_fabric_info(m_fabric, &info));
    ASSERT_EQ(2u, info.hosts.size());
    /* started over: the default MAC, and host0 taken again once */
    EXPECT_EQ(0x02, info.hosts[0].ports[0].mac[0]);
    EXPECT_EQ(1u, info.hosts[0].incarnation);
    EXPECT_FALSE(info.hosts[0].alive);
}

TEST_F(test_fabric_join, two_fabrics_do_not_see_each_other)
{
    std::string other = m_fabric + "-b";
    /* host0 of both fabrics at the same time: two different hosts */
    start_pair("rc_mlx5", "mlx5_0:1", "traffic", 200);
    std::swap(m_fabric, other);
    start_pair("rc_mlx5", "mlx5_0:1", "traffic", 200);
    std::swap(m_fabric, other);

    for (auto &h : m_hosts) {
        expect_exit_ok(*h, "host");
    }
    EXPECT_EQ(m_fabric + " host0", m_hosts[0]->result("joined"));
    EXPECT_EQ(other + " host0", m_hosts[2]->result("joined"));
    EXPECT_EQ("200 in-order", m_hosts[1]->result("am_received_by_server"));
    EXPECT_EQ("200 in-order", m_hosts[3]->result("am_received_by_server"));
    expect_nothing_left();
    EXPECT_NE(0, access(shm_path(other).c_str(), F_OK));
}

} // namespace
