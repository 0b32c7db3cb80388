/*
 * Programs a test starts: run one to completion with its output captured,
 * or keep one running in the background. Every wait is bounded (scaled by
 * test_time_multiplier()); a child that outlives its limit is killed, and
 * every child is reaped.
 */
#ifndef UCS_GTEST_SUBPROCESS_H_
#define UCS_GTEST_SUBPROCESS_H_

#include <sys/types.h>

#include <map>
#include <string>
#include <vector>

namespace ucs {

struct run_result {
    int         status = -1; /* exit code; 128 + signal if killed; -1 if
                                it could not start */
    bool        timed_out = false;
    std::string out;
    std::string err;
};

/* Environment changes for a child: a value, or unset when empty */
typedef std::map<std::string, std::string> env_changes_t;

/* Run @a argv (argv[0] a path) to completion, at most @a timeout_sec */
run_result run_program(const std::vector<std::string> &argv,
                       double timeout_sec, const env_changes_t &env = {});


/* A program running in the background, with its stdout readable line by
 * line, its stderr kept and its stdin writable; killed (SIGKILL) and reaped
 * when the object goes away */
class background_program {
public:
    background_program() = default;
    ~background_program();

    background_program(const background_program&)            = delete;
    background_program &operator=(const background_program&) = delete;

    /* false (and a test failure) if it could not start; @a inherit_fd
     * (close-on-exec in this process) stays open in the child */
    bool start(const std::vector<std::string> &argv,
               const env_changes_t &env = {}, int inherit_fd = -1);

    pid_t pid() const
    {
        return m_pid;
    }

    /* Wait for a stdout line starting with @a prefix; "" on EOF or timeout.
     * Lines are read in order; what was read is kept in output(). */
    std::string wait_line(const std::string &prefix, double timeout_sec);

    /* Kill with SIGKILL and reap it; its exit status as in run_result */
    int kill_and_reap();

    /* Read its output until it closes it (at most @a timeout_sec, then
     * SIGKILL), reap it; its exit status as in run_result */
    int wait_exit(double timeout_sec);

    /* Write a line to its stdin */
    void say(const std::string &line);

    /* The value of its last "RESULT <what> <value>" line, or "" */
    std::string result(const std::string &what) const;

    const std::string &output() const
    {
        return m_out;
    }

    const std::string &errors() const
    {
        return m_err;
    }

private:
    pid_t       m_pid    = -1;
    int         m_out_fd = -1;
    int         m_err_fd = -1;
    int         m_in_fd  = -1;
    std::string m_err;
    std::string m_out;
    size_t      m_read   = 0; /* lines handed out so far end here */
};

} // namespace ucs

#endif
