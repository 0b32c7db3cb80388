/*
 * The TCP control channel; see perftest_channel.h.
 */
#include "perftest_channel.h"
#include "perftest.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

namespace perftest {

namespace {

using steady = std::chrono::steady_clock;

/* Milliseconds from now to @a deadline, at least 0 */
int ms_left(steady::time_point deadline)
{
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - steady::now()).count();
    return (left > 0) ? int(std::min<long long>(left, 1000)) : 0;
}

void set_nodelay(int fd)
{
    int one = 1;

    (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

} // namespace

channel::~channel()
{
    if ((m_fd >= 0) && (close(m_fd) != 0)) {
        error("close(control connection) failed: %m");
    }
}

ucs_status_t channel::accept_one(uint16_t port, unsigned timeout_s)
{
    struct sockaddr_in6 addr = {};
    socklen_t           len  = sizeof(addr);
    int                 one  = 1, zero = 0;
    int                 lfd;

    lfd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (lfd < 0) {
        error("socket(AF_INET6) failed: %m");
        return UCS_ERR_IO_ERROR;
    }
    (void)setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    (void)setsockopt(lfd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
    addr.sin6_family = AF_INET6;
    addr.sin6_addr   = in6addr_any;
    addr.sin6_port   = htons(port);
    if (bind(lfd, reinterpret_cast<struct sockaddr*>(&addr), sizeof(addr)) !=
        0) {
        error("bind(tcp port %u) failed: %m", port);
        close(lfd);
        return UCS_ERR_IO_ERROR;
    }
    if (listen(lfd, 1) != 0) {
        error("listen(tcp port %u) failed: %m", port);
        close(lfd);
        return UCS_ERR_IO_ERROR;
    }
    printf("Waiting for connection on tcp port %u...\n", port);
    fflush(stdout);

    struct pollfd pfd = {lfd, POLLIN, 0};
    int           n;
    do {
        n = poll(&pfd, 1, int(timeout_s) * 1000);
    } while ((n < 0) && (errno == EINTR));
    if (n <= 0) {
        if (n == 0) {
            error("no client connected to tcp port %u within %u s", port,
                  timeout_s);
        } else {
            error("poll(tcp port %u) failed: %m", port);
        }
        close(lfd);
        return UCS_ERR_TIMED_OUT;
    }

    m_fd = accept4(lfd, reinterpret_cast<struct sockaddr*>(&addr), &len,
                   SOCK_CLOEXEC);
    if (m_fd < 0) {
        error("accept(tcp port %u) failed: %m", port);
        close(lfd);
        return UCS_ERR_IO_ERROR;
    }
    close(lfd);

    char name[INET6_ADDRSTRLEN] = "?";
    inet_ntop(AF_INET6, &addr.sin6_addr, name, sizeof(name));
    m_peer = name;
    set_nodelay(m_fd);
    return UCS_OK;
}

ucs_status_t channel::connect_to(const std::string &host, uint16_t port,
                                 unsigned timeout_s)
{
    const auto      deadline = steady::now() + std::chrono::seconds(timeout_s);
    const std::string service = std::to_string(port);
    struct addrinfo hints     = {};
    struct addrinfo *res;
    int             ret, last_errno = 0;

    hints.ai_family   = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    ret = getaddrinfo(host.c_str(), service.c_str(), &hints, &res);
    if (ret != 0) {
        error("cannot resolve '%s': %s", host.c_str(), gai_strerror(ret));
        return UCS_ERR_UNREACHABLE;
    }

    /* The server may not listen yet: try every address until the deadline */
    do {
        for (struct addrinfo *ai = res; ai != nullptr; ai = ai->ai_next) {
            int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC |
                            SOCK_NONBLOCK, ai->ai_protocol);
            if (fd < 0) {
                last_errno = errno;
                continue;
            }
            if ((connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) &&
                (errno == EINPROGRESS)) {
                struct pollfd pfd = {fd, POLLOUT, 0};
                int           err = 0;
                socklen_t     len = sizeof(err);

                if (poll(&pfd, 1, std::max(ms_left(deadline), 1)) == 1) {
                    (void)getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
                    errno = err;
                } else {
                    errno = ETIMEDOUT;
                }
            } else {
                errno = 0;
            }
            if (errno == 0) {
                fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
                m_fd   = fd;
                m_peer = host;
                set_nodelay(fd);
                freeaddrinfo(res);
                return UCS_OK;
            }
            last_errno = errno;
            close(fd);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    } while (steady::now() < deadline);

    freeaddrinfo(res);
    errno = last_errno;
    error("connect(%s:%u) failed for %u s: %m", host.c_str(), port,
          timeout_s);
    return UCS_ERR_UNREACHABLE;
}

ucs_status_t channel::send_line(const std::string &line)
{
    const std::string l = line + "\n";
    size_t            done = 0;

    // bounded: each send advances done or fails
    while (done < l.size()) {
        ssize_t n = send(m_fd, l.data() + done, l.size() - done, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            error("send(control connection to %s) failed: %m",
                  m_peer.c_str());
            return UCS_ERR_CONNECTION_RESET;
        }
        done += size_t(n);
    }
    return UCS_OK;
}

ucs_status_t channel::poll_line(std::string *line, bool *got_p)
{
    size_t nl = m_buf.find('\n');

    if (nl == std::string::npos) {
        struct pollfd pfd = {m_fd, POLLIN, 0};

        if (poll(&pfd, 1, 0) > 0) {
            char    tmp[4096];
            ssize_t n = recv(m_fd, tmp, sizeof(tmp), MSG_DONTWAIT);

            if (n == 0) {
                error("the peer %s closed the control connection",
                      m_peer.c_str());
                return UCS_ERR_CONNECTION_RESET;
            } else if ((n < 0) && (errno != EAGAIN) && (errno != EINTR)) {
                error("recv(control connection from %s) failed: %m",
                      m_peer.c_str());
                return UCS_ERR_CONNECTION_RESET;
            } else if (n > 0) {
                m_buf.append(tmp, size_t(n));
            }
        }
        nl = m_buf.find('\n');
    }

    *got_p = (nl != std::string::npos);
    if (*got_p) {
        *line = m_buf.substr(0, nl);
        m_buf.erase(0, nl + 1);
    }
    return UCS_OK;
}

ucs_status_t channel::recv_line(std::string *line, unsigned timeout_s,
                                const std::function<void()> &idle)
{
    const auto   deadline = steady::now() + std::chrono::seconds(timeout_s);
    ucs_status_t status;
    bool         got;

    for (;;) {
        status = poll_line(line, &got);
        if ((status != UCS_OK) || got) {
            return status;
        }
        if (steady::now() > deadline) {
            error("no word from %s for %u s", m_peer.c_str(), timeout_s);
            return UCS_ERR_TIMED_OUT;
        }
        if (idle) {
            idle();
        } else {
            struct pollfd pfd = {m_fd, POLLIN, 0};
            (void)poll(&pfd, 1, ms_left(deadline));
        }
    }
}

} // namespace perftest
