/*
 * fabric_peer: one host of a two-process test on the emulated fabric. The
 * fabric tests (test_fabric.cc) start a server and a client, each joined
 * to the test's fabric as its own host, and give them the two ends of a
 * socket pair (--fd) to exchange addresses and checks, as two programs on
 * two machines would over TCP. The client drives the scenario; both print
 * what they saw on stdout ("RESULT <what> <value>") and exit 0 only if
 * everything they checked held.
 *
 *   fabric_peer --role server|client --fd N --tl rc_mlx5 --dev mlx5_0:1
 *               --scenario traffic|mac_move|peer_killed|flap|isolate|damage|
 *                          bulk|huge|neigh_events|list
 *               [--count N]
 *               [--baseline 1] [--ah-cache transient|validated]
 *
 * --baseline 1 connects rc_mlx5 endpoints with a cached AH instead
 * (fabric_peer_baseline.h): after a MAC move, every new endpoint fails.
 * --ah-cache sets the md's UCX_IB_AH_CACHE; with "validated", the client of
 * mac_move also reports what its cache did ("av_cache").
 *
 * "huge" puts --count MiB in one put_zcopy and reads them back in one
 * get_zcopy, reporting each side's peak memory growth during the transfers.
 *
 * "list" only prints how many devices the process sees (0 when it could
 * not join the fabric) and exits.
 */
#include "fabric_peer_baseline.h"

#include <uct/api/tools/ib_ah_cache.h>
#include <uct/ib/base/ib_neigh.h>

#include <uct/api/tools/ib_glue.h>

#include <uct/api/uct.h>
#include <emu/api/fabric_ctl.h>

#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

using steady = std::chrono::steady_clock;

constexpr uint8_t  AM_ID       = 3;
constexpr size_t   MEM_SIZE    = 64 * 1024;
constexpr auto     WAIT_LIMIT  = std::chrono::seconds(60);

struct options {
    std::string role;
    int         fd       = -1;
    std::string tl       = "rc_mlx5";
    std::string dev      = "mlx5_0:1";
    std::string scenario = "traffic";
    unsigned    count    = 1000;
    bool        baseline = false; /* connect with a cached AH */
    std::string ah_cache = "transient";
};

options          g_opts;
uct_component_h  g_ib;
uct_worker_h     g_worker;
uct_md_h         g_md;
uct_iface_h      g_iface;
uct_ep_h         g_ep;
uct_iface_attr_t g_attr;
bool             g_ok = true;

/* What arrived of the current stream */
uint64_t         g_am_count;
uint64_t         g_am_next;     /* the sequence number expected next */
bool             g_am_in_order = true;
std::string      g_am_disorder; /* what the first one out of order was */

/* A new stream begins: nothing of it arrived */
void stream_reset()
{
    g_am_next     = 0;
    g_am_count    = 0;
    g_am_in_order = true;
    g_am_disorder.clear();
}
ucs_status_t     g_ep_error    = UCS_OK;
unsigned         g_ep_errors   = 0; /* error callbacks of the current ep */

void result(const char *what, const std::string &value)
{
    printf("RESULT %s %s\n", what, value.c_str());
    fflush(stdout);
}

void check(bool cond, const char *what)
{
    if (!cond) {
        result("FAILED", what);
        g_ok = false;
    }
}

[[noreturn]] void die(const std::string &what, ucs_status_t status)
{
    fprintf(stderr, "fabric_peer %s: %s: %s\n", g_opts.role.c_str(),
            what.c_str(), ucs_status_string(status));
    result("FAILED", what);
    exit(2);
}

/* ---- the control channel: lines of text ---- */

/* Writes to a peer that stopped reading fail after WAIT_LIMIT */
void ctl_bound_writes()
{
    struct timeval tv = {std::chrono::duration_cast<std::chrono::seconds>(
                                 WAIT_LIMIT).count(), 0};

    if (setsockopt(g_opts.fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) != 0) {
        die("setsockopt(SO_SNDTIMEO) on the control channel",
            UCS_ERR_IO_ERROR);
    }
}

void ctl_send(const std::string &line)
{
    std::string l = line + "\n";
    size_t done   = 0;

    // bounded: each write advances done or dies
    while (done < l.size()) {
        ssize_t n = write(g_opts.fd, l.data() + done, l.size() - done);
        if (n <= 0) {
            die("control channel write", UCS_ERR_IO_ERROR);
        }
        done += n;
    }
}

/* The next line, progressing the worker while waiting */
std::string ctl_recv()
{
    static std::string buf;
    auto deadline = steady::now() + WAIT_LIMIT;

    for (;;) {
        size_t nl = buf.find('\n');
        if (nl != std::string::npos) {
            std::string line = buf.substr(0, nl);
            buf.erase(0, nl + 1);
            return line;
        }

        struct pollfd pfd = {g_opts.fd, POLLIN, 0};
        if (g_worker != nullptr) {
            uct_worker_progress(g_worker);
        }
        if (poll(&pfd, 1, 1) > 0) {
            char tmp[4096];
            ssize_t n = read(g_opts.fd, tmp, sizeof(tmp));
            if (n <= 0) {
                die("control channel closed", UCS_ERR_CONNECTION_RESET);
            }
            buf.append(tmp, n);
        }
        if (steady::now() > deadline) {
            die("no word from the peer", UCS_ERR_TIMED_OUT);
        }
    }
}

std::string hex(const void *p, size_t len)
{
    static const char digits[] = "0123456789abcdef";
    const uint8_t *b = static_cast<const uint8_t*>(p);
    std::string s;

    for (size_t i = 0; i < len; ++i) {
        s += digits[b[i] >> 4];
        s += digits[b[i] & 15];
    }
    return s;
}

std::vector<uint8_t> unhex(const std::string &s)
{
    std::vector<uint8_t> out;

    for (size_t i = 0; i + 1 < s.size(); i += 2) {
        out.push_back(static_cast<uint8_t>(std::stoul(s.substr(i, 2),
                                                       nullptr, 16)));
    }
    return out;
}

/* ---- UCT ---- */

template <typename F>
void wait_for(F done, const char *what)
{
    auto deadline = steady::now() + WAIT_LIMIT;

    while (!done()) {
        uct_worker_progress(g_worker);
        if (steady::now() > deadline) {
            die(what, UCS_ERR_TIMED_OUT);
        }
    }
}

/* Retry op while the transport has no resources */
template <typename F>
ucs_status_t retry(F op)
{
    auto deadline = steady::now() + WAIT_LIMIT;
    ucs_status_t status;

    while ((status = op()) == UCS_ERR_NO_RESOURCE) {
        uct_worker_progress(g_worker);
        if (steady::now() > deadline) {
            return UCS_ERR_TIMED_OUT;
        }
    }
    return status;
}

void am_out_of_order(const std::string &what)
{
    if (g_am_in_order) {
        g_am_disorder = what + " (message " + std::to_string(g_am_count) +
                        " of the stream)";
    }
    g_am_in_order = false;
}

ucs_status_t on_am(void*, void *data, size_t length, unsigned)
{
    uint64_t seq;

    if (length < sizeof(seq)) {
        am_out_of_order(std::to_string(length) + " bytes");
        return UCS_OK;
    }
    memcpy(&seq, data, sizeof(seq));
    if (seq != g_am_next) {
        am_out_of_order("sequence " + std::to_string(seq) + ", expected " +
                        std::to_string(g_am_next));
    }
    /* the rest of the message is a pattern of its sequence number */
    for (size_t i = sizeof(seq); i < length; ++i) {
        if (static_cast<const uint8_t*>(data)[i] != uint8_t(seq + i)) {
            am_out_of_order("sequence " + std::to_string(seq) + ": byte " +
                            std::to_string(i) + " of " +
                            std::to_string(length) + " wrong");
            break;
        }
    }
    g_am_next = seq + 1;
    ++g_am_count;
    return UCS_OK;
}

ucs_status_t on_error(void*, uct_ep_h, ucs_status_t status)
{
    g_ep_error = status;
    ++g_ep_errors;
    return UCS_OK;
}

void open_iface()
{
    uct_md_config_t *md_config;
    uct_iface_config_t *config;
    uct_iface_params_t params = {};
    std::string md_name       = g_opts.dev.substr(0, g_opts.dev.find(':'));
    ucs_status_t status;

    status = uct_md_config_read(g_ib, nullptr, nullptr, &md_config);
    if (status != UCS_OK) {
        die("uct_md_config_read", status);
    }
    status = uct_config_modify(md_config, "AH_CACHE", g_opts.ah_cache.c_str());
    if (status != UCS_OK) {
        die("AH_CACHE=" + g_opts.ah_cache, status);
    }
    status = uct_md_open(g_ib, md_name.c_str(), md_config, &g_md);
    uct_config_release(md_config);
    if (status != UCS_OK) {
        die("uct_md_open(" + md_name + ")", status);
    }

    status = uct_md_iface_config_read(g_md, g_opts.tl.c_str(), nullptr,
                                      nullptr, &config);
    if (status != UCS_OK) {
        die("uct_md_iface_config_read", status);
    }
    params.field_mask           = UCT_IFACE_PARAM_FIELD_OPEN_MODE |
                                  UCT_IFACE_PARAM_FIELD_DEVICE |
                                  UCT_IFACE_PARAM_FIELD_ERR_HANDLER |
                                  UCT_IFACE_PARAM_FIELD_ERR_HANDLER_ARG |
                                  UCT_IFACE_PARAM_FIELD_ERR_HANDLER_FLAGS;
    params.open_mode            = UCT_IFACE_OPEN_MODE_DEVICE;
    params.mode.device.tl_name  = g_opts.tl.c_str();
    params.mode.device.dev_name = g_opts.dev.c_str();
    params.err_handler          = on_error;
    params.err_handler_arg      = nullptr;
    params.err_handler_flags    = 0;
    status = uct_iface_open(g_md, g_worker, &params, config, &g_iface);
    uct_config_release(config);
    if (status != UCS_OK) {
        die("uct_iface_open(" + g_opts.tl + "/" + g_opts.dev + ")", status);
    }

    uct_iface_progress_enable(g_iface, UCT_PROGRESS_SEND | UCT_PROGRESS_RECV);
    status = uct_iface_set_am_handler(g_iface, AM_ID, on_am, nullptr, 0);
    if (status != UCS_OK) {
        die("uct_iface_set_am_handler", status);
    }
    status = uct_iface_query(g_iface, &g_attr);
    if (status != UCS_OK) {
        die("uct_iface_query", status);
    }
}

/* A fresh endpoint connected to the peer's: both sides do the same */
void connect_ep()
{
    uct_ep_params_t ep_params = {};
    std::vector<uint8_t> dev(g_attr.device_addr_len), ep(g_attr.ep_addr_len);
    std::string line;
    ucs_status_t status;

    ep_params.field_mask = UCT_EP_PARAM_FIELD_IFACE;
    ep_params.iface      = g_iface;
    status = uct_ep_create(&ep_params, &g_ep);
    if (status != UCS_OK) {
        die("uct_ep_create", status);
    }

    if ((uct_iface_get_device_address(
                 g_iface, reinterpret_cast<uct_device_addr_t*>(dev.data())) !=
         UCS_OK) ||
        (uct_ep_get_address(g_ep, reinterpret_cast<uct_ep_addr_t*>(
                                          ep.data())) != UCS_OK)) {
        die("addresses", UCS_ERR_IO_ERROR);
    }
    ctl_send("ADDR " + hex(dev.data(), dev.size()) + " " +
             hex(ep.data(), ep.size()));

    line = ctl_recv();
    if (line.compare(0, 5, "ADDR ") != 0) {
        die("expected the peer's address, got '" + line + "'",
            UCS_ERR_INVALID_PARAM);
    }
    size_t sp                   = line.find(' ', 5);
    std::vector<uint8_t> rdev   = unhex(line.substr(5, sp - 5));
    std::vector<uint8_t> rep    = unhex(line.substr(sp + 1));

    if (g_opts.baseline) {
        status = fabric_peer_baseline_connect(
                g_ep, reinterpret_cast<uct_device_addr_t*>(rdev.data()),
                reinterpret_cast<uct_ep_addr_t*>(rep.data()));
    } else {
        status = uct_ep_connect_to_ep(
                g_ep, reinterpret_cast<uct_device_addr_t*>(rdev.data()),
                reinterpret_cast<uct_ep_addr_t*>(rep.data()));
    }
    result("connect", ucs_status_string(status));
    if (status != UCS_OK) {
        die("uct_ep_connect_to_ep", status);
    }
}

void destroy_ep()
{
    uct_ep_destroy(g_ep);
    g_ep        = nullptr;
    g_ep_error  = UCS_OK;
    g_ep_errors = 0;
}

/* Send count messages numbered from first, of a size cycling through
 * short, bcopy and several MTUs (zcopy) */
struct am_msg {
    uint64_t             seq;
    size_t               len;
    std::vector<uint8_t> buf;
};

size_t pack_msg(void *dest, void *arg)
{
    am_msg *m = static_cast<am_msg*>(arg);

    memcpy(dest, m->buf.data(), m->len);
    return m->len;
}

ucs_status_t send_am(uint64_t seq, size_t len, uct_mem_h memh,
                     uint8_t *zbuf)
{
    am_msg m;

    m.seq = seq;
    m.len = std::max(len, sizeof(seq));
    m.buf.resize(m.len);
    memcpy(m.buf.data(), &seq, sizeof(seq));
    for (size_t i = sizeof(seq); i < m.len; ++i) {
        m.buf[i] = uint8_t(seq + i);
    }

    if (m.len <= g_attr.cap.am.max_short) {
        uint64_t hdr;
        memcpy(&hdr, m.buf.data(), sizeof(hdr));
        return retry([&] {
            return uct_ep_am_short(g_ep, AM_ID, hdr, m.buf.data() + 8,
                                   unsigned(m.len - 8));
        });
    }

    if (m.len <= g_attr.cap.am.max_bcopy) {
        return retry([&] {
            ssize_t n = uct_ep_am_bcopy(g_ep, AM_ID, pack_msg, &m, 0);
            return (n < 0) ? static_cast<ucs_status_t>(n) : UCS_OK;
        });
    }

    /* zcopy: the header carries the sequence number */
    uct_completion_t comp = {[](uct_completion_t*) {}, 1, UCS_OK};
    uct_iov_t iov         = {zbuf, m.len - 8, memh, 0, 1};
    ucs_status_t status;

    memcpy(zbuf, m.buf.data() + 8, m.len - 8);
    status = retry([&] {
        return uct_ep_am_zcopy(g_ep, AM_ID, m.buf.data(), 8, &iov, 1, 0,
                               &comp);
    });
    if (status == UCS_INPROGRESS) {
        wait_for([&] { return comp.count == 0; }, "am_zcopy completion");
        status = comp.status;
    }
    return status;
}

/* Cycling through short, bcopy and zcopy sizes; the largest spans
 * several path MTUs */
size_t message_size(uint64_t seq)
{
    const size_t sizes[] = {8, g_attr.cap.am.max_short, 200,
                            g_attr.cap.am.max_bcopy,
                            g_attr.cap.am.max_bcopy + 1,
                            g_attr.cap.am.max_zcopy};
    return std::max<size_t>(8, sizes[seq % (sizeof(sizes) /
                                            sizeof(sizes[0]))]);
}

ucs_status_t flush_ep()
{
    uct_completion_t comp = {[](uct_completion_t*) {}, 1, UCS_OK};
    ucs_status_t status   = retry([&] {
        return uct_ep_flush(g_ep, 0, &comp);
    });

    if (status == UCS_INPROGRESS) {
        wait_for([&] { return (comp.count == 0) || (g_ep_error != UCS_OK); },
                 "flush");
        status = (comp.count == 0) ? comp.status : g_ep_error;
    }
    return status;
}

/* Send count AMs from seq first; the status of the first failure */
ucs_status_t stream(uint64_t first, unsigned count, uct_mem_h memh,
                    uint8_t *zbuf)
{
    for (uint64_t seq = first; seq < first + count; ++seq) {
        ucs_status_t status = send_am(seq, message_size(seq), memh, zbuf);
        if ((status != UCS_OK) && (status != UCS_INPROGRESS)) {
            return status;
        }
    }
    return flush_ep();
}

/* ---- the scenarios ---- */

struct memory {
    std::vector<uint64_t> buf = std::vector<uint64_t>(MEM_SIZE / 8);
    uct_mem_h             memh = nullptr;
};

void register_memory(memory *m)
{
    ucs_status_t status = uct_md_mem_reg(g_md, m->buf.data(), MEM_SIZE, 0,
                                         &m->memh);
    if (status != UCS_OK) {
        die("uct_md_mem_reg", status);
    }
}

/*
 * What the emulated NIC wrote into this process's memory (remote writes and
 * atomics, executed by its engine thread) is ordered before the client's
 * request that follows them, but only through sockets, which
 * ThreadSanitizer does not see; taking the device's lock once (any call of
 * its test API does) gives it the ordering. Hardware needs nothing here.
 */
void sync_with_device()
{
    (void)uct_ib_emu_clock_now();
}

/* The process's peak resident memory so far (VmHWM), in KiB */
uint64_t peak_rss_kib()
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    uint64_t kib = 0;

    if (f == nullptr) {
        die("cannot open /proc/self/status", UCS_ERR_IO_ERROR);
    }
    while (fgets(line, sizeof(line), f) != nullptr) {
        if (sscanf(line, "VmHWM: %" SCNu64, &kib) == 1) {
            break;
        }
    }
    fclose(f);
    return kib;
}

/* The server's side: answer what the client asks for */
void serve(memory *mem)
{
    std::vector<uint8_t> big;          /* the bulk scenario's region */
    uct_mem_h            big_memh = nullptr;
    uint64_t             big_peak = 0; /* peak memory once it was made */

    for (;;) {
        std::string line = ctl_recv();

        if (line == "MEM?") {
            uct_md_attr_t attr;
            std::vector<uint8_t> rkey;

            uct_md_query(g_md, &attr);
            rkey.resize(attr.rkey_packed_size);
            uct_md_mkey_pack(g_md, mem->memh, rkey.data());
            ctl_send("MEM " + std::to_string(uintptr_t(mem->buf.data())) +
                     " " + hex(rkey.data(), rkey.size()));
        } else if (line.compare(0, 7, "EXPECT ") == 0) {
            uint64_t n = std::stoull(line.substr(7));
            auto deadline = steady::now() + WAIT_LIMIT;

            while ((g_am_count < n) && (steady::now() < deadline)) {
                uct_worker_progress(g_worker);
            }
            ctl_send("GOT " + std::to_string(g_am_count) + " " +
                     (g_am_in_order ? "in-order" : "disorder: " +
                                                   g_am_disorder));
        } else if (line.compare(0, 5, "SEND ") == 0) {
            uint64_t n = std::stoull(line.substr(5));
            ucs_status_t status = stream(0, unsigned(n), mem->memh,
                                         reinterpret_cast<uint8_t*>(
                                                 mem->buf.data()) + 32768);
            ctl_send(std::string("SENT ") + ucs_status_string(status));
        } else if (line.compare(0, 5, "WORD ") == 0) {
            size_t i = std::stoul(line.substr(5));

            sync_with_device();
            ctl_send("VALUE " + std::to_string(mem->buf[i]));
        } else if (line.compare(0, 4, "BIG ") == 0) {
            /* a region of its own for the bulk scenario */
            uct_md_attr_t attr;
            std::vector<uint8_t> rkey;

            big.assign(std::stoull(line.substr(4)), 0);
            if (uct_md_mem_reg(g_md, big.data(), big.size(), 0, &big_memh) !=
                UCS_OK) {
                die("uct_md_mem_reg of the bulk region", UCS_ERR_NO_MEMORY);
            }
            uct_md_query(g_md, &attr);
            rkey.resize(attr.rkey_packed_size);
            uct_md_mkey_pack(g_md, big_memh, rkey.data());
            big_peak = peak_rss_kib();
            ctl_send("BIG " + std::to_string(uintptr_t(big.data())) + " " +
                     hex(rkey.data(), rkey.size()));
        } else if (line == "PEAK?") {
            ctl_send("PEAK " + std::to_string(peak_rss_kib() - big_peak));
        } else if (line == "RECONNECT") {
            destroy_ep();
            stream_reset();
            connect_ep();
        } else if (line == "BYE") {
            if (big_memh != nullptr) {
                uct_md_mem_dereg(g_md, big_memh);
            }
            return;
        }
    }
}

uint64_t ask_word(size_t index)
{
    ctl_send("WORD " + std::to_string(index));
    std::string v = ctl_recv();
    return std::stoull(v.substr(6));
}

bool am_both_ways(memory *mem, unsigned count)
{
    ucs_status_t status = stream(0, count, mem->memh,
                                 reinterpret_cast<uint8_t*>(mem->buf.data()));
    std::string got;

    result("am_send", ucs_status_string(status));
    ctl_send("EXPECT " + std::to_string(count));
    got = ctl_recv();
    result("am_received_by_server", got.substr(4));
    check(got == "GOT " + std::to_string(count) + " in-order",
          "server received every AM in order");

    stream_reset();
    ctl_send("SEND " + std::to_string(count));
    got = ctl_recv();
    wait_for([&] { return g_am_count >= count; }, "AMs from the server");
    result("am_received_by_client", std::to_string(g_am_count) +
           (g_am_in_order ? " in-order" : " disorder: " + g_am_disorder));
    check((got == std::string("SENT ") + ucs_status_string(UCS_OK)) &&
          g_am_in_order && (g_am_count == count),
          "client received every AM in order");
    return (status == UCS_OK) && g_ok;
}

void rma_and_atomics(memory *local)
{
    std::string line;
    std::vector<uint8_t> rkey_buf;
    uct_rkey_bundle_t rkey;
    uint64_t raddr, result64 = 0;
    uint8_t *lbuf = reinterpret_cast<uint8_t*>(local->buf.data());
    ucs_status_t status;

    ctl_send("MEM?");
    line     = ctl_recv();
    raddr    = std::stoull(line.substr(4, line.find(' ', 4) - 4));
    rkey_buf = unhex(line.substr(line.find(' ', 4) + 1));
    status   = uct_rkey_unpack(g_ib, rkey_buf.data(), &rkey);
    if (status != UCS_OK) {
        die("uct_rkey_unpack", status);
    }

    /* put_short into word 0, put_zcopy of 20000 bytes at 8192 */
    uint64_t word = 0x1122334455667788ull;
    status = retry([&] {
        return uct_ep_put_short(g_ep, &word, sizeof(word), raddr, rkey.rkey);
    });
    check(status == UCS_OK, "put_short");

    for (size_t i = 0; i < 20000; ++i) {
        lbuf[i] = uint8_t(i * 7);
    }
    uct_completion_t comp = {[](uct_completion_t*) {}, 1, UCS_OK};
    uct_iov_t iov         = {lbuf, 20000, local->memh, 0, 1};
    status = retry([&] {
        return uct_ep_put_zcopy(g_ep, &iov, 1, raddr + 8192, rkey.rkey, &comp);
    });
    if (status == UCS_INPROGRESS) {
        wait_for([&] { return comp.count == 0; }, "put_zcopy");
        status = comp.status;
    }
    check(status == UCS_OK, "put_zcopy");
    check(flush_ep() == UCS_OK, "flush after puts");

    /* get it back, into a zeroed place */
    uint8_t *back = lbuf + 32768;
    memset(back, 0, 20000);
    comp = {[](uct_completion_t*) {}, 1, UCS_OK};
    iov  = {back, 20000, local->memh, 0, 1};
    status = retry([&] {
        return uct_ep_get_zcopy(g_ep, &iov, 1, raddr + 8192, rkey.rkey, &comp);
    });
    if (status == UCS_INPROGRESS) {
        wait_for([&] { return comp.count == 0; }, "get_zcopy");
        status = comp.status;
    }
    check((status == UCS_OK) && !memcmp(back, lbuf, 20000),
          "get_zcopy returns what put_zcopy wrote");
    result("put_get", ((status == UCS_OK) && !memcmp(back, lbuf, 20000)) ?
                      "ok" : "mismatch");
    check(ask_word(0) == word, "put_short landed");

    /* atomics on word 1 of the server's memory */
    uint64_t target = raddr + 8;
    status = retry([&] {
        return uct_ep_atomic64_post(g_ep, UCT_ATOMIC_OP_ADD, 5, target,
                                    rkey.rkey);
    });
    check(status == UCS_OK, "atomic64_post add");

    comp = {[](uct_completion_t*) {}, 1, UCS_OK};
    status = retry([&] {
        return uct_ep_atomic64_fetch(g_ep, UCT_ATOMIC_OP_ADD, 10, &result64,
                                     target, rkey.rkey, &comp);
    });
    if (status == UCS_INPROGRESS) {
        wait_for([&] { return comp.count == 0; }, "atomic fetch add");
    }
    result("fetch_add", std::to_string(result64));
    check(result64 == 5, "fetch-add returns the value after the post");

    comp = {[](uct_completion_t*) {}, 1, UCS_OK};
    status = retry([&] {
        return uct_ep_atomic_cswap64(g_ep, 15, 100, target, rkey.rkey,
                                     &result64, &comp);
    });
    if (status == UCS_INPROGRESS) {
        wait_for([&] { return comp.count == 0; }, "atomic cswap");
    }
    result("cswap", std::to_string(result64));
    check(result64 == 15, "cswap sees 15");
    check(flush_ep() == UCS_OK, "flush after atomics");
    check(ask_word(1) == 100, "cswap swapped in 100");
    result("atomics", g_ok ? "ok" : "wrong");
    uct_rkey_release(g_ib, &rkey);
}

/* Send until the endpoint fails; how long it took */
double until_failure(memory *mem)
{
    auto start = steady::now();
    uint64_t seq = 1u << 20;

    while (g_ep_error == UCS_OK) {
        ucs_status_t status = send_am(seq++, 8, mem->memh,
                                      reinterpret_cast<uint8_t*>(
                                              mem->buf.data()));
        if ((status != UCS_OK) && (status != UCS_INPROGRESS)) {
            break;
        }
        flush_ep();
        if (steady::now() - start > WAIT_LIMIT) {
            break;
        }
    }
    return std::chrono::duration<double>(steady::now() - start).count();
}

std::string mac_str(const uint8_t *mac)
{
    char buf[32];

    snprintf(buf, sizeof(buf), "%02x:%02x:%02x:%02x:%02x:%02x", mac[0],
             mac[1], mac[2], mac[3], mac[4], mac[5]);
    return buf;
}

/* The destination MAC the emulated device holds for this endpoint's QP
 * (its number is in the endpoint address: 24 bits, LSB first) */
std::string ep_rmac()
{
    std::vector<uint8_t> addr(g_attr.ep_addr_len);
    uct_ib_emu_qp_info_t info;
    uint32_t qpn;

    uct_ep_get_address(g_ep, reinterpret_cast<uct_ep_addr_t*>(addr.data()));
    qpn = addr[0] | (uint32_t(addr[1]) << 8) | (uint32_t(addr[2]) << 16);
    if (uct_ib_emu_qp_info(qpn, &info) != UCS_OK) {
        return "unknown";
    }
    return mac_str(info.primary.rmac.data());
}

/* One zcopy RMA of @a len bytes; its status */
ucs_status_t rma_zcopy(bool put, uint8_t *buf, size_t len, uct_mem_h memh,
                       uint64_t raddr, uct_rkey_t rkey)
{
    uct_completion_t comp = {[](uct_completion_t*) {}, 1, UCS_OK};
    uct_iov_t iov         = {buf, len, memh, 0, 1};
    ucs_status_t status   = retry([&] {
        return put ? uct_ep_put_zcopy(g_ep, &iov, 1, raddr, rkey, &comp) :
                     uct_ep_get_zcopy(g_ep, &iov, 1, raddr, rkey, &comp);
    });

    if (status == UCS_INPROGRESS) {
        wait_for([&] { return (comp.count == 0) || (g_ep_error != UCS_OK); },
                 put ? "put_zcopy" : "get_zcopy");
        status = (comp.count == 0) ? comp.status : g_ep_error;
    }
    return status;
}

/* This host's packets, retries and drops so far, from the registry */
void own_counters(uint64_t *sent, uint64_t *retries, uint64_t *drops)
{
    std::string host, fabric = uct_ib_emu_fabric_joined(&host);
    uct_ib_emu_fabric_info_t info;

    *sent = *retries = *drops = 0;
    sync_with_device();
    if (uct_ib_emu_fabric_info(fabric, &info) != UCS_OK) {
        return;
    }
    for (const auto &h : info.hosts) {
        if (h.name == host) {
            *sent    = h.packets_sent;
            *retries = h.retries;
            for (uint64_t d : h.drops) {
                *drops += d;
            }
        }
    }
}

/* A region of @a len bytes the server makes for us: its address, and its
 * key in @a rkey */
uint64_t server_region(size_t len, uct_rkey_bundle_t *rkey)
{
    std::string line;

    ctl_send("BIG " + std::to_string(len));
    line = ctl_recv();
    std::vector<uint8_t> rkey_buf = unhex(line.substr(line.find(' ', 4) + 1));
    if (uct_rkey_unpack(g_ib, rkey_buf.data(), rkey) != UCS_OK) {
        die("uct_rkey_unpack", UCS_ERR_INVALID_PARAM);
    }
    return std::stoull(line.substr(4, line.find(' ', 4) - 4));
}

/*
 * Large zcopy puts and gets between the two hosts, the largest far above
 * what the sockets buffer: each put's data read back by a get, byte by
 * byte, and the packets the client sent at most 1.1 times the MTU-sized
 * ones the puts need, with no retry and no drop
 */
void bulk_scenario()
{
    const size_t sizes[] = {64 * 1024, 1024 * 1024, 16 * 1024 * 1024};
    const size_t largest = sizes[2];
    std::vector<uint8_t> out(largest), back(largest);
    uct_mem_h out_memh, back_memh;
    uct_rkey_bundle_t rkey;
    uint64_t sent0, sent1, retries, drops, raddr, needed = 0;
    bool same = true;

    if ((uct_md_mem_reg(g_md, out.data(), largest, 0, &out_memh) != UCS_OK) ||
        (uct_md_mem_reg(g_md, back.data(), largest, 0, &back_memh) != UCS_OK)) {
        die("uct_md_mem_reg of the bulk buffers", UCS_ERR_NO_MEMORY);
    }
    raddr = server_region(largest, &rkey);

    own_counters(&sent0, &retries, &drops);
    for (size_t len : sizes) {
        for (size_t i = 0; i < len; ++i) {
            out[i] = uint8_t((i * 131) ^ (i >> 12) ^ len);
        }
        memset(back.data(), 0, len);
        check(rma_zcopy(true, out.data(), len, out_memh, raddr, rkey.rkey) ==
              UCS_OK, "bulk put_zcopy");
        check(rma_zcopy(false, back.data(), len, back_memh, raddr, rkey.rkey) ==
              UCS_OK, "bulk get_zcopy");
        same   = same && !memcmp(out.data(), back.data(), len);
        needed += (len + 1023) / 1024 + 1; /* the put, at most 1 KiB a
                                              packet, and the get's request */
    }
    own_counters(&sent1, &retries, &drops);

    result("bulk_data", same ? "ok" : "mismatch");
    result("bulk_packets", std::to_string(sent1 - sent0));
    result("bulk_packets_needed", std::to_string(needed));
    result("bulk_retries", std::to_string(retries));
    result("bulk_drops", std::to_string(drops));
    check(same, "every byte put came back");

    uct_rkey_release(g_ib, &rkey);
    uct_md_mem_dereg(g_md, out_memh);
    uct_md_mem_dereg(g_md, back_memh);
    ctl_send("BYE");
}

/* The pattern of byte i of a huge transfer */
uint8_t huge_byte(size_t i)
{
    return uint8_t((i * 167) ^ (i >> 13));
}

/*
 * One put of --count MiB into the server's region and one get of it back
 * into the same buffer, compared byte by byte. What the device holds for a
 * message is bounded by the link, not by the message: each side reports
 * how much its peak memory grew during the two transfers, beyond the
 * buffers both had already touched.
 */
void huge_scenario()
{
    const size_t len = size_t(g_opts.count) << 20;
    std::vector<uint8_t> buf(len);
    uint64_t retries, drops, sent0, sent1, raddr, peak;
    uct_rkey_bundle_t rkey;
    uct_mem_h memh;
    std::string line;
    size_t wrong = 0;

    if (uct_md_mem_reg(g_md, buf.data(), len, 0, &memh) != UCS_OK) {
        die("uct_md_mem_reg of the huge buffer", UCS_ERR_NO_MEMORY);
    }
    raddr = server_region(len, &rkey);

    for (size_t i = 0; i < len; ++i) {
        buf[i] = huge_byte(i);
    }
    own_counters(&sent0, &retries, &drops);
    peak = peak_rss_kib();
    check(rma_zcopy(true, buf.data(), len, memh, raddr, rkey.rkey) == UCS_OK,
          "huge put_zcopy");
    memset(buf.data(), 0, len);
    check(rma_zcopy(false, buf.data(), len, memh, raddr, rkey.rkey) ==
          UCS_OK, "huge get_zcopy");
    for (size_t i = 0; i < len; ++i) {
        wrong += (buf[i] != huge_byte(i));
    }
    own_counters(&sent1, &retries, &drops);

    result("huge_data", (wrong == 0) ? "ok" : std::to_string(wrong) +
                                              " bytes wrong");
    result("huge_client_growth_kib", std::to_string(peak_rss_kib() - peak));
    ctl_send("PEAK?");
    line = ctl_recv();
    result("huge_server_growth_kib", line.substr(5));
    result("huge_retries", std::to_string(retries));
    result("huge_drops", std::to_string(drops));
    /* the put, at most 1 KiB a packet, and the get's request */
    result("huge_packets", std::to_string(sent1 - sent0));
    result("huge_packets_needed", std::to_string((len + 1023) / 1024 + 1));
    check(wrong == 0, "every byte put came back");

    uct_rkey_release(g_ib, &rkey);
    uct_md_mem_dereg(g_md, memh);
    ctl_send("BYE");
}

/* The server's port down (or its host isolated), or back */
void server_fault(bool on)
{
    std::string host, fabric = uct_ib_emu_fabric_joined(&host);
    std::string server_dev   = g_opts.dev.substr(0, g_opts.dev.find(':'));
    ucs_status_t status;

    status = (g_opts.scenario == "isolate") ?
             uct_ib_emu_fabric_isolate(fabric, "host0", on) :
             uct_ib_emu_fabric_set_port_up(fabric, "host0", server_dev, 1,
                                           !on);
    if (status != UCS_OK) {
        die("changing the server's port", status);
    }
}

/*
 * A port flap or an isolation under live traffic: one shorter than the
 * retry budget (UCX_RC_TIMEOUT 100 ms is 134 ms on the wire, 8
 * transmissions) loses and doubles nothing; one longer fails the endpoint
 * once, with ENDPOINT_TIMEOUT, and a new one works when the fault is gone.
 */
void fault_scenario(memory *mem)
{
    const auto short_fault = std::chrono::milliseconds(200);

    server_fault(true);
    std::thread restore([&] {
        std::this_thread::sleep_for(short_fault);
        server_fault(false);
    });
    bool ok = am_both_ways(mem, g_opts.count);
    restore.join();
    result("short_fault", ok ? "nothing lost" : "failed");
    result("short_fault_ep_errors", std::to_string(g_ep_errors));

    server_fault(true);
    double secs = until_failure(mem);
    /* the error is reported once, however long the fault lasts */
    auto until = steady::now() + std::chrono::milliseconds(300);
    while (steady::now() < until) {
        uct_worker_progress(g_worker);
    }
    server_fault(false);
    result("long_fault_endpoint", ucs_status_string(g_ep_error));
    result("long_fault_failed_after_s", std::to_string(secs));
    result("long_fault_ep_errors", std::to_string(g_ep_errors));

    destroy_ep();
    ctl_send("RECONNECT");
    connect_ep();
    stream_reset();
    check(am_both_ways(mem, 100), "AMs after the fault");
    result("reconnect", g_ok ? "first try" : "failed");
    ctl_send("BYE");
}

/* Say @a ready, wait for the test's GO (it breaks something meanwhile),
 * then send until the endpoint fails: how and how soon */
void fail_after_go(memory *mem, const char *ready, const char *what)
{
    char line[16];

    result(ready, "yes");
    if (fgets(line, sizeof(line), stdin) == nullptr) {
        die("no GO from the test", UCS_ERR_IO_ERROR);
    }
    double secs = until_failure(mem);
    result("live_endpoint", ucs_status_string(g_ep_error));
    result("failed_after_s", std::to_string(secs));
    check(g_ep_error == UCS_ERR_ENDPOINT_TIMEOUT, what);
}

void client(memory *mem)
{
    std::string fabric, host;

    if ((g_opts.scenario == "flap") || (g_opts.scenario == "isolate")) {
        fault_scenario(mem);
        return;
    }
    if (g_opts.scenario == "bulk") {
        bulk_scenario();
        return;
    }
    if (g_opts.scenario == "huge") {
        huge_scenario();
        return;
    }

    check(am_both_ways(mem, g_opts.count), "AMs both ways");
    rma_and_atomics(mem);

    if (g_opts.scenario == "mac_move") {
        uct_ib_emu_fabric_info_t info;
        std::string server_dev = g_opts.dev.substr(0, g_opts.dev.find(':'));
        uct_ib_emu_mac_t mac   = {0x02, 0xc9, 0xee, 0x00, 0x00, 0x01};

        fabric = uct_ib_emu_fabric_joined(&host);
        if (uct_ib_emu_fabric_set_mac(fabric, "host0", server_dev, 1, mac,
                                      true) != UCS_OK) {
            die("moving the server's MAC", UCS_ERR_IO_ERROR);
        }
        result("mac_moved", "host0");

        double secs = until_failure(mem);
        result("live_endpoint", ucs_status_string(g_ep_error));
        result("failed_after_s", std::to_string(secs));
        check(g_ep_error == UCS_ERR_ENDPOINT_TIMEOUT,
              "the live endpoint fails with ENDPOINT_TIMEOUT");

        if (g_opts.baseline) {
            /* every new endpoint takes the AV of the AH cached before the
             * move: the old MAC, so it fails again */
            unsigned failed = 0;

            for (int i = 0; i < 2; ++i) {
                destroy_ep();
                ctl_send("RECONNECT");
                connect_ep();
                result("new_ep_rmac", ep_rmac());
                until_failure(mem);
                failed += (g_ep_error == UCS_ERR_ENDPOINT_TIMEOUT);
            }
            result("baseline_reconnects_failed", std::to_string(failed) +
                   "/2");
            ctl_send("BYE");
            return;
        }

        destroy_ep();
        ctl_send("RECONNECT");
        connect_ep();
        result("new_ep_rmac", ep_rmac());
        stream_reset();
        check(am_both_ways(mem, 100), "AMs after the reconnect");
        result("reconnect", g_ok ? "first try" : "failed");

        uct_ib_av_cache_stats_t av_cache;
        if (uct_ib_md_av_cache_stats(g_md, &av_cache) == UCS_OK) {
            result("av_cache", "lookups " + std::to_string(av_cache.lookups) +
                   " hits " + std::to_string(av_cache.hits) + " ah_creates " +
                   std::to_string(av_cache.ah_creates) + " invalidated " +
                   std::to_string(av_cache.invalidated) + " uncached " +
                   std::to_string(av_cache.uncached) +
                   (av_cache.transient ? " transient" : ""));
        }
    }

    if (g_opts.scenario == "damage") {
        /* the test damages the fabric's segment, then says GO */
        fail_after_go(mem, "ready_to_damage", "the endpoint over a damaged "
                      "fabric fails with ENDPOINT_TIMEOUT");
        ctl_send("BYE");
        return;
    }

    if (g_opts.scenario == "peer_killed") {
        /* the test kills the server, then says GO */
        fail_after_go(mem, "ready_to_kill", "the endpoint to a killed peer "
                      "fails with ENDPOINT_TIMEOUT");
        return;
    }

    ctl_send("BYE");
}

bool parse(int argc, char **argv)
{
    for (int i = 1; i + 1 < argc; i += 2) {
        std::string k = argv[i], v = argv[i + 1];

        if (k == "--role") {
            g_opts.role = v;
        } else if (k == "--fd") {
            g_opts.fd = std::stoi(v);
        } else if (k == "--tl") {
            g_opts.tl = v;
        } else if (k == "--dev") {
            g_opts.dev = v;
        } else if (k == "--scenario") {
            g_opts.scenario = v;
        } else if (k == "--count") {
            g_opts.count = unsigned(std::stoul(v));
        } else if (k == "--baseline") {
            g_opts.baseline = (v == "1");
        } else if (k == "--ah-cache") {
            g_opts.ah_cache = v;
        } else {
            return false;
        }
    }
    return ((g_opts.role == "server") || (g_opts.role == "client")) &&
           ((g_opts.fd >= 0) || (g_opts.scenario == "list"));
}

} // namespace

/* Neighbour messages queued on listener fd now, as "N new, N failed, N
 * del[, mac M]" (the MAC of the last resolved one) */
std::string neigh_messages(int fd)
{
    std::vector<uct_ib_neigh_msg> msgs;
    unsigned fresh = 0, failed = 0, del = 0;
    std::string mac;
    uint8_t buf[8192];
    int len;

    while ((len = uct_ib_glue->neigh_monitor_recv(fd, buf, sizeof(buf))) >= 0) {
        check(uct_ib_neigh_parse(buf, size_t(len), &msgs), "a neighbour message");
    }
    check(errno == EAGAIN, "neighbour messages read to the end");
    for (const uct_ib_neigh_msg &msg : msgs) {
        if (msg.kind == uct_ib_neigh_msg::DEL) {
            ++del;
        } else if (msg.resolved()) {
            ++fresh;
            mac = mac_str(msg.lladdr);
        } else {
            ++failed;
        }
    }
    return std::to_string(fresh) + " new, " + std::to_string(failed) +
           " failed, " + std::to_string(del) + " del" +
           (mac.empty() ? "" : ", mac " + mac);
}

/* What host1's neighbour listener hears of changes made on the fabric by
 * the control API (as `ucx_emu` makes them) */
void neigh_events_scenario(const std::string &fabric)
{
    const uct_ib_emu_mac_t moved = {0x02, 0xc9, 0xee, 0x00, 0x00, 0x02};
    const uct_ib_emu_mac_t stale = {0x02, 0xc9, 0xee, 0x00, 0x00, 0x03};
    union ibv_gid          gid   = {};
    struct ibv_context     *ctx  = nullptr;
    struct ibv_device      **list;
    int                    num   = 0, fd;

    list = uct_ib_glue->get_device_list(&num);
    for (int i = 0; (list != nullptr) && (i < num) && (ctx == nullptr); ++i) {
        if (!strcmp(uct_ib_glue->get_device_name(list[i]), "mlx5_0")) {
            check(uct_ib_glue_open_device(list[i], 1, &ctx, nullptr) == UCS_OK,
                  "mlx5_0 opens");
        }
    }
    if (list != nullptr) {
        uct_ib_glue->free_device_list(list);
    }
    if (ctx == nullptr) {
        die("no mlx5_0", UCS_ERR_NO_DEVICE);
    }
    fd = uct_ib_glue->neigh_monitor_open(ctx);
    check(fd >= 0, "the neighbour listener opens");

    /* host0's mlx5_0 moves, with its gratuitous ARP */
    check(uct_ib_emu_fabric_set_mac(fabric, "host0", "mlx5_0", 1, moved,
                                    true) == UCS_OK, "the MAC moves");
    result("mac_move", neigh_messages(fd));

    /* a stale entry for host0's IPv4 address, set on this host */
    gid.raw[10] = gid.raw[11] = 0xff;
    gid.raw[12] = 198;
    gid.raw[13] = 18;
    gid.raw[15] = 1;
    check(uct_ib_emu_fabric_neigh_set(fabric, "host1", gid, stale) == UCS_OK,
          "the neighbour entry is set");
    result("neigh_set", neigh_messages(fd));
    result("neigh_set_elsewhere",
           (uct_ib_emu_fabric_neigh_set(fabric, "host0", gid, moved) ==
            UCS_OK) ? neigh_messages(fd) : "refused");

    /* host0's port goes down and up; then this host's own port */
    check(uct_ib_emu_fabric_set_port_up(fabric, "host0", "mlx5_0", 1, false) ==
          UCS_OK, "host0's port goes down");
    result("peer_port_down", neigh_messages(fd));
    check(uct_ib_emu_fabric_set_port_up(fabric, "host0", "mlx5_0", 1, true) ==
          UCS_OK, "host0's port comes up");
    result("peer_port_up", neigh_messages(fd));
    check(uct_ib_emu_fabric_set_port_up(fabric, "host1", "mlx5_0", 1, false) ==
          UCS_OK, "the own port goes down");
    result("own_port_down", neigh_messages(fd));
    check(uct_ib_emu_fabric_set_port_up(fabric, "host1", "mlx5_0", 1, true) ==
          UCS_OK, "the own port comes up");

    check(uct_ib_glue->neigh_monitor_close(fd) == 0, "the listener closes");
    check(uct_ib_glue_close_device(ctx) == UCS_OK, "mlx5_0 closes");
}

int main(int argc, char **argv)
{
    uct_component_h *components;
    unsigned num;
    memory mem;

    if (!parse(argc, argv)) {
        fprintf(stderr, "usage: fabric_peer --role server|client --fd N "
                "[--tl TL] [--dev DEV:PORT] [--scenario S] [--count N]\n");
        return 2;
    }

    if (uct_query_components(&components, &num) != UCS_OK) {
        die("uct_query_components", UCS_ERR_NO_DEVICE);
    }
    for (unsigned i = 0; i < num; ++i) {
        uct_component_attr_t attr = {};
        attr.field_mask           = UCT_COMPONENT_ATTR_FIELD_NAME |
                                    UCT_COMPONENT_ATTR_FIELD_MD_RESOURCE_COUNT;
        if ((uct_component_query(components[i], &attr) == UCS_OK) &&
            (std::string(attr.name) == "ib")) {
            g_ib = components[i];
            result("devices", std::to_string(attr.md_resource_count));
            /* listing the devices selected the glue (UCX_IB_GLUE) */
            result("glue", uct_ib_glue->name);
        }
    }
    uct_release_component_list(components);
    if (g_ib == nullptr) {
        die("no ib component", UCS_ERR_NO_DEVICE);
    }
    if (g_opts.scenario == "list") {
        return 0; /* what the process sees of the fabric, nothing more */
    }

    if (uct_worker_create(nullptr, UCS_THREAD_MODE_SINGLE, &g_worker) !=
        UCS_OK) {
        die("uct_worker_create", UCS_ERR_NO_MEMORY);
    }

    std::string host;
    std::string fabric = uct_ib_emu_fabric_joined(&host);
    result("joined", fabric + " " + host);

    if (g_opts.scenario == "neigh_events") {
        if (g_opts.role == "client") {
            neigh_events_scenario(fabric);
        }
        uct_worker_destroy(g_worker);
        result("exit", g_ok ? "ok" : "failed");
        return g_ok ? 0 : 1;
    }

    ctl_bound_writes();
    open_iface();
    register_memory(&mem);
    connect_ep();

    if (g_opts.role == "server") {
        serve(&mem);
    } else {
        client(&mem);
    }

    if (g_ep != nullptr) {
        uct_ep_destroy(g_ep);
    }
    fabric_peer_baseline_cleanup();
    uct_md_mem_dereg(g_md, mem.memh);
    uct_iface_close(g_iface);
    uct_md_close(g_md);
    uct_worker_destroy(g_worker);
    result("exit", g_ok ? "ok" : "failed");
    return g_ok ? 0 : 1;
}
