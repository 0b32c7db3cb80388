/*
 * The cross-process emulated fabric (design section 9), with real
 * processes: each test makes a fabric of its own, starts fabric_peer
 * processes as its hosts (fork/exec, bounded in time, always reaped), and
 * checks what they report, what the fabric's registry shows, and that
 * nothing is left in shared memory afterwards.
 */
#include <uct/ib/mlx5/emu/fabric_ctl.h>
#include <uct/ib/mlx5/emu/shm_fabric.h>

#include <gtest/gtest.h>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <map>
#include <string>
#include <tuple>
#include <vector>

namespace {

using steady = std::chrono::steady_clock;

constexpr auto PROCESS_LIMIT = std::chrono::seconds(120);

/* A fabric_peer process: its stdin, stdout and stderr are ours */
class host_process {
public:
    host_process(const std::vector<std::string> &args,
                 const std::map<std::string, std::string> &env, int keep_fd)
    {
        int in[2], out[2], err[2];
        std::vector<std::string> envs;
        std::vector<char*> argv, envp;

        for (char **e = environ; *e != nullptr; ++e) {
            std::string kv = *e;
            if (env.count(kv.substr(0, kv.find('='))) == 0) {
                envs.push_back(kv);
            }
        }
        for (const auto &kv : env) {
            envs.push_back(kv.first + "=" + kv.second);
        }

        argv.push_back(const_cast<char*>(GTEST_FABRIC_PEER));
        for (const auto &a : args) {
            argv.push_back(const_cast<char*>(a.c_str()));
        }
        argv.push_back(nullptr);
        for (auto &e : envs) {
            envp.push_back(const_cast<char*>(e.c_str()));
        }
        envp.push_back(nullptr);

        if ((pipe2(in, O_CLOEXEC) != 0) || (pipe2(out, O_CLOEXEC) != 0) ||
            (pipe2(err, O_CLOEXEC) != 0)) {
            ADD_FAILURE() << "pipe: " << strerror(errno);
            return;
        }

        m_pid = fork();
        if (m_pid == 0) {
            /* only async-signal-safe calls until exec */
            dup2(in[0], 0);
            dup2(out[1], 1);
            dup2(err[1], 2);
            if (keep_fd >= 0) {
                fcntl(keep_fd, F_SETFD, 0);
            }
            execve(GTEST_FABRIC_PEER, argv.data(), envp.data());
            _exit(127);
        }

        close(in[0]);
        close(out[1]);
        close(err[1]);
        m_in  = in[1];
        m_out = out[0];
        m_err = err[0];
        if (m_pid < 0) {
            ADD_FAILURE() << "fork: " << strerror(errno);
        }
    }

    ~host_process()
    {
        kill_now();
        for (int fd : {m_in, m_out, m_err}) {
            if (fd >= 0) {
                close(fd);
            }
        }
    }

    void say(const std::string &line)
    {
        std::string l = line + "\n";
        EXPECT_EQ(ssize_t(l.size()), write(m_in, l.data(), l.size()));
    }

    /* Read until a line starts with @a prefix (true) or the process ends */
    bool wait_line(const std::string &prefix)
    {
        auto deadline = steady::now() + PROCESS_LIMIT;

        while (steady::now() < deadline) {
            size_t at = 0;
            while ((at = m_stdout.find('\n', m_scanned)) != std::string::npos) {
                std::string line = m_stdout.substr(m_scanned, at - m_scanned);
                m_scanned = at + 1;
                if (line.compare(0, prefix.size(), prefix) == 0) {
                    return true;
                }
            }
            if (!pump(100)) {
                return false;
            }
        }
        return false;
    }

    /* Wait for the exit status (SIGKILL after the limit) */
    int wait_exit()
    {
        auto deadline = steady::now() + PROCESS_LIMIT;
        int status;

        while (m_pid > 0) {
            pid_t r = waitpid(m_pid, &status, WNOHANG);
            if (r == m_pid) {
                m_pid    = -1;
                m_status = status;
                break;
            }
            pump(10);
            if (steady::now() > deadline) {
                ADD_FAILURE() << "a host process did not exit in time";
                kill_now();
            }
        }
        while (pump(0)) {
        }
        return WIFEXITED(m_status) ? WEXITSTATUS(m_status) :
                                     128 + WTERMSIG(m_status);
    }

    void kill_now()
    {
        int status;

        if (m_pid > 0) {
            kill(m_pid, SIGKILL);
            waitpid(m_pid, &status, 0);
            m_status = status;
            m_pid    = -1;
        }
    }

    pid_t pid() const
    {
        return m_pid;
    }

    const std::string &out() const
    {
        return m_stdout;
    }

    const std::string &err() const
    {
        return m_stderr;
    }

    /* The value of "RESULT <what> <value>", or "" */
    std::string result(const std::string &what) const
    {
        std::string key = "RESULT " + what + " ";
        size_t at       = m_stdout.rfind(key);

        if (at == std::string::npos) {
            return "";
        }
        at += key.size();
        return m_stdout.substr(at, m_stdout.find('\n', at) - at);
    }

private:
    /* Move what the process wrote into our buffers; false at EOF of both */
    bool pump(int timeout_ms)
    {
        struct pollfd pfd[2] = {{m_out, POLLIN, 0}, {m_err, POLLIN, 0}};
        bool open            = false;
        char buf[4096];

        if (poll(pfd, 2, timeout_ms) <= 0) {
            return (m_out >= 0) || (m_err >= 0);
        }
        for (int i = 0; i < 2; ++i) {
            int &fd = i ? m_err : m_out;
            if (fd < 0) {
                continue;
            }
            if (pfd[i].revents & (POLLIN | POLLHUP)) {
                ssize_t n = read(fd, buf, sizeof(buf));
                if (n > 0) {
                    (i ? m_stderr : m_stdout).append(buf, n);
                } else {
                    close(fd);
                    fd = -1;
                }
            }
            open |= (fd >= 0);
        }
        return open;
    }

    pid_t       m_pid    = -1;
    int         m_status = 0;
    int         m_in     = -1;
    int         m_out    = -1;
    int         m_err    = -1;
    std::string m_stdout;
    std::string m_stderr;
    size_t      m_scanned = 0;
};

std::string shm_path(const std::string &fabric)
{
    return "/dev/shm" + uct_ib_emu::fab::shm_name(fabric);
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

    std::map<std::string, std::string> host_env(const std::string &host)
    {
        return {{"UCX_MODULE_DIR", GTEST_UCT_MODULE_DIR},
                {"UCX_IB_GLUE", "emulated"},
                {"UCX_IB_EMU_FABRIC", m_fabric},
                {"UCX_IB_EMU_HOST", host},
                {"UCX_RC_TIMEOUT", "100ms"},
                {"UCX_WARN_UNUSED_ENV_VARS", "n"}};
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
                "--scenario", scenario, "--count", std::to_string(count)};
            m_hosts.emplace_back(new host_process(args,
                                                  host_env(i ? "host1" :
                                                               "host0"),
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
        EXPECT_EQ(0, p.wait_exit()) << who << " stdout:\n" << p.out()
                                    << "stderr:\n" << p.err();
    }

    void expect_nothing_left()
    {
        EXPECT_NE(0, access(shm_path(m_fabric).c_str(), F_OK))
                << shm_path(m_fabric) << " is left behind";
    }

    std::string                                m_fabric;
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

    const std::string &dev() const
    {
        return std::get<1>(GetParam());
    }

    bool roce() const
    {
        return dev() != "mlx5_2:1";
    }
};

TEST_P(test_fabric, two_hosts_exchange_ams_rma_and_atomics)
{
    start_pair(tl(), dev(), "traffic", 1000);
    expect_exit_ok(server(), "server");
    expect_exit_ok(client(), "client");

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

    start_pair(tl(), dev(), "mac_move", 300);
    expect_exit_ok(server(), "server");
    expect_exit_ok(client(), "client");

    EXPECT_EQ("host0", client().result("mac_moved"));
    EXPECT_EQ(ucs_status_string(UCS_ERR_ENDPOINT_TIMEOUT),
              client().result("live_endpoint"));
    /* 8 transmissions 134 ms apart, give or take scheduling */
    EXPECT_LT(std::stod("0" + client().result("failed_after_s")), 30.0);
    EXPECT_EQ("first try", client().result("reconnect"));
    EXPECT_EQ("100 in-order", client().result("am_received_by_server"));
    EXPECT_EQ("100 in-order", client().result("am_received_by_client"));
    expect_nothing_left();
}

TEST_P(test_fabric, peer_killed_survivor_fails_in_bounded_time)
{
    start_pair(tl(), dev(), "peer_killed", 100);
    ASSERT_TRUE(client().wait_line("RESULT ready_to_kill"))
            << client().out() << client().err();

    server().kill_now();
    client().say("GO");
    expect_exit_ok(client(), "client");

    EXPECT_EQ(ucs_status_string(UCS_ERR_ENDPOINT_TIMEOUT),
              client().result("live_endpoint"));
    EXPECT_LT(std::stod("0" + client().result("failed_after_s")), 30.0);
    /* the survivor was the last member: it removed the fabric */
    expect_nothing_left();
}

INSTANTIATE_TEST_SUITE_P(
        fabric, test_fabric,
        testing::Combine(testing::Values("rc_mlx5", "rc_verbs"),
                         testing::Values("mlx5_0:1", "mlx5_2:1")),
        [](const testing::TestParamInfo<test_fabric::ParamType> &info) {
            return std::get<0>(info.param) +
                   ((std::get<1>(info.param) == "mlx5_2:1") ? "_ib" : "_roce");
        });


class test_fabric_join : public test_fabric_base {
protected:
    /* Start one "list" process as @a host; its device count */
    std::string devices_seen(const std::string &host,
                             std::map<std::string, std::string> extra = {})
    {
        auto env = host_env(host);

        for (const auto &kv : extra) {
            env[kv.first] = kv.second;
        }
        m_hosts.emplace_back(new host_process({"--role", "client",
                                               "--scenario", "list"},
                                              env, -1));
        m_last = m_hosts.back().get();
        m_last->wait_exit();
        return m_last->result("devices");
    }

    /* How many lines of the last process's stderr mention @a text */
    unsigned errors_naming(const std::string &text) const
    {
        unsigned count = 0;
        size_t at      = 0;

        while ((at = m_last->err().find(text, at)) != std::string::npos) {
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
    EXPECT_EQ(1u, errors_naming("has no host 'nosuchhost'")) << m_last->err();
    expect_nothing_left();
}

TEST_F(test_fabric_join, malformed_fabric_name_is_refused)
{
    EXPECT_EQ("0", devices_seen("auto", {{"UCX_IB_EMU_FABRIC", "bad/name"}}));
    EXPECT_EQ(1u, errors_naming("UCX_IB_EMU_FABRIC=bad/name")) << m_last->err();
}

TEST_F(test_fabric_join, full_fabric_is_refused)
{
    int held;

    ASSERT_EQ(UCS_OK, uct_ib_emu_fabric_create(m_fabric, 1));
    /* what a live member holds: host0's socket name */
    held = uct_ib_emu::fab::bind_abstract(
            uct_ib_emu::fab::socket_name(m_fabric, "h0"));
    ASSERT_GE(held, 0);

    EXPECT_EQ("0", devices_seen("auto"));
    EXPECT_EQ(1u, errors_naming("is full")) << m_last->err();
    close(held);

    /* the host is free again */
    EXPECT_EQ("4", devices_seen("auto"));
    EXPECT_EQ(UCS_OK, uct_ib_emu_fabric_destroy(m_fabric, false));
    expect_nothing_left();
}

TEST_F(test_fabric_join, another_version_is_refused_naming_it)
{
    uct_ib_emu_fabric_info_t info;
    uint32_t hdr[2] = {uct_ib_emu::fab::MAGIC, 99};
    int fd = shm_open(uct_ib_emu::fab::shm_name(m_fabric).c_str(),
                      O_RDWR | O_CREAT | O_EXCL, 0600);

    ASSERT_GE(fd, 0);
    ASSERT_EQ(ssize_t(sizeof(hdr)), write(fd, hdr, sizeof(hdr)));
    close(fd);

    EXPECT_EQ("0", devices_seen("auto"));
    EXPECT_EQ(1u, errors_naming("version 99")) << m_last->err();
    EXPECT_NE(UCS_OK, uct_ib_emu_fabric_info(m_fabric, &info));
    EXPECT_EQ(UCS_OK, uct_ib_emu_fabric_destroy(m_fabric, false));
    expect_nothing_left();
}

TEST_F(test_fabric_join, stale_fabric_is_recycled)
{
    uct_ib_emu_fabric_info_t info;

    /* a member that died without leaving: joined, its socket unbound */
    ASSERT_EQ(UCS_OK, uct_ib_emu_fabric_create(m_fabric, 2));
    {
        uct_ib_emu::fab::fabric_lock lock;
        uct_ib_emu::fab::mapping map;

        ASSERT_EQ(UCS_OK, lock.acquire(m_fabric));
        ASSERT_EQ(UCS_OK, map.open(m_fabric, 0, 0, false));
        map.get()->hosts[0].joined = 1;
        map.get()->hosts[0].pid    = 1;
        map.get()->hosts[0].devs[0].port.mac[0] = 0x06;
    }

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
    std::vector<std::unique_ptr<host_process>> pairs;

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
