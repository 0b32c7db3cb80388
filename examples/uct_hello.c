/*
 * uct_hello: a UCT "hello world" between two processes, which survives its
 * peer moving. The server waits for clients on a TCP port; the client
 * connects an RC endpoint to the server's (the addresses go over TCP) and
 * sends numbered greetings as active messages, each echoed back. When the
 * endpoint fails (the server's MAC moved, the server died, ...), the
 * client says so, makes a new endpoint pair over the same TCP connection
 * and goes on from the greeting that failed.
 *
 * Build it against an installed tree:
 *   cc -std=c11 -Wall -Werror -pedantic uct_hello.c -o uct_hello \
 *      $(pkg-config --cflags --libs ucx-ib)
 * and run it on the emulated fabric, as two hosts:
 *   UCX_IB_GLUE=emulated ./uct_hello -d mlx5_0:1 &
 *   UCX_IB_GLUE=emulated ./uct_hello -d mlx5_0:1 localhost
 * (options: -x rc_mlx5|rc_verbs|dc_mlx5 (DC: endpoints to the peer's
 * interface), -p PORT, -n greetings, -i usec between greetings, -r
 * reconnects before giving up). It builds unchanged against
 * any UCX that provides <uct/api/uct.h>. Exit status: 0 when every greeting
 * was echoed, 1 otherwise, 2 on a usage or setup error.
 */
#define _POSIX_C_SOURCE 200809L

#include <uct/api/uct.h>
#include <ucs/type/status.h>

#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define AM_GREETING  1
#define AM_ECHO      2
#define WAIT_SEC     30.0  /* longest wait for the peer */

typedef struct {
    const char *server;   /* NULL: this is the server */
    const char *dev;
    const char *tl;
    const char *port;
    unsigned   count;
    unsigned   interval_us;
    unsigned   max_reconnects;
} options_t;

typedef struct {
    uct_component_h     component;
    ucs_async_context_t *async;
    uct_worker_h        worker;
    uct_md_h            md;
    uct_iface_h         iface;
    uct_iface_attr_t    attr;
    uct_ep_h            ep;
    int                 sock;          /* TCP to the peer */
    ucs_status_t        ep_status;     /* set by the error handler */
    int64_t             last_greeting; /* server: the last one to echo */
    int64_t             last_echo;     /* client: the last one echoed */
} hello_t;

static double now_sec(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* ---- TCP: length-prefixed blobs ---- */

static int sock_write(int fd, const void *buf, size_t len)
{
    const char *p = buf;

    while (len > 0) {
        ssize_t n = send(fd, p, len, MSG_NOSIGNAL);
        if (n <= 0) {
            return -1;
        }
        p   += n;
        len -= (size_t)n;
    }
    return 0;
}

static int sock_read(int fd, void *buf, size_t len)
{
    char *p = buf;

    while (len > 0) {
        ssize_t n = recv(fd, p, len, 0);
        if (n <= 0) {
            return -1;
        }
        p   += n;
        len -= (size_t)n;
    }
    return 0;
}

static int send_blob(int fd, const void *buf, uint32_t len)
{
    return (sock_write(fd, &len, sizeof(len)) || sock_write(fd, buf, len)) ?
           -1 : 0;
}

/* A blob of exactly @a len bytes */
static int recv_blob(int fd, void *buf, uint32_t len)
{
    uint32_t got;

    if (sock_read(fd, &got, sizeof(got)) || (got != len)) {
        return -1;
    }
    return sock_read(fd, buf, len);
}

/* Every read of the peer waits at most WAIT_SEC */
static int bound_reads(int fd)
{
    struct timeval tv = {(time_t)WAIT_SEC, 0};

    if ((fd >= 0) &&
        (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) != 0)) {
        perror("uct_hello: setsockopt");
        close(fd);
        return -1;
    }
    return fd;
}

static int tcp_connect(const char *host, const char *port)
{
    struct addrinfo hints = {0}, *res, *ai;
    int fd = -1;

    hints.ai_socktype = SOCK_STREAM;
    if (getaddrinfo(host, port, &hints, &res) != 0) {
        fprintf(stderr, "uct_hello: cannot resolve %s\n", host);
        return -1;
    }
    for (ai = res; ai != NULL; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
        if ((fd >= 0) && (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)) {
            break;
        }
        if (fd >= 0) {
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(res);
    if (fd < 0) {
        fprintf(stderr, "uct_hello: cannot connect to %s:%s\n", host, port);
    }
    return bound_reads(fd);
}

static int tcp_accept_one(const char *port)
{
    struct sockaddr_in addr = {0};
    struct pollfd pfd;
    int one = 1, lfd, fd;

    lfd = socket(AF_INET, SOCK_STREAM, 0);
    if (lfd < 0) {
        perror("uct_hello: socket");
        return -1;
    }
    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    addr.sin_family      = AF_INET;
    addr.sin_port        = htons((uint16_t)atoi(port));
    addr.sin_addr.s_addr = htonl(INADDR_ANY);
    if ((bind(lfd, (struct sockaddr*)&addr, sizeof(addr)) != 0) ||
        (listen(lfd, 1) != 0)) {
        perror("uct_hello: bind/listen");
        close(lfd);
        return -1;
    }
    printf("server: waiting for a client on port %s\n", port);
    fflush(stdout);

    pfd.fd     = lfd;
    pfd.events = POLLIN;
    if (poll(&pfd, 1, (int)(WAIT_SEC * 1000)) != 1) {
        fprintf(stderr, "uct_hello: no client within %.0f s\n", WAIT_SEC);
        close(lfd);
        return -1;
    }
    fd = accept(lfd, NULL, NULL);
    close(lfd);
    return bound_reads(fd);
}

/* ---- UCT ---- */

/* Both messages carry a number; @a arg is where the last one goes */
static ucs_status_t on_number(void *arg, void *data, size_t length,
                              unsigned flags)
{
    uint64_t n;

    (void)flags;
    if (length >= sizeof(n)) {
        memcpy(&n, data, sizeof(n));
        *(int64_t*)arg = (int64_t)n;
    }
    return UCS_OK;
}

static ucs_status_t on_ep_error(void *arg, uct_ep_h ep, ucs_status_t status)
{
    hello_t *h = arg;

    (void)ep;
    h->ep_status = status;
    return UCS_OK;
}

static int setup(hello_t *h, const options_t *opts)
{
    uct_component_h *components;
    unsigned num, i;
    uct_md_config_t *md_config;
    uct_iface_config_t *config;
    uct_iface_params_t params;
    char md_name[64];
    ucs_status_t status;

    if (uct_query_components(&components, &num) != UCS_OK) {
        fprintf(stderr, "uct_hello: no components\n");
        return -1;
    }
    for (i = 0; i < num; ++i) {
        uct_component_attr_t attr;
        memset(&attr, 0, sizeof(attr));
        attr.field_mask = UCT_COMPONENT_ATTR_FIELD_NAME;
        if ((uct_component_query(components[i], &attr) == UCS_OK) &&
            !strcmp(attr.name, "ib")) {
            h->component = components[i];
        }
    }
    uct_release_component_list(components);
    if (h->component == NULL) {
        fprintf(stderr, "uct_hello: no \"ib\" component\n");
        return -1;
    }

    snprintf(md_name, sizeof(md_name), "%.*s",
             (int)strcspn(opts->dev, ":"), opts->dev);
    if ((ucs_async_context_create(UCS_ASYNC_MODE_THREAD_SPINLOCK,
                                  &h->async) != UCS_OK) ||
        (uct_worker_create(h->async, UCS_THREAD_MODE_SINGLE, &h->worker) !=
         UCS_OK) ||
        (uct_md_config_read(h->component, NULL, NULL, &md_config) != UCS_OK)) {
        fprintf(stderr, "uct_hello: cannot create the worker\n");
        return -1;
    }
    status = uct_md_open(h->component, md_name, md_config, &h->md);
    uct_config_release(md_config);
    if (status != UCS_OK) {
        fprintf(stderr, "uct_hello: memory domain %s: %s\n", md_name,
                ucs_status_string(status));
        return -1;
    }

    if (uct_md_iface_config_read(h->md, opts->tl, NULL, NULL, &config) !=
        UCS_OK) {
        fprintf(stderr, "uct_hello: no configuration for %s\n", opts->tl);
        return -1;
    }
    memset(&params, 0, sizeof(params));
    params.field_mask           = UCT_IFACE_PARAM_FIELD_OPEN_MODE |
                                  UCT_IFACE_PARAM_FIELD_DEVICE |
                                  UCT_IFACE_PARAM_FIELD_ERR_HANDLER |
                                  UCT_IFACE_PARAM_FIELD_ERR_HANDLER_ARG |
                                  UCT_IFACE_PARAM_FIELD_ERR_HANDLER_FLAGS;
    params.open_mode            = UCT_IFACE_OPEN_MODE_DEVICE;
    params.mode.device.tl_name  = opts->tl;
    params.mode.device.dev_name = opts->dev;
    params.err_handler          = on_ep_error;
    params.err_handler_arg      = h;
    params.err_handler_flags    = 0;
    status = uct_iface_open(h->md, h->worker, &params, config, &h->iface);
    uct_config_release(config);
    if (status != UCS_OK) {
        fprintf(stderr, "uct_hello: %s on %s: %s\n", opts->tl, opts->dev,
                ucs_status_string(status));
        return -1;
    }

    uct_iface_progress_enable(h->iface, UCT_PROGRESS_SEND | UCT_PROGRESS_RECV);
    if ((uct_iface_query(h->iface, &h->attr) != UCS_OK) ||
        (uct_iface_set_am_handler(h->iface, AM_GREETING, on_number,
                                  &h->last_greeting, 0) != UCS_OK) ||
        (uct_iface_set_am_handler(h->iface, AM_ECHO, on_number,
                                  &h->last_echo, 0) != UCS_OK)) {
        fprintf(stderr, "uct_hello: cannot set up %s\n", opts->tl);
        return -1;
    }
    return 0;
}

static void teardown(hello_t *h)
{
    if (h->ep != NULL) {
        uct_ep_destroy(h->ep);
    }
    if (h->iface != NULL) {
        uct_iface_close(h->iface);
    }
    if (h->md != NULL) {
        uct_md_close(h->md);
    }
    if (h->worker != NULL) {
        uct_worker_destroy(h->worker);
    }
    if (h->async != NULL) {
        ucs_async_context_destroy(h->async);
    }
    if (h->sock >= 0) {
        close(h->sock);
    }
}

/* A transport that connects to the peer's interface (DC, UD) rather than
 * to an endpoint of it (RC) */
static int connects_to_iface(const hello_t *h)
{
    return !(h->attr.cap.flags & UCT_IFACE_FLAG_CONNECT_TO_EP) &&
           (h->attr.cap.flags & UCT_IFACE_FLAG_CONNECT_TO_IFACE);
}

/* A new endpoint, connected to the peer's new one (RC) or to the peer's
 * interface (DC); both sides call it, and exchange their addresses */
static int connect_ep(hello_t *h)
{
    const int to_iface   = connects_to_iface(h);
    const size_t dev_len = h->attr.device_addr_len;
    const size_t len     = dev_len + (to_iface ? h->attr.iface_addr_len :
                                                 h->attr.ep_addr_len);
    char *mine = malloc(len), *theirs = malloc(len);
    const char *step = "";
    uct_ep_params_t params;
    ucs_status_t status;

    if (h->ep != NULL) {
        uct_ep_destroy(h->ep);
        h->ep = NULL;
    }
    h->ep_status = UCS_OK;

    memset(&params, 0, sizeof(params));
    params.field_mask = UCT_EP_PARAM_FIELD_IFACE;
    params.iface      = h->iface;
    if ((mine == NULL) || (theirs == NULL)) {
        status = UCS_ERR_NO_MEMORY;
    } else if (((status = uct_iface_get_device_address(
                         h->iface, (uct_device_addr_t*)mine)) != UCS_OK) ||
               (!to_iface &&
                ((status = uct_ep_create(&params, &h->ep)) != UCS_OK)) ||
               ((status = to_iface ?
                          uct_iface_get_address(
                                  h->iface,
                                  (uct_iface_addr_t*)(mine + dev_len)) :
                          uct_ep_get_address(
                                  h->ep, (uct_ep_addr_t*)(mine + dev_len))) !=
                UCS_OK)) {
        step = " (creating the endpoint)";
    } else if (send_blob(h->sock, mine, (uint32_t)len) ||
               recv_blob(h->sock, theirs, (uint32_t)len)) {
        /* the control connection closed: the peer has gone */
        status = UCS_ERR_UNREACHABLE;
        step   = " (peer unreachable: it closed the control connection)";
    } else if (to_iface) {
        params.field_mask |= UCT_EP_PARAM_FIELD_DEV_ADDR |
                             UCT_EP_PARAM_FIELD_IFACE_ADDR;
        params.dev_addr    = (const uct_device_addr_t*)theirs;
        params.iface_addr  = (const uct_iface_addr_t*)(theirs + dev_len);
        status             = uct_ep_create(&params, &h->ep);
        step               = " (creating the endpoint)";
    } else {
        status = uct_ep_connect_to_ep(h->ep, (uct_device_addr_t*)theirs,
                                      (uct_ep_addr_t*)(theirs + dev_len));
    }
    free(mine);
    free(theirs);
    if (status != UCS_OK) {
        fprintf(stderr, "uct_hello: connecting the endpoint failed: %s%s\n",
                ucs_status_string(status), step);
        return -1;
    }
    return 0;
}

/* Send message @a n with AM @a id, retrying while there is no room */
static ucs_status_t send_number(hello_t *h, uint8_t id, uint64_t n)
{
    double deadline = now_sec() + WAIT_SEC;
    ucs_status_t status;

    do {
        status = uct_ep_am_short(h->ep, id, n, NULL, 0);
        if (status != UCS_ERR_NO_RESOURCE) {
            return status;
        }
        uct_worker_progress(h->worker);
    } while (now_sec() < deadline);
    return UCS_ERR_TIMED_OUT;
}

/* Progress for @a usec, or until the TCP socket has something */
static int progress_for(hello_t *h, unsigned usec)
{
    double end = now_sec() + usec * 1e-6;
    struct pollfd pfd;

    do {
        uct_worker_progress(h->worker);
        pfd.fd     = h->sock;
        pfd.events = POLLIN;
        if (poll(&pfd, 1, 0) == 1) {
            return 1;
        }
    } while (now_sec() < end);
    return 0;
}

static int run_server(hello_t *h)
{
    unsigned echoed = 0, endpoints = 1;
    int64_t done = -1;
    double last_word;
    char cmd;

    if (connect_ep(h)) {
        return 2;
    }
    printf("server: connected to the client\n");
    fflush(stdout);

    h->last_greeting = -1;
    last_word = now_sec();
    for (;;) {
        if (now_sec() - last_word > WAIT_SEC) {
            fprintf(stderr, "uct_hello: no word from the client for %.0f s\n",
                    WAIT_SEC);
            return 1;
        }
        if (progress_for(h, 1000)) {
            last_word = now_sec();
            /* the client asks for a new endpoint pair, or leaves */
            if (sock_read(h->sock, &cmd, 1) != 0) {
                break;
            }
            if (connect_ep(h)) {
                return 2;
            }
            ++endpoints;
            printf("server: new endpoint for the client\n");
            fflush(stdout);
            continue;
        }
        if ((h->last_greeting > done) && (h->ep_status == UCS_OK) &&
            (send_number(h, AM_ECHO, (uint64_t)h->last_greeting) ==
             UCS_OK)) {
            done      = h->last_greeting;
            last_word = now_sec();
            ++echoed;
        }
    }

    printf("server: echoed %u greetings on %u endpoint(s); the client left\n",
           echoed, endpoints);
    return 0;
}

static int run_client(hello_t *h, const options_t *opts)
{
    unsigned n = 0, failures = 0, reconnects = 0;
    char cmd = 'r';

    if (connect_ep(h)) {
        return 2;
    }
    printf("client: connected to %s over %s/%s\n", opts->server, opts->tl,
           opts->dev);
    fflush(stdout);

    h->last_echo = -1;
    while (n < opts->count) {
        double start = now_sec();
        ucs_status_t status = send_number(h, AM_GREETING, n);

        /* wait for the echo, or the endpoint's failure */
        while ((status == UCS_OK) && (h->last_echo < (int64_t)n) &&
               (h->ep_status == UCS_OK) && (now_sec() - start < WAIT_SEC)) {
            uct_worker_progress(h->worker);
        }

        if ((status == UCS_OK) && (h->last_echo >= (int64_t)n)) {
            if ((n % 10) == 0) {
                printf("client: greeting %u echoed\n", n);
                fflush(stdout);
            }
            ++n;
            progress_for(h, opts->interval_us);
            continue;
        }

        ++failures;
        printf("client: greeting %u failed after %.2f s: %s; %s\n",
               n, now_sec() - start,
               ucs_status_string((h->ep_status != UCS_OK) ? h->ep_status :
                                 (status != UCS_OK) ? status :
                                 UCS_ERR_TIMED_OUT),
               (reconnects < opts->max_reconnects) ? "reconnecting" :
                                                     "giving up");
        fflush(stdout);
        if (reconnects >= opts->max_reconnects) {
            break;
        }
        if (sock_write(h->sock, &cmd, 1)) {
            fprintf(stderr, "uct_hello: peer unreachable: it closed the "
                    "control connection\n");
            return 2;
        }
        if (connect_ep(h)) {
            return 2;
        }
        ++reconnects;
    }

    printf("client: %u greetings echoed, %u endpoint failure(s), %u "
           "reconnect(s)\n", n, failures, reconnects);
    return (n == opts->count) ? 0 : 1;
}

static void usage(void)
{
    printf("usage: uct_hello [-d dev:port] [-x tl] [-p port] [-n count] "
           "[-i usec] [-r reconnects] [server]\n"
           "  without a server name: wait for a client on the port\n");
}

int main(int argc, char **argv)
{
    options_t opts = {NULL, "mlx5_0:1", "rc_mlx5", "13338", 100, 10000, 3};
    hello_t h;
    int c, ret;

    while ((c = getopt(argc, argv, "d:x:p:n:i:r:h")) != -1) {
        switch (c) {
        case 'd': opts.dev = optarg; break;
        case 'x': opts.tl = optarg; break;
        case 'p': opts.port = optarg; break;
        case 'n': opts.count = (unsigned)strtoul(optarg, NULL, 0); break;
        case 'i': opts.interval_us = (unsigned)strtoul(optarg, NULL, 0); break;
        case 'r':
            opts.max_reconnects = (unsigned)strtoul(optarg, NULL, 0);
            break;
        case 'h': usage(); return 0;
        default:  usage(); return 2;
        }
    }
    if (optind < argc) {
        opts.server = argv[optind];
    }

    memset(&h, 0, sizeof(h));
    h.sock = -1;
    if (setup(&h, &opts) != 0) {
        teardown(&h);
        return 2;
    }

    h.sock = (opts.server == NULL) ? tcp_accept_one(opts.port) :
                                     tcp_connect(opts.server, opts.port);
    if (h.sock < 0) {
        teardown(&h);
        return 2;
    }

    ret = (opts.server == NULL) ? run_server(&h) : run_client(&h, &opts);
    teardown(&h);
    return ret;
}
