/*
 * A host's socket: frames out, per destination host, and frames in
 * (wire.h).
 */
#include <emu/fabric/wire.h>
#include <emu/model/model.h>
#include <emu/fabric/shm_fabric.h>

#include <unistd.h>


namespace uct_ib_emu {
namespace wire {

namespace {

size_t padded(size_t len)
{
    return (len + 7) & ~size_t(7);
}

socklen_t host_addr(const std::string &fabric, unsigned host,
                    struct sockaddr_un *addr)
{
    return fab::abstract_addr(fab::socket_name(fabric,
                                               "h" + std::to_string(host)),
                              addr);
}

} // namespace


endpoint::endpoint(int fd, unsigned host, fab::fabric_rec *rec) :
    m_fd(fd), m_host(host), m_fabric_id(rec->fabric_id), m_rec(rec),
    m_out(fab::host_count(rec)), m_addrs(fab::host_count(rec)),
    m_addr_lens(fab::host_count(rec)),
    m_rx(FRAME_MAX + 4096), m_rx_seen(fab::frames_to(rec, host))
{
    int size = 4 << 20;

    for (unsigned h = 0; h < fab::host_count(rec); ++h) {
        m_addr_lens[h] = host_addr(rec->name, h, &m_addrs[h]);
    }

    /* room for bursts; the kernel caps it at its maximum */
    setsockopt(m_fd, SOL_SOCKET, SO_SNDBUF, &size, sizeof(size));
    setsockopt(m_fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
}

endpoint::~endpoint()
{
    close(m_fd);
}

std::vector<uint8_t> &endpoint::frame_for(unsigned host, size_t need)
{
    host_queue &q = m_out[host];

    if (q.frames.empty() || (q.frames.back().size() + need > FRAME_MAX)) {
        frame_hdr fh = {};

        if (q.frames.empty()) {
            q.progress = std::chrono::steady_clock::now(); /* it waits from now */
        }

        q.frames.emplace_back();
        q.frames.back().reserve(4096);
        fh.magic     = FRAME_MAGIC;
        fh.version   = FRAME_VERSION;
        fh.src_host  = static_cast<uint16_t>(m_host);
        fh.fabric_id = m_fabric_id;
        q.frames.back().insert(q.frames.back().end(),
                               reinterpret_cast<uint8_t*>(&fh),
                               reinterpret_cast<uint8_t*>(&fh + 1));
        q.last_ack = SIZE_MAX;
    }

    return q.frames.back();
}

void endpoint::add_request(const dest &d, const req_hdr &h,
                           const uint8_t *payload)
{
    size_t len               = sizeof(h) + padded(h.payload_len);
    std::vector<uint8_t> &f  = frame_for(d.host, len);
    size_t at                = f.size();
    frame_hdr *fh;

    f.resize(at + len);
    memcpy(&f[at], &h, sizeof(h));
    if (h.payload_len > 0) {
        memcpy(&f[at + sizeof(h)], payload, h.payload_len);
    }
    fh = reinterpret_cast<frame_hdr*>(f.data());
    ++fh->count;
    m_out[d.host].last_ack = SIZE_MAX;
}

void endpoint::add_datagram(unsigned host, const dgram_hdr &h,
                            const uint8_t *payload)
{
    size_t len              = sizeof(h) + padded(h.payload_len);
    std::vector<uint8_t> &f = frame_for(host, len);
    size_t at               = f.size();

    f.resize(at + len);
    memcpy(&f[at], &h, sizeof(h));
    if (h.payload_len > 0) {
        memcpy(&f[at + sizeof(h)], payload, h.payload_len);
    }
    ++reinterpret_cast<frame_hdr*>(f.data())->count;
    m_out[host].last_ack = SIZE_MAX;
}

void endpoint::add_cm(unsigned host, const void *msg, uint32_t len)
{
    cm_hdr h                = {};
    size_t size             = sizeof(h) + padded(len);
    std::vector<uint8_t> &f = frame_for(host, size);
    size_t at               = f.size();

    h.type = PKT_CM;
    h.len  = len;
    f.resize(at + size);
    memcpy(&f[at], &h, sizeof(h));
    memcpy(&f[at + sizeof(h)], msg, len);
    ++reinterpret_cast<frame_hdr*>(f.data())->count;
    m_out[host].last_ack = SIZE_MAX;
}

void endpoint::add_response(unsigned host, const resp_hdr &h,
                            const uint8_t *data)
{
    size_t len    = sizeof(h) + padded(h.data_len);
    host_queue &q = m_out[host];
    bool ack      = (h.kind == static_cast<uint8_t>(resp_kind::ACK)) &&
                    (h.data_len == 0);
    std::vector<uint8_t> *f;
    size_t at;

    /* consecutive ACKs to one QP: the last one says it all */
    if (ack && !q.frames.empty() && (q.last_ack != SIZE_MAX)) {
        resp_hdr prev;

        memcpy(&prev, &q.frames.back()[q.last_ack], sizeof(prev));
        if (prev.dst_qpn == h.dst_qpn) {
            memcpy(&q.frames.back()[q.last_ack], &h, sizeof(h));
            return;
        }
    }

    f  = &frame_for(host, len);
    at = f->size();
    f->resize(at + len);
    memcpy(&(*f)[at], &h, sizeof(h));
    if (h.data_len > 0) {
        memcpy(&(*f)[at + sizeof(h)], data, h.data_len);
    }
    ++reinterpret_cast<frame_hdr*>(f->data())->count;
    q.last_ack = ack ? at : SIZE_MAX;
}

void endpoint::drop_frame(emu_state &s, const std::vector<uint8_t> &f,
                          uct_ib_emu_drop_t reason)
{
    const frame_hdr *fh = reinterpret_cast<const frame_hdr*>(f.data());

    s.drops[reason] += fh->count;
}

bool endpoint::send_frame(emu_state &s, unsigned host,
                          std::vector<uint8_t> &f, bool *again)
{
    frame_hdr *fh = reinterpret_cast<frame_hdr*>(f.data());
    ssize_t n;

    fh->bytes = static_cast<uint32_t>(f.size());
    n = sendto(m_fd, f.data(), f.size(), MSG_DONTWAIT | MSG_NOSIGNAL,
               reinterpret_cast<struct sockaddr*>(&m_addrs[host]),
               m_addr_lens[host]);
    *again = false;
    if (n == ssize_t(f.size())) {
        fab::count_frame_to(m_rec, host);
        return true;
    }

    if ((n < 0) && ((errno == EAGAIN) || (errno == EWOULDBLOCK))) {
        *again = true; /* the receiver is full: try again next pass */
        return false;
    }

    /* ECONNREFUSED: no process owns the host (the kernel's answer) */
    drop_frame(s, f, (n < 0) && (errno == ECONNREFUSED) ?
                     UCT_IB_EMU_DROP_HOST_DOWN : UCT_IB_EMU_DROP_NO_ROUTE);
    return true;
}

bool endpoint::flush(emu_state &s)
{
    const auto now   = std::chrono::steady_clock::now();
    const auto stuck = std::chrono::milliseconds(QUEUE_STUCK_MS);
    bool did         = false;

    for (unsigned host = 0; host < m_out.size(); ++host) {
        host_queue &q = m_out[host];
        bool sent     = false;

        while (!q.frames.empty()) {
            bool again;

            if (!send_frame(s, host, q.frames.front(), &again) && again) {
                break;
            }
            q.frames.pop_front();
            did = sent = true;
        }
        q.last_ack = SIZE_MAX;

        if (sent || q.frames.empty()) {
            q.progress = now;
        } else if (now - q.progress > stuck) {
            /* a receiver that takes nothing: what waits for it is lost */
            while (!q.frames.empty()) {
                drop_frame(s, q.frames.front(), UCT_IB_EMU_DROP_CONGESTION);
                q.frames.pop_front();
            }
        }
    }

    return did;
}

bool endpoint::queued() const
{
    for (const host_queue &q : m_out) {
        if (!q.frames.empty()) {
            return true;
        }
    }
    return false;
}

} // namespace wire
} // namespace uct_ib_emu
