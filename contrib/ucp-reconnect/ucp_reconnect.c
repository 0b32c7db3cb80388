/*
 * A UCP client that reconnects to a server whose MAC moved (issue 23): the
 * client sends tagged messages of a known pattern to the server, each
 * followed by a flush of the endpoint (the message is at the server); when
 * either fails (the live endpoint's QP keeps the old MAC and retries out)
 * it closes the endpoint and its worker, and creates a new worker on the
 * same context (whose md keeps the address handles) and an endpoint to the
 * same worker address, at most RECONNECTS times, and sends the message
 * again. The server checks
 * every message and that each of 0..COUNT-1 arrived. The worker address
 * goes over a TCP connection on localhost, which also tells the server
 * when the client is done.
 *
 *   ucp_reconnect server PORT COUNT
 *   ucp_reconnect client PORT COUNT RECONNECTS INTERVAL_MS
 *
 * The client sends a message every INTERVAL_MS milliseconds and prints
 * "client: sent N" after each tenth (the script moves the MAC on one), "client: endpoint failed: STATUS" for each
 * failure, and ends with "client: N of COUNT sent, F endpoint failure(s),
 * R reconnect(s)". The server ends with "server: N messages, M of COUNT
 * distinct, E data errors". Exit status 0 when every message arrived
 * intact, each of them at least once.
 */
#include <ucp/api/ucp.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MSG_SIZE      1024
#define TAG           0x1234
#define SEND_LIMIT_S  20.0

static double now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void fill(uint8_t *buf, uint32_t seq)
{
    memcpy(buf, &seq, sizeof(seq));
    for (size_t i = sizeof(seq); i < MSG_SIZE; ++i) {
        buf[i] = (uint8_t)(i * 13 + seq);
    }
}

static int intact(const uint8_t *buf, uint32_t *seq)
{
    memcpy(seq, buf, sizeof(*seq));
    for (size_t i = sizeof(*seq); i < MSG_SIZE; ++i) {
        if (buf[i] != (uint8_t)(i * 13 + *seq)) {
            return 0;
        }
    }
    return 1;
}

static int full_io(int fd, void *buf, size_t len, int out)
{
    uint8_t *p = buf;

    while (len > 0) {
        ssize_t n = out ? send(fd, p, len, MSG_NOSIGNAL) : recv(fd, p, len, 0);

        if (n <= 0) {
            return -1;
        }
        p   += n;
        len -= (size_t)n;
    }
    return 0;
}

struct ucp {
    ucp_context_h context;
    ucp_worker_h  worker;
};

static int worker_open(struct ucp *u)
{
    ucp_worker_params_t params = {0};
    ucs_status_t        status;

    params.field_mask  = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
    params.thread_mode = UCS_THREAD_MODE_SINGLE;
    status = ucp_worker_create(u->context, &params, &u->worker);
    if (status != UCS_OK) {
        fprintf(stderr, "ucp_worker_create: %s\n", ucs_status_string(status));
        return -1;
    }
    return 0;
}

static int ucp_open(struct ucp *u)
{
    ucp_params_t params = {0};
    ucs_status_t status;

    params.field_mask = UCP_PARAM_FIELD_FEATURES;
    params.features   = UCP_FEATURE_TAG;
    status = ucp_init(&params, NULL, &u->context);
    if (status != UCS_OK) {
        fprintf(stderr, "ucp_init: %s\n", ucs_status_string(status));
        return -1;
    }
    if (worker_open(u) != 0) {
        ucp_cleanup(u->context);
        return -1;
    }
    return 0;
}

static void ucp_close(struct ucp *u)
{
    ucp_worker_destroy(u->worker);
    ucp_cleanup(u->context);
}

/* Progress until @a request completes or @a limit seconds pass; its status */
static ucs_status_t wait_request(ucp_worker_h worker, void *request,
                                 double limit)
{
    double       deadline = now() + limit;
    ucs_status_t status;

    if (request == NULL) {
        return UCS_OK;
    }
    if (UCS_PTR_IS_ERR(request)) {
        return UCS_PTR_STATUS(request);
    }
    while ((status = ucp_request_check_status(request)) == UCS_INPROGRESS) {
        ucp_worker_progress(worker);
        if (now() > deadline) {
            ucp_request_cancel(worker, request);
            while (ucp_request_check_status(request) == UCS_INPROGRESS) {
                ucp_worker_progress(worker);
            }
            ucp_request_free(request);
            return UCS_ERR_TIMED_OUT;
        }
    }
    ucp_request_free(request);
    return status;
}

/* ---------------------------------------------------------------- server */

static int serve(int port, unsigned count)
{
    struct sockaddr_in sa = {0};
    struct ucp         u;
    ucp_address_t      *address;
    size_t             address_len;
    uint64_t           len64;
    uint8_t            *buf;
    unsigned           messages = 0, errors = 0, distinct = 0;
    uint8_t            *seen;
    int                lfd, fd = -1, one = 1, rc = 1;

    buf  = malloc(MSG_SIZE);
    seen = calloc(count, 1);
    lfd = socket(AF_INET, SOCK_STREAM, 0);
    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    sa.sin_family      = AF_INET;
    sa.sin_port        = htons((uint16_t)port);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if ((buf == NULL) || (seen == NULL) || (lfd < 0) ||
        bind(lfd, (struct sockaddr*)&sa, sizeof(sa)) || listen(lfd, 1)) {
        perror("server: listen");
        goto out;
    }
    if (ucp_open(&u) != 0) {
        goto out;
    }
    if (ucp_worker_get_address(u.worker, &address, &address_len) != UCS_OK) {
        fprintf(stderr, "server: ucp_worker_get_address failed\n");
        goto out_ucp;
    }
    fd    = accept(lfd, NULL, NULL);
    len64 = address_len;
    if ((fd < 0) || full_io(fd, &len64, sizeof(len64), 1) ||
        full_io(fd, address, address_len, 1)) {
        perror("server: sending the worker address");
        goto out_address;
    }

    /* receive until the client closes the TCP connection */
    for (;;) {
        ucp_request_param_t param = {0};
        struct pollfd       pfd   = {fd, POLLIN, 0};
        void                *request;
        uint32_t            seq;

        request = ucp_tag_recv_nbx(u.worker, buf, MSG_SIZE, TAG, (ucp_tag_t)-1,
                                   &param);
        while (UCS_PTR_IS_PTR(request) &&
               (ucp_request_check_status(request) == UCS_INPROGRESS)) {
            ucp_worker_progress(u.worker);
            if ((poll(&pfd, 1, 0) > 0) && (pfd.revents & (POLLIN | POLLHUP))) {
                ucp_request_cancel(u.worker, request);
                (void)wait_request(u.worker, request, 10.0);
                goto done;
            }
        }
        if (wait_request(u.worker, request, 1.0) != UCS_OK) {
            fprintf(stderr, "server: a receive failed\n");
            ++errors;
            continue;
        }
        ++messages;
        if (!intact(buf, &seq) || (seq >= count)) {
            ++errors;
        } else if (!seen[seq]) {
            seen[seq] = 1;
            ++distinct;
        }
    }
done:
    printf("server: %u messages, %u of %u distinct, %u data errors\n",
           messages, distinct, count, errors);
    rc = (errors != 0) || (distinct != count);
    /* keep the endpoints the client made alive until it is gone */
out_address:
    ucp_worker_release_address(u.worker, address);
out_ucp:
    ucp_close(&u);
out:
    if (fd >= 0) {
        close(fd);
    }
    if (lfd >= 0) {
        close(lfd);
    }
    free(seen);
    free(buf);
    return rc;
}

/* ---------------------------------------------------------------- client */

struct client_ep {
    ucp_ep_h     ep;
    ucs_status_t failure; /* set by the error handler */
};

static void on_ep_error(void *arg, ucp_ep_h ep, ucs_status_t status)
{
    struct client_ep *c = arg;

    (void)ep;
    c->failure = status;
}

static ucs_status_t client_connect(ucp_worker_h worker, ucp_address_t *address,
                                   struct client_ep *c)
{
    ucp_ep_params_t params = {0};

    params.field_mask      = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS |
                             UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE |
                             UCP_EP_PARAM_FIELD_ERR_HANDLER;
    params.address         = address;
    params.err_mode        = UCP_ERR_HANDLING_MODE_PEER;
    params.err_handler.cb  = on_ep_error;
    params.err_handler.arg = c;
    c->failure             = UCS_OK;
    return ucp_ep_create(worker, &params, &c->ep);
}

static void client_disconnect(ucp_worker_h worker, struct client_ep *c)
{
    ucp_request_param_t param = {0};

    param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
    param.flags        = UCP_EP_CLOSE_FLAG_FORCE;
    (void)wait_request(worker, ucp_ep_close_nbx(c->ep, &param), 10.0);
    c->ep = NULL;
}

static int run_client(int port, unsigned count, unsigned max_reconnects,
                      unsigned interval_ms)
{
    struct sockaddr_in sa = {0};
    struct client_ep   c  = {0};
    struct ucp         u;
    ucp_address_t      *address = NULL;
    uint64_t           len64;
    uint8_t            *buf;
    unsigned           sent = 0, failures = 0, reconnects = 0;
    int                fd, rc = 1;

    buf = malloc(MSG_SIZE);
    fd  = socket(AF_INET, SOCK_STREAM, 0);
    sa.sin_family      = AF_INET;
    sa.sin_port        = htons((uint16_t)port);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if ((buf == NULL) || (fd < 0) ||
        connect(fd, (struct sockaddr*)&sa, sizeof(sa)) ||
        full_io(fd, &len64, sizeof(len64), 0) || (len64 > (1u << 20)) ||
        ((address = malloc(len64)) == NULL) ||
        full_io(fd, address, len64, 0)) {
        perror("client: receiving the server's worker address");
        goto out;
    }
    if (ucp_open(&u) != 0) {
        goto out;
    }
    if (client_connect(u.worker, address, &c) != UCS_OK) {
        fprintf(stderr, "client: ucp_ep_create failed\n");
        goto out_ucp;
    }

    while (sent < count) {
        ucp_request_param_t param = {0};
        ucs_status_t        status;

        fill(buf, sent);
        status = wait_request(u.worker,
                              ucp_tag_send_nbx(c.ep, buf, MSG_SIZE, TAG,
                                               &param), SEND_LIMIT_S);
        if (status == UCS_OK) {
            status = wait_request(u.worker, ucp_ep_flush_nbx(c.ep, &param),
                                  SEND_LIMIT_S);
        }
        if ((status == UCS_OK) && (c.failure == UCS_OK)) {
            if ((++sent % 10) == 0) {
                printf("client: sent %u\n", sent);
                fflush(stdout);
            }
            usleep(interval_ms * 1000);
            continue;
        }

        ++failures;
        printf("client: endpoint failed: %s\n",
               ucs_status_string((c.failure != UCS_OK) ? c.failure : status));
        fflush(stdout);
        client_disconnect(u.worker, &c);
        if (reconnects == max_reconnects) {
            break;
        }
        ++reconnects;
        /* a new worker on the same context: the md, and the address
         * handles it keeps, are the context's */
        ucp_worker_destroy(u.worker);
        if (worker_open(&u) != 0) {
            ucp_cleanup(u.context);
            goto out;
        }
        if (client_connect(u.worker, address, &c) != UCS_OK) {
            fprintf(stderr, "client: ucp_ep_create failed\n");
            break;
        }
    }

    printf("client: %u of %u sent, %u endpoint failure(s), %u reconnect(s)\n",
           sent, count, failures, reconnects);
    rc = (sent != count);
    if (c.ep != NULL) {
        client_disconnect(u.worker, &c);
    }
out_ucp:
    ucp_close(&u);
out:
    if (fd >= 0) {
        close(fd); /* the server's end of the run */
    }
    free(address);
    free(buf);
    return rc;
}

int main(int argc, char **argv)
{
    if ((argc == 4) && !strcmp(argv[1], "server")) {
        return serve(atoi(argv[2]), (unsigned)atoi(argv[3]));
    }
    if ((argc == 6) && !strcmp(argv[1], "client")) {
        return run_client(atoi(argv[2]), (unsigned)atoi(argv[3]),
                          (unsigned)atoi(argv[4]), (unsigned)atoi(argv[5]));
    }
    fprintf(stderr, "usage: %s server PORT COUNT | client PORT COUNT RECONNECTS INTERVAL_MS\n",
            argv[0]);
    return 2;
}
