/*
 * ucx_emu, the control tool of the cross-process fabric, run as a program
 * on a fabric of the test's own ("gtest-tool-<pid>"): what `show` prints
 * after each operation, the errors of bad input (one line on stderr, exit
 * status 1 or 2), and that `destroy` leaves nothing in /dev/shm. A host
 * taken by a live process (fabric_peer) shows alive with its pid.
 */
#include "common/subprocess.h"
#include "common/test.h"

#include <emu/api/fabric_test.h>

#include <sys/socket.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace {

constexpr double TOOL_TIMEOUT = 20; /* seconds, before scaling */

/* The cells of a table row: columns are two or more spaces apart, a cell
 * has at most single spaces */
std::vector<std::string> cells(const std::string &row)
{
    std::vector<std::string> out;
    std::regex sep("  +");
    std::string trimmed = std::regex_replace(row, std::regex("^ +"), "");

    for (std::sregex_token_iterator it(trimmed.begin(), trimmed.end(), sep, -1),
         end; it != end; ++it) {
        out.push_back(*it);
    }
    return out;
}

std::vector<std::string> lines(const std::string &text)
{
    std::vector<std::string> out;
    std::istringstream in(text);
    std::string line;

    while (std::getline(in, line)) {
        out.push_back(line);
    }
    return out;
}

} // namespace


class test_ucx_emu_tool : public ucs::test_base {
protected:
    void init() override
    {
#ifndef UCX_EMU_TOOL
        UCS_TEST_SKIP_R("UCX_EMU_TOOL is not defined by the build");
#else
        ASSERT_EQ(0, access(UCX_EMU_TOOL, X_OK))
                << UCX_EMU_TOOL << " is not built";
#endif
        m_fabric = "gtest-tool-" + std::to_string(getpid());
        m_shm    = "/dev/shm/ucx-emu." + std::to_string(getuid()) + "." +
                   m_fabric;
    }

    void cleanup() override
    {
        m_peer.kill_and_reap();
        if (shm_exists()) {
            tool({"destroy", "--force"});
        }
        /* whatever the tool did, nothing stays behind */
        if (shm_exists()) {
            ADD_FAILURE() << m_shm << " left behind";
            unlink(m_shm.c_str());
        }
    }

    ucs::run_result tool(std::vector<std::string> args,
                         const ucs::env_changes_t &env = {},
                         bool with_fabric = true)
    {
        std::vector<std::string> argv = {tool_path()};

        if (with_fabric) {
            argv.insert(argv.end(), {"-f", m_fabric});
        }
        argv.insert(argv.end(), args.begin(), args.end());

        ucs::run_result res = ucs::run_program(argv, TOOL_TIMEOUT, env);
        EXPECT_FALSE(res.timed_out) << "ucx_emu timed out: " << res.out
                                    << res.err;
        return res;
    }

    /* A command that must succeed, quietly on stderr; its stdout */
    std::string ok(std::vector<std::string> args)
    {
        ucs::run_result res = tool(args);

        EXPECT_EQ(0, res.status) << "ucx_emu " << join(args) << ": "
                                 << res.err;
        EXPECT_EQ("", res.err) << "ucx_emu " << join(args);
        return res.out;
    }

    /* A command that must fail with one error line containing @a text */
    void fails(std::vector<std::string> args, int status,
               const std::string &text)
    {
        ucs::run_result res = tool(args);

        EXPECT_EQ(status, res.status) << "ucx_emu " << join(args) << ": "
                                      << res.out << res.err;
        EXPECT_EQ("", res.out) << "ucx_emu " << join(args);
        EXPECT_EQ(1u, lines(res.err).size()) << res.err;
        EXPECT_EQ(0u, res.err.rfind("ucx_emu: ", 0)) << res.err;
        EXPECT_NE(std::string::npos, res.err.find(text))
                << "ucx_emu " << join(args) << ": " << res.err;
    }

    std::string show()
    {
        return ok({"show"});
    }

    /* The cells of the row of the summary table for @a host */
    static std::vector<std::string> summary_row(const std::string &show,
                                                const std::string &host)
    {
        for (const auto &line : lines(show)) {
            if (line.rfind(host + "  ", 0) == 0) {
                return cells(line);
            }
        }
        return {};
    }

    /* The block of a host: its title line to the next blank line */
    static std::string host_block(const std::string &show,
                                  const std::string &host)
    {
        size_t start = show.find("\n" + host + ": ");
        size_t end   = show.find("\n\n", start + 1);

        return (start == std::string::npos) ? "" :
               show.substr(start + 1, end - start - 1);
    }

    /* The cells of the first row of a port in a host's block */
    static std::vector<std::string> port_row(const std::string &show,
                                             const std::string &host,
                                             const std::string &port)
    {
        for (const auto &line : lines(host_block(show, host))) {
            if (line.rfind("  " + port + "  ", 0) == 0) {
                return cells(line);
            }
        }
        return {};
    }

    static std::string neigh_section(const std::string &show)
    {
        size_t start = show.find("\nneighbour tables");

        return (start == std::string::npos) ? "" : show.substr(start);
    }

    /* The cells of a host's row in the neighbour section: host, entries,
     * stale */
    static std::vector<std::string> neigh_row(const std::string &neigh,
                                              const std::string &host)
    {
        for (const auto &line : lines(neigh)) {
            if (line.rfind("  " + host + "  ", 0) == 0) {
                return cells(line);
            }
        }
        return {};
    }

    /* The cells of the first listed neighbour entry of @a gid: GID,
     * segment, MAC, flag */
    static std::vector<std::string> neigh_entry(const std::string &neigh,
                                                const std::string &gid)
    {
        for (const auto &line : lines(neigh)) {
            auto c = cells(line);
            if (!c.empty() && (c[0] == gid)) {
                return c;
            }
        }
        return {};
    }

    bool shm_exists() const
    {
        struct stat st;

        return stat(m_shm.c_str(), &st) == 0;
    }

    static std::string tool_path()
    {
#ifdef UCX_EMU_TOOL
        return UCX_EMU_TOOL;
#else
        return "";
#endif
    }

    static std::string join(const std::vector<std::string> &args)
    {
        std::string s;

        for (const auto &a : args) {
            s += (s.empty() ? "" : " ") + a;
        }
        return s;
    }

    std::string              m_fabric;
    std::string              m_shm;
    ucs::background_program  m_peer;
};

/* Port row columns */
enum { COL_PORT, COL_LINK, COL_STATE, COL_MTU, COL_ADDR, COL_SEGMENT,
       COL_DROP, COL_GID_INDEX, COL_GID_TYPE, COL_GID };


TEST_F(test_ucx_emu_tool, help_and_usage_errors)
{
    ucs::run_result res = tool({"-h"}, {}, false);

    EXPECT_EQ(0, res.status);
    EXPECT_EQ("", res.err);
    for (const char *word : {"SYNOPSIS", "create [-n HOSTS]", "show",
                             "destroy [--force]", "mac HOST DEV[:PORT] MAC",
                             "[--force]",
                             "roce HOST", "port HOST", "neigh HOST GID MAC",
                             "isolate HOST on|off", "EXIT STATUS"}) {
        EXPECT_NE(std::string::npos, res.out.find(word)) << word;
    }

    fails({"frobnicate"}, 2, "unknown command 'frobnicate'");
    fails({}, 2, "no command");
    fails({"create", "-n", "17"}, 2, "'17' is not a number in 1..16");
    fails({"show", "extra"}, 2, "too many arguments");
    fails({"mac", "host0", "mlx5_0"}, 2, "missing arguments");
    fails({"mac", "host0", "mlx5_0", "02:00:00:00:00"}, 2,
          "'02:00:00:00:00' is not a MAC address");
    fails({"mac", "host0", "mlx5_0", "02:00:00:00:00:0g"}, 2,
          "is not a MAC address");
    fails({"mac", "host0", "mlx5_0:x", "02:00:00:00:00:01"}, 2,
          "'mlx5_0:x' is not a port");
    fails({"mac", "host0", "mlx5_0", "02:00:00:00:00:01", "--arp"}, 2,
          "unknown option --arp");
    fails({"roce", "host0", "mlx5_0", "v3", "drop"}, 2, "not 'v3'");
    fails({"roce", "host0", "mlx5_0", "v1", "dropped"}, 2, "not 'dropped'");
    fails({"port", "host0", "mlx5_0", "sideways"}, 2, "not 'sideways'");
    fails({"neigh", "host0", "300.1.1.1", "02:00:00:00:00:01"}, 2,
          "'300.1.1.1' is not a GID");
    fails({"isolate", "host0", "maybe"}, 2, "not 'maybe'");

    /* the gtest process runs with UCX_IB_EMU_FABRIC=none: no default */
    res = tool({"show"}, {}, false);
    EXPECT_EQ(2, res.status);
    EXPECT_NE(std::string::npos, res.err.find("\"none\"")) << res.err;

    /* nothing was made by any of these */
    EXPECT_FALSE(shm_exists());
}

TEST_F(test_ucx_emu_tool, create_show_destroy)
{
    EXPECT_NE(std::string::npos, ok({"create"}).find("created with 4 hosts"));
    ASSERT_TRUE(shm_exists()) << m_shm;

    std::string s = show();
    EXPECT_EQ(0u, s.find("fabric " + m_fabric + ": 4 hosts, 0 alive")) << s;
    EXPECT_NE(std::string::npos, s.find(m_shm)) << s;
    EXPECT_EQ(std::string::npos, s.find("host4")) << s;

    for (unsigned h = 0; h < 4; ++h) {
        std::string host = "host" + std::to_string(h);
        std::string hx   = std::to_string(h);
        auto row         = summary_row(s, host);

        ASSERT_EQ(10u, row.size()) << host << "\n" << s;
        EXPECT_EQ("dead", row[1]) << s;
        EXPECT_EQ("no", row[2]) << s;   /* isolated */
        EXPECT_EQ("0", row[3]) << s;    /* QPs */

        /* the default devices, shifted per host */
        for (unsigned d = 0; d < 2; ++d) {
            std::string port = "mlx5_" + std::to_string(d) + ":1";
            std::string ip   = "::ffff:198.18." + hx + "." +
                               std::to_string(d + 1);
            auto p           = port_row(s, host, port);
            char mac[32];

            snprintf(mac, sizeof(mac), "02:c9:00:00:%02x:%02x", h, d + 1);
            ASSERT_EQ(10u, p.size()) << host << " " << port << "\n" << s;
            EXPECT_EQ("Ethernet", p[COL_LINK]);
            EXPECT_EQ("ACTIVE", p[COL_STATE]);
            EXPECT_EQ("1024", p[COL_MTU]);
            EXPECT_EQ(mac, p[COL_ADDR]);
            EXPECT_EQ("eth0", p[COL_SEGMENT]);
            EXPECT_EQ("-", p[COL_DROP]);
            EXPECT_EQ("0", p[COL_GID_INDEX]);
            EXPECT_EQ("RoCE v1", p[COL_GID_TYPE]);
            EXPECT_NE(std::string::npos,
                      host_block(s, host).find("3  RoCE v2  " + ip))
                    << host_block(s, host);
        }
        for (unsigned d = 2; d < 4; ++d) {
            std::string port = "mlx5_" + std::to_string(d) + ":1";
            auto p           = port_row(s, host, port);
            char lid[16];

            snprintf(lid, sizeof(lid), "%x", (h << 8) | (0x11 + d - 2));
            ASSERT_EQ(10u, p.size()) << host << " " << port << "\n" << s;
            EXPECT_EQ("IB", p[COL_LINK]);
            EXPECT_EQ("4096", p[COL_MTU]);
            char last[16]; /* mlx5_3 has LMC 1: two LIDs */

            snprintf(last, sizeof(last), "-0x%x", (h << 8) | 0x13);
            EXPECT_EQ(std::string("LID 0x") + lid + ((d == 3) ? last : ""),
                      p[COL_ADDR]);
            EXPECT_EQ("IB", p[COL_GID_TYPE]);
            EXPECT_EQ(std::string("fe80::2c9:0:0:") + lid, p[COL_GID]);
        }
        EXPECT_NE(std::string::npos,
                  host_block(s, host).find("\n  drops: none"));
    }

    /* a fabric that exists is not created again behind its members' back */
    EXPECT_NE(std::string::npos, ok({"create"}).find("made anew"));

    EXPECT_NE(std::string::npos, ok({"destroy"}).find("destroyed"));
    EXPECT_FALSE(shm_exists()) << m_shm;
    fails({"show"}, 1, "fabric " + m_fabric + " does not exist");
    fails({"destroy"}, 1, "does not exist");
}

TEST_F(test_ucx_emu_tool, create_hosts_and_default_fabric)
{
    ok({"create", "-n", "2"});

    /* without -f: $UCX_IB_EMU_FABRIC */
    ucs::run_result res = tool({"show"}, {{"UCX_IB_EMU_FABRIC", m_fabric}},
                               false);
    EXPECT_EQ(0, res.status) << res.err;
    EXPECT_EQ(0u, res.out.find("fabric " + m_fabric + ": 2 hosts")) << res.out;
    EXPECT_EQ(10u, summary_row(res.out, "host1").size()) << res.out;
    EXPECT_TRUE(summary_row(res.out, "host2").empty()) << res.out;
}

TEST_F(test_ucx_emu_tool, a_damaged_segment_is_named_and_never_written)
{
    struct stat st;
    int fd;

    /* empty: show and qps say so and leave it empty */
    fd = open(m_shm.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
    ASSERT_GE(fd, 0) << m_shm;
    close(fd);
    fails({"show"}, 1, "its segment " + m_shm + " is empty");
    fails({"qps"}, 1, "is empty");
    ASSERT_EQ(0, stat(m_shm.c_str(), &st));
    EXPECT_EQ(0, st.st_size);
    ok({"destroy"});

    /* another size, with our header: damaged, not another version */
    ok({"create", "-n", "2"});
    ASSERT_EQ(0, truncate(m_shm.c_str(), 100000));
    fails({"show"}, 1, "has 100000 bytes");
    ok({"destroy"});

    /* a scribbled host count, and host names that are not text */
    ok({"create", "-n", "2"});
    fd = open(m_shm.c_str(), O_RDWR);
    ASSERT_GE(fd, 0);
    const uint32_t nhosts = 0x7fffffff;
    ASSERT_EQ(4, pwrite(fd, &nhosts, sizeof(nhosts), 12));
    fails({"show"}, 1, "is damaged: it counts 2147483647 hosts (1..16)");
    const uint32_t two = 2;
    ASSERT_EQ(4, pwrite(fd, &two, sizeof(two), 12));
    std::string s = show();
    ASSERT_NE(std::string::npos, s.find("host1")) << s;
    /* host0's name, found as the registry holds it (tests see no layout) */
    std::vector<char> image(1 << 16);
    ASSERT_EQ(ssize_t(image.size()), pread(fd, image.data(), image.size(), 0));
    const std::string name0("host0", 6);
    auto at = std::search(image.begin() + 32, image.end(), name0.begin(),
                          name0.end());
    ASSERT_NE(image.end(), at);
    const char binary[4] = {'\x01', '\xfe', 'h', '\x7f'};
    ASSERT_EQ(4, pwrite(fd, binary, sizeof(binary), at - image.begin()));
    close(fd);
    fails({"show"}, 1, "host 0 has no readable name");
    ok({"destroy"});
    EXPECT_FALSE(shm_exists());
}

TEST_F(test_ucx_emu_tool, mac_move)
{
    ok({"create"});

    /* with a gratuitous ARP: every neighbour table follows */
    EXPECT_NE(std::string::npos,
              ok({"mac", "host1", "mlx5_0", "02:00:00:00:aa:01"})
                      .find("host1 mlx5_0:1: MAC 02:00:00:00:aa:01"));
    std::string s = show();
    EXPECT_EQ("02:00:00:00:aa:01", port_row(s, "host1", "mlx5_0:1")[COL_ADDR])
            << s;
    EXPECT_EQ(std::string::npos, s.find("stale:")) << s;

    /* without: every host's entries of host1 mlx5_1 go stale */
    ok({"mac", "1", "mlx5_1:1", "02:00:00:00:AA:02", "--no-arp"});
    s = show();
    EXPECT_EQ("02:00:00:00:aa:02", port_row(s, "host1", "mlx5_1:1")[COL_ADDR])
            << s;
    std::string neigh = neigh_section(s);
    for (unsigned h = 0; h < 4; ++h) {
        auto row = neigh_row(neigh, "host" + std::to_string(h));
        ASSERT_EQ(3u, row.size()) << neigh;
        EXPECT_EQ("2", row[2]) << neigh; /* link-local and IPv4 GIDs */
    }
    EXPECT_EQ((std::vector<std::string>{"::ffff:198.18.1.2", "eth0",
                                        "02:c9:00:00:01:02",
                                        "stale: host1 mlx5_1:1 is "
                                        "02:00:00:00:aa:02"}),
              neigh_entry(neigh, "::ffff:198.18.1.2")) << neigh;

    fails({"mac", "host9", "mlx5_0", "02:00:00:00:aa:01"}, 1,
          "has no host 'host9'");
    fails({"mac", "host1", "mlx5_9", "02:00:00:00:aa:01"}, 1,
          "has no port mlx5_9:1");
    fails({"mac", "host1", "mlx5_2", "02:00:00:00:aa:01"}, 1,
          "an InfiniBand port has no MAC");
    fails({"mac", "host1", "mlx5_0", "01:00:00:00:aa:01"}, 1, "multicast");

    /* host2's own MAC on host0's port of the same segment: refused, and
     * nothing changed, unless forced */
    fails({"mac", "host0", "mlx5_0", "02:c9:00:00:02:01"}, 1,
          "MAC 02:c9:00:00:02:01 is already host2's on L2 segment eth0");
    EXPECT_EQ("02:c9:00:00:00:01", port_row(show(), "host0", "mlx5_0:1")[COL_ADDR]);
    ok({"mac", "host0", "mlx5_0", "02:c9:00:00:02:01", "--force"});
    EXPECT_EQ("02:c9:00:00:02:01", port_row(show(), "host0", "mlx5_0:1")[COL_ADDR]);
    /* a port keeps its own MAC without complaint */
    ok({"mac", "host0", "mlx5_1", "02:c9:00:00:00:02"});
}

/* What a host's engine writes at each INIT2RTR, read back by qps */
TEST_F(test_ucx_emu_tool, qps)
{
    const uct_ib_emu_mac_t old_mac = {0x02, 0xc9, 0, 0, 0, 0x01};
    const uct_ib_emu_gid_t gid     = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff,
                                      0xff, 198, 18, 0, 1}; /* host0 mlx5_0 */
    uct_ib_emu_fabric_conn_t roce = {}, ib = {};

    ok({"create", "-n", "2"});
    EXPECT_EQ("no connections recorded\n", ok({"qps"}));

    roce.device     = "mlx5_0";
    roce.qpn        = 0x80100;
    roce.remote_qpn = 0x40100;
    roce.port       = 1;
    roce.grh        = true;
    roce.devx       = true;
    roce.rmac       = old_mac;
    roce.rgid       = gid;
    ASSERT_EQ(UCS_OK, uct_ib_emu_fabric_test_record_conn(m_fabric, "host1",
                                                         roce));
    ib.device     = "mlx5_2";
    ib.qpn        = 0x80101;
    ib.remote_qpn = 0x40101;
    ib.port       = 1;
    ib.rlid       = 0x11; /* host0 mlx5_2 */
    ASSERT_EQ(UCS_OK, uct_ib_emu_fabric_test_record_conn(m_fabric, "host1",
                                                         ib));

    auto l = lines(ok({"qps"}));
    ASSERT_EQ(3u, l.size());
    EXPECT_EQ((std::vector<std::string>{"HOST", "QP", "DEVICE", "VIA",
                                        "PEER QP", "DESTINATION", "PEER PORT",
                                        "MAC"}), cells(l[0]));
    EXPECT_EQ((std::vector<std::string>{"host1", "0x80100", "mlx5_0:1", "devx",
                                        "0x40100", "::ffff:198.18.0.1",
                                        "host0 mlx5_0:1", "02:c9:00:00:00:01",
                                        "current"}), cells(l[1]));
    EXPECT_EQ((std::vector<std::string>{"host1", "0x80101", "mlx5_2:1",
                                        "verbs", "0x40101", "LID 0x11",
                                        "host0 mlx5_2:1", "-"}), cells(l[2]));

    /* the peer moved: the QP still carries the old MAC */
    ok({"mac", "host0", "mlx5_0", "02:c9:aa:00:00:01"});
    l = lines(ok({"qps", "host1"}));
    ASSERT_EQ(3u, l.size());
    EXPECT_EQ("STALE: the port is 02:c9:aa:00:00:01", cells(l[1]).back());
    EXPECT_EQ("no connections recorded\n", ok({"qps", "0"}));
    fails({"qps", "host7"}, 1, "has no host 'host7'");
    fails({"qps", "host0", "host1"}, 2, "too many arguments");
}

TEST_F(test_ucx_emu_tool, roce_drop_and_port_state)
{
    ok({"create"});

    ok({"roce", "host2", "mlx5_0", "v1", "drop"});
    EXPECT_EQ("RoCE v1", port_row(show(), "host2", "mlx5_0:1")[COL_DROP]);
    ok({"roce", "host2", "mlx5_0:1", "v2", "drop"});
    EXPECT_EQ("RoCE v1+v2", port_row(show(), "host2", "mlx5_0:1")[COL_DROP]);
    ok({"roce", "host2", "mlx5_0", "v1", "accept"});
    std::string s = show();
    EXPECT_EQ("RoCE v2", port_row(s, "host2", "mlx5_0:1")[COL_DROP]) << s;
    EXPECT_EQ("-", port_row(s, "host2", "mlx5_1:1")[COL_DROP]) << s;
    fails({"roce", "host2", "mlx5_2", "v1", "drop"}, 1,
          "an InfiniBand port carries no RoCE");

    ok({"port", "host3", "mlx5_2", "down"});
    s = show();
    EXPECT_EQ("DOWN", port_row(s, "host3", "mlx5_2:1")[COL_STATE]) << s;
    EXPECT_EQ("ACTIVE", port_row(s, "host3", "mlx5_3:1")[COL_STATE]) << s;
    ok({"port", "host3", "mlx5_2:1", "up"});
    EXPECT_EQ("ACTIVE", port_row(show(), "host3", "mlx5_2:1")[COL_STATE]);
    fails({"port", "host3", "mlx5_2:2", "up"}, 1, "has no port mlx5_2:2");
}

TEST_F(test_ucx_emu_tool, neigh_and_isolate)
{
    ok({"create"});

    EXPECT_NE(std::string::npos,
              ok({"neigh", "host0", "198.18.3.1", "02:11:22:33:44:55"})
                      .find("host0 resolves ::ffff:198.18.3.1 to "
                            "02:11:22:33:44:55"));
    std::string neigh = neigh_section(show());
    EXPECT_EQ((std::vector<std::string>{"::ffff:198.18.3.1", "eth0",
                                        "02:11:22:33:44:55",
                                        "stale: host3 mlx5_0:1 is "
                                        "02:c9:00:00:03:01"}),
              neigh_entry(neigh, "::ffff:198.18.3.1")) << neigh;
    EXPECT_EQ("1", neigh_row(neigh, "host0")[2]) << neigh;
    EXPECT_EQ("0", neigh_row(neigh, "host3")[2]) << neigh;

    /* the true MAC again: nothing stale */
    ok({"neigh", "host0", "::ffff:198.18.3.1", "02:c9:00:00:03:01"});
    EXPECT_EQ(std::string::npos, show().find("stale:"));
    fails({"neigh", "host7", "198.18.3.1", "02:c9:00:00:03:01"}, 1,
          "has no host 'host7'");
    fails({"neigh", "host0", "::", "02:c9:00:00:03:01"}, 1,
          "the zero GID is no port's address");

    ok({"isolate", "host2", "on"});
    std::string s = show();
    EXPECT_EQ("yes", summary_row(s, "host2")[2]) << s;
    EXPECT_EQ("no", summary_row(s, "host1")[2]) << s;
    EXPECT_EQ(0u, host_block(s, "host2").find("host2: dead, ISOLATED")) << s;
    ok({"isolate", "host2", "off"});
    EXPECT_EQ("no", summary_row(show(), "host2")[2]);
    fails({"isolate", "host5", "on"}, 1, "has no host 'host5'");
}

TEST_F(test_ucx_emu_tool, live_host)
{
#if !defined(GTEST_FABRIC_PEER) || !defined(GTEST_UCT_MODULE_DIR)
    UCS_TEST_SKIP_R("GTEST_FABRIC_PEER or GTEST_UCT_MODULE_DIR is not "
                    "defined by the build");
#else
    int sv[2];

    ASSERT_EQ(0, access(GTEST_FABRIC_PEER, X_OK))
            << GTEST_FABRIC_PEER << " is not built";
    ok({"create", "-n", "2"});

    /* a process joined as host1; it waits for a peer that never comes */
    ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
    bool started = m_peer.start({GTEST_FABRIC_PEER, "--role", "server",
                                 "--fd", std::to_string(sv[1]), "--tl",
                                 "rc_mlx5", "--dev", "mlx5_0:1"},
                                {{"UCX_IB_GLUE", "emulated"},
                                 {"UCX_MODULE_DIR", GTEST_UCT_MODULE_DIR},
                                 {"UCX_IB_EMU_FABRIC", m_fabric},
                                 {"UCX_IB_EMU_HOST", "host1"}},
                                sv[1]);
    close(sv[1]);
    ASSERT_TRUE(started);
    std::string joined = m_peer.wait_line("RESULT joined", 20);
    ASSERT_EQ("RESULT joined " + m_fabric + " host1", joined)
            << m_peer.output();

    std::string s = show();
    EXPECT_EQ(0u, s.find("fabric " + m_fabric + ": 2 hosts, 1 alive")) << s;
    EXPECT_EQ("alive, pid " + std::to_string(m_peer.pid()),
              summary_row(s, "host1")[1]) << s;
    EXPECT_EQ("dead", summary_row(s, "host0")[1]) << s;

    /* not removed under a live member, unless forced */
    fails({"destroy"}, 1, "1 live host(s)");
    EXPECT_TRUE(shm_exists());

    m_peer.kill_and_reap();
    close(sv[0]);
    EXPECT_EQ("dead", summary_row(show(), "host1")[1]);
#endif
}
