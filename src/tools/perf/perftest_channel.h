/*
 * The control channel of ucx_perftest: one TCP connection between the
 * server and the client, carrying lines of text (the test's parameters,
 * the addresses, the start and the end, heartbeats). Nothing on it blocks
 * without a limit: connect and accept give up after a timeout, and a read
 * that waits calls the caller's idle function and gives up at its deadline.
 * A peer that closes the connection (or whose process died) is an error.
 */
#ifndef UCX_PERFTEST_CHANNEL_H_
#define UCX_PERFTEST_CHANNEL_H_

#include <ucs/type/status.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

namespace perftest {

class channel {
public:
    channel() = default;
    channel(const channel&) = delete;
    channel &operator=(const channel&) = delete;
    ~channel();

    /* Listen on @a port (every address) and accept one client */
    [[nodiscard]] ucs_status_t accept_one(uint16_t port, unsigned timeout_s);

    /* Connect to @a host:@a port, retrying while nothing listens there yet */
    [[nodiscard]] ucs_status_t connect_to(const std::string &host,
                                          uint16_t port, unsigned timeout_s);

    [[nodiscard]] ucs_status_t send_line(const std::string &line);

    /*
     * Read what arrived without waiting: a complete line into @a line
     * (true), or false if none is there yet. An error if the peer closed
     * the connection.
     */
    [[nodiscard]] ucs_status_t poll_line(std::string *line, bool *got_p);

    /* The next line, calling @a idle while waiting, at most @a timeout_s */
    [[nodiscard]] ucs_status_t recv_line(std::string *line, unsigned timeout_s,
                                         const std::function<void()> &idle);

    /* The peer's name, for messages */
    const std::string &peer() const
    {
        return m_peer;
    }

private:
    int         m_fd = -1;
    std::string m_buf;
    std::string m_peer;
};

} // namespace perftest

#endif
