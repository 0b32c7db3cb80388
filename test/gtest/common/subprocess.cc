/*
 * Programs a test starts (subprocess.h).
 */
#include "subprocess.h"
#include "test.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>

extern char **environ;

namespace ucs {

namespace {

using steady = std::chrono::steady_clock;

/* argv and envp built before fork: the child only calls dup2 and execve */
struct exec_args {
    std::vector<std::string> strings;
    std::vector<char*>       argv;
    std::vector<char*>       envp;

    exec_args(const std::vector<std::string> &args, const env_changes_t &env)
    {
        std::vector<std::string> envs;

        for (char **e = environ; *e != nullptr; ++e) {
            std::string kv  = *e;
            std::string key = kv.substr(0, kv.find('='));

            if (env.find(key) == env.end()) {
                envs.push_back(kv);
            }
        }
        for (const auto &kv : env) {
            if (!kv.second.empty()) {
                envs.push_back(kv.first + "=" + kv.second);
            }
        }

        strings = args;
        strings.insert(strings.end(), envs.begin(), envs.end());
        for (size_t i = 0; i < strings.size(); ++i) {
            ((i < args.size()) ? argv : envp).push_back(&strings[i][0]);
        }
        argv.push_back(nullptr);
        envp.push_back(nullptr);
    }
};

void close_pair(int fds[2])
{
    for (int i = 0; i < 2; ++i) {
        if (fds[i] >= 0) {
            close(fds[i]);
        }
    }
}

/* Start a child with stdout on a pipe, and stderr and stdin too unless
 * their pointer is NULL (then they are ours) */
pid_t spawn(const std::vector<std::string> &argv, const env_changes_t &env,
            int *out_fd_p, int *err_fd_p, int inherit_fd = -1,
            int *in_fd_p = nullptr)
{
    exec_args args(argv, env);
    int out[2], err[2] = {-1, -1}, in[2] = {-1, -1};
    pid_t pid;

    if (pipe2(out, O_CLOEXEC) != 0) {
        ADD_FAILURE() << "pipe2() failed: " << strerror(errno);
        return -1;
    }
    if (((err_fd_p != nullptr) && (pipe2(err, O_CLOEXEC) != 0)) ||
        ((in_fd_p != nullptr) && (pipe2(in, O_CLOEXEC) != 0))) {
        ADD_FAILURE() << "pipe2() failed: " << strerror(errno);
        close_pair(out);
        close_pair(err);
        close_pair(in);
        return -1;
    }

    pid = fork();
    if (pid == 0) {
        dup2(out[1], STDOUT_FILENO);
        if (err[1] >= 0) {
            dup2(err[1], STDERR_FILENO);
        }
        if (in[0] >= 0) {
            dup2(in[0], STDIN_FILENO);
        }
        if (inherit_fd >= 0) {
            fcntl(inherit_fd, F_SETFD, 0);
        }
        execve(args.argv[0], args.argv.data(), args.envp.data());
        _exit(127);
    }

    close(out[1]);
    if (err[1] >= 0) {
        close(err[1]);
    }
    if (in[0] >= 0) {
        close(in[0]);
    }
    if (pid < 0) {
        ADD_FAILURE() << "fork() failed: " << strerror(errno);
        close(out[0]);
        if (err[0] >= 0) {
            close(err[0]);
        }
        if (in[1] >= 0) {
            close(in[1]);
        }
        return -1;
    }

    *out_fd_p = out[0];
    if (err_fd_p != nullptr) {
        *err_fd_p = err[0];
    }
    if (in_fd_p != nullptr) {
        *in_fd_p = in[1];
    }
    return pid;
}

int exit_status(int wstatus)
{
    if (WIFEXITED(wstatus)) {
        return WEXITSTATUS(wstatus);
    }
    return WIFSIGNALED(wstatus) ? (128 + WTERMSIG(wstatus)) : -1;
}

int reap(pid_t pid)
{
    int wstatus;

    while (waitpid(pid, &wstatus, 0) < 0) {
        if (errno != EINTR) {
            return -1;
        }
    }
    return exit_status(wstatus);
}

/* Read what is there (poll at most @a ms); false on EOF */
bool read_some(int fd, std::string *buf, int ms)
{
    struct pollfd pfd = {fd, POLLIN, 0};
    char tmp[4096];
    ssize_t n;

    if (poll(&pfd, 1, ms) <= 0) {
        return true;
    }
    n = read(fd, tmp, sizeof(tmp));
    if (n > 0) {
        buf->append(tmp, n);
    }
    return (n > 0) || ((n < 0) && (errno == EINTR));
}

} // namespace

run_result run_program(const std::vector<std::string> &argv,
                       double timeout_sec, const env_changes_t &env)
{
    auto deadline = steady::now() +
                    std::chrono::duration<double>(timeout_sec *
                                                  test_time_multiplier());
    run_result res;
    int out_fd, err_fd;
    bool out_open = true, err_open = true;
    pid_t pid     = spawn(argv, env, &out_fd, &err_fd);

    if (pid < 0) {
        return res;
    }

    while ((out_open || err_open) && !res.timed_out) {
        out_open = out_open && read_some(out_fd, &res.out, 10);
        err_open = err_open && read_some(err_fd, &res.err, 10);
        if (steady::now() > deadline) {
            res.timed_out = true;
            kill(pid, SIGKILL);
        }
    }

    close(out_fd);
    close(err_fd);
    res.status = reap(pid);
    return res;
}


background_program::~background_program()
{
    kill_and_reap();
}

bool background_program::start(const std::vector<std::string> &argv,
                               const env_changes_t &env, int inherit_fd)
{
    m_pid = spawn(argv, env, &m_out_fd, &m_err_fd, inherit_fd, &m_in_fd);
    return m_pid > 0;
}

void background_program::say(const std::string &line)
{
    std::string l = line + "\n";

    EXPECT_EQ(ssize_t(l.size()), write(m_in_fd, l.data(), l.size()))
            << "writing to pid " << m_pid << ": " << strerror(errno);
}

int background_program::wait_exit(double timeout_sec)
{
    auto deadline = steady::now() +
                    std::chrono::duration<double>(timeout_sec *
                                                  test_time_multiplier());
    bool out_open = (m_out_fd >= 0), err_open = (m_err_fd >= 0);

    while ((out_open || err_open) && (m_pid > 0)) {
        out_open = out_open && read_some(m_out_fd, &m_out, 10);
        err_open = err_open && read_some(m_err_fd, &m_err, 10);
        if (steady::now() > deadline) {
            ADD_FAILURE() << "pid " << m_pid << " still runs after "
                          << timeout_sec << " s: killed";
            break;
        }
    }
    return kill_and_reap();
}

std::string background_program::result(const std::string &what) const
{
    std::string key = "RESULT " + what + " ";
    size_t at       = m_out.rfind(key);

    if (at == std::string::npos) {
        return "";
    }
    at += key.size();
    return m_out.substr(at, m_out.find('\n', at) - at);
}

std::string background_program::wait_line(const std::string &prefix,
                                           double timeout_sec)
{
    auto deadline = steady::now() +
                    std::chrono::duration<double>(timeout_sec *
                                                  test_time_multiplier());
    bool open     = (m_out_fd >= 0);

    for (;;) {
        size_t nl;

        while ((nl = m_out.find('\n', m_read)) != std::string::npos) {
            std::string line = m_out.substr(m_read, nl - m_read);

            m_read = nl + 1;
            if (line.compare(0, prefix.size(), prefix) == 0) {
                return line;
            }
        }
        if (!open || (steady::now() > deadline)) {
            return "";
        }
        open = read_some(m_out_fd, &m_out, 10);
    }
}

int background_program::kill_and_reap()
{
    int status = -1;

    if (m_pid > 0) {
        kill(m_pid, SIGKILL);
        status = reap(m_pid);
        m_pid  = -1;
    }
    for (int *fd : {&m_out_fd, &m_err_fd, &m_in_fd}) {
        if (*fd >= 0) {
            close(*fd);
            *fd = -1;
        }
    }
    return status;
}

} // namespace ucs
