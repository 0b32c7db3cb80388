/*
 * Packets between the hosts of a fabric (docs/architecture.md, section 8).
 * Each host has one datagram socket in the abstract Unix namespace; the
 * engine gathers what it sends to a host during a pass into frames (a header
 * and packets) and sends each frame as one datagram at the end of the pass.
 *
 * Why datagram sockets: the kernel keeps every frame whole and in order,
 * wakes a sleeping engine, and reports a dead host as a send error (a lost
 * packet, which RC retries turn into retry-exceeded); nothing of a host
 * outlives its process. A full receiver makes the send wait in the
 * sender's queue for the next pass, as a NIC holds packets it cannot put
 * on the wire; only when that queue is full are packets dropped.
 */
#ifndef UCT_IB_EMU_FABRIC_WIRE_H_
#define UCT_IB_EMU_FABRIC_WIRE_H_

#include <emu/api/emu.h>
#include <emu/fabric/shm_fabric.h>

#include <sys/socket.h>
#include <sys/un.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <deque>
#include <string>
#include <vector>


namespace uct_ib_emu {

struct emu_state;

namespace wire {

constexpr uint32_t FRAME_MAGIC   = 0x46454d55;
constexpr uint16_t FRAME_VERSION = 6; /* 2: datagrams; 3: packets carry
                                         * their destination MAC; 4: and an
                                         * XRC SRQ number; 5: and DC's
                                         * fields; 6: CM messages */
constexpr size_t   FRAME_MAX     = 60 * 1024;
constexpr size_t   RESP_CHUNK    = 32 * 1024; /* read data per response */
/* Link-level flow control: a host's frames wait in its sender's queue
 * while the receiver drains them (nothing is dropped for a slow receiver),
 * and new messages wait while QUEUE_BACKLOG frames are queued; a receiver
 * that takes nothing for QUEUE_STUCK_MS is not draining, and what waits
 * for it is dropped ("destination host congested") */
constexpr size_t   QUEUE_BACKLOG = 64;        /* frames, about 4 MiB */
constexpr unsigned QUEUE_STUCK_MS = 2000;

enum pkt_type : uint8_t {
    PKT_REQUEST  = 1,
    PKT_RESPONSE = 2,
    PKT_DATAGRAM = 3, /* UD: no answer */
    PKT_CM       = 4  /* a connection manager's message (frontend/cm/) */
};

enum req_flags : uint8_t {
    REQ_FIRST     = 1u << 0,
    REQ_LAST      = 1u << 1,
    REQ_SOLICITED = 1u << 2,
    REQ_UC        = 1u << 3, /* the UC transport (its BTH opcodes) */
    REQ_XRC       = 1u << 4, /* the XRC transport */
    REQ_DC        = 1u << 5  /* the DC transport: the dc_ fields are set */
};

/* What a responder answers a request with */
enum class resp_kind : uint8_t {
    NONE,           /* discarded (out of sequence): no response at all */
    ACK,
    RNR_NAK,
    NAK_INVALID,    /* invalid request: length, opcode, ... */
    NAK_ACCESS,     /* remote access error */
    NAK_OPERATION   /* remote operational error */
};

struct frame_hdr {
    uint32_t magic;
    uint16_t version;
    uint16_t src_host;
    uint64_t fabric_id;
    uint32_t count;   /* packets */
    uint32_t bytes;   /* the whole frame */
};

struct req_hdr {
    uint8_t  type;
    uint8_t  opcode;
    uint8_t  opmod;
    uint8_t  flags;   /* req_flags */
    uint8_t  dst_dev; /* device index on the destination host */
    uint8_t  dst_port;
    uint16_t payload_len;
    uint32_t src_qpn;
    uint32_t dst_qpn;
    uint32_t psn;
    uint32_t msg_len;
    uint32_t offset;
    uint32_t rkey;
    uint32_t imm;
    uint32_t atomic_size;
    uint64_t raddr;
    uint64_t atomic[4];
    uint8_t  dmac[6]; /* RoCE: the receiving port filters on it */
    uint8_t  reserved[2];
    uint32_t xrc_srqn; /* XRC: the SRQ at the target (its XRCETH) */
    uint32_t reserved2;
    /* DC: the access key the WQE's address vector carries, the DCI's
     * connection (a generation that only increases, and its first PSN),
     * and the DCI's address, which the DCT answers to */
    uint64_t dc_key;
    uint32_t dc_gen;
    uint32_t dc_start_psn;
    uint8_t  dc_sgid[16];
    uint8_t  dc_smac[6];
    uint16_t dc_slid;
};

struct resp_hdr {
    uint8_t  type;
    uint8_t  kind;      /* resp_kind */
    uint8_t  rnr_timer;
    uint8_t  reserved;
    uint32_t dst_qpn;   /* the requester's */
    uint32_t psn;
    uint32_t total;     /* response data of the whole message */
    uint32_t offset;    /* of this packet's data */
    uint32_t data_len;
    uint8_t  dmac[6];   /* RoCE: the receiving port filters on it */
    uint8_t  reserved2[2];
};

enum dgram_flags : uint8_t {
    DGRAM_GRH       = 1u << 0, /* grh[] holds the packet's GRH/IP header */
    DGRAM_IMM       = 1u << 1,
    DGRAM_SOLICITED = 1u << 2
};

/* A UD datagram: the fields the receive CQE and buffer get, as the sender
 * built them */
struct dgram_hdr {
    uint8_t  type;
    uint8_t  flags;       /* dgram_flags */
    uint8_t  dst_dev;
    uint8_t  dst_port;
    uint32_t src_qpn;
    uint32_t dst_qpn;
    uint32_t qkey;
    uint32_t imm;         /* big endian */
    uint16_t slid;
    uint8_t  sl;          /* the CQE's sl (RoCE: the packet type) */
    uint8_t  dlid_bits;   /* the DLID's low 7 bits (InfiniBand) */
    uint16_t payload_len;
    uint16_t reserved2;
    uint8_t  grh[40];
    uint8_t  dmac[6];     /* RoCE: the receiving port filters on it */
    uint8_t  reserved3[6];
};

/* A connection manager's message: len bytes the engine does not read */
struct cm_hdr {
    uint8_t  type;
    uint8_t  reserved[3];
    uint32_t len;
};

static_assert((sizeof(req_hdr) % 8 == 0) && (sizeof(resp_hdr) % 8 == 0) &&
              (sizeof(dgram_hdr) % 8 == 0) && (sizeof(cm_hdr) % 8 == 0),
              "packets stay 8-byte aligned");

/* Where a packet goes: a host and, for requests, its device and port;
 * on RoCE the MAC its frame is addressed to */
struct dest {
    unsigned         host;
    uint8_t          dev;
    uint8_t          port;
    uct_ib_emu_mac_t dmac;
};


/* One host's socket and its outgoing frames */
class endpoint {
public:
    /* fd: the host's bound socket; rec: the fabric's registry, where
     * the hosts' frame counters are */
    endpoint(int fd, unsigned host, fab::fabric_rec *rec);
    ~endpoint();

    int fd() const
    {
        return m_fd;
    }

    void add_request(const dest &d, const req_hdr &h, const uint8_t *payload);
    void add_response(unsigned host, const resp_hdr &h, const uint8_t *data);
    void add_datagram(unsigned host, const dgram_hdr &h,
                      const uint8_t *payload);
    void add_cm(unsigned host, const void *msg, uint32_t len);

    /* Send the queued frames; true if some were sent */
    bool flush(emu_state &s);

    /* Receive up to @a budget frames; calls on_frame for each valid one.
     * The number received. */
    template <typename F>
    unsigned receive(unsigned budget, F on_frame);

    bool queued() const;

    /* Frames waiting for @a host: a requester sends no new message to it
     * while they are QUEUE_BACKLOG or more, and its ack timer does not run
     * out while any wait (they are not on the wire yet) */
    size_t backlog(unsigned host) const
    {
        return (host < m_out.size()) ? m_out[host].frames.size() : 0;
    }

    /* poll() saw the socket readable: the next receive() looks whatever
     * the counter says (a sender that died before counting its frame) */
    void readable()
    {
        m_rx_ready.store(true, std::memory_order_relaxed);
    }

private:
    struct host_queue {
        std::deque<std::vector<uint8_t>> frames;
        size_t                           last_ack = SIZE_MAX; /* offset */
        /* when the receiver last took a frame, or the queue filled */
        std::chrono::steady_clock::time_point progress;
    };

    std::vector<uint8_t> &frame_for(unsigned host, size_t need);
    bool send_frame(emu_state &s, unsigned host, std::vector<uint8_t> &f,
                    bool *again);
    void drop_frame(emu_state &s, const std::vector<uint8_t> &f,
                    uct_ib_emu_drop_t reason);

    int                              m_fd;
    unsigned                         m_host;
    uint64_t                         m_fabric_id;
    fab::fabric_rec                  *m_rec;
    std::vector<host_queue>          m_out;
    std::vector<struct sockaddr_un>  m_addrs;    /* of each host */
    std::vector<socklen_t>           m_addr_lens;
    std::vector<uint8_t>             m_rx;
    uint64_t                         m_rx_seen = 0; /* of our counter */
    std::atomic<bool>                m_rx_ready{false};
};

template <typename F>
unsigned endpoint::receive(unsigned budget, F on_frame)
{
    uint64_t sent  = fab::frames_to(m_rec, m_host);
    unsigned count = 0;

    if ((sent == m_rx_seen) &&
        !m_rx_ready.exchange(false, std::memory_order_relaxed)) {
        return 0; /* nothing was sent to us: no system call */
    }

    while (count < budget) {
        ssize_t n = recv(m_fd, m_rx.data(), m_rx.size(), MSG_DONTWAIT);
        frame_hdr fh;

        if (n < 0) {
            /* drained: what the counter says now is seen (a frame counted
             * after its sender's sendto() costs one more look) */
            m_rx_seen = sent;
            break;
        }
        ++count;
        if (size_t(n) < sizeof(fh)) {
            continue;
        }
        memcpy(&fh, m_rx.data(), sizeof(fh));
        if ((fh.magic != FRAME_MAGIC) || (fh.version != FRAME_VERSION) ||
            (fh.fabric_id != m_fabric_id) || (fh.bytes != size_t(n))) {
            continue; /* not of this fabric (a recycled one) */
        }
        on_frame(fh, m_rx.data() + sizeof(fh), size_t(n) - sizeof(fh));
    }

    return count;
}

} // namespace wire
} // namespace uct_ib_emu

#endif
