/*
 * The engine of the emulated NIC (docs/architecture.md, section 7, and
 * docs/emulator.md, "The engine, step by step"): it follows the doorbell
 * records of the queues, executes the WQEs from the rings and writes CQEs.
 * Its files, as rxe splits rxe_req.c, rxe_resp.c and rxe_comp.c:
 *   engine.cc         the drive: the thread, the deterministic step mode,
 *                     the clock
 *   engine_thread.cc  the thread's scheduling
 *   wqe.cc            send WQEs decoded from the rings
 *   opcodes.cc        which segments an opcode carries and what it does
 *   requester.cc      send queues: packets, per-QP order, ack and RNR timers
 *   responder.cc      incoming requests against the destination QP and its
 *                     memory, and their acknowledgements
 *   completer.cc      answers matched to WQEs, CQEs (success, error, flush),
 *                     overrun
 *   queues.cc         the rings of a QP, receive WQEs of RQs and SRQs
 *   ud.cc             UD datagrams: the address vector, delivery, the GRH
 *   dc.cc             DC: a DCI's connections, a DCT's streams
 *   tag_matching.cc   an XRQ's tag-matching list: list operations, matching,
 *                     the device's rendezvous read and FIN, strides
 *   delivery.cc       whether a packet reaches its responder, and why not
 *   remote.cc         frames from other hosts, executed here
 *   mkey.cc           memory keys: lookup, access rights, bounds
 *   counters.cc       what the engine counts, per port
 * The requester and the responder talk only through the packets below, so
 * the responder runs where the destination QP lives.
 *
 * engine/ includes model/ and fabric/ (the engine calls the fabric, never
 * the other way), never frontend/ (buildlib/check-emu-layers.sh). Everything
 * here runs with emu_state::lock held; memory the device shares with its
 * user is read with acquire and written with release ordering (model/dma.h).
 */
#ifndef UCT_IB_EMU_ENGINE_ENGINE_H_
#define UCT_IB_EMU_ENGINE_ENGINE_H_

#include <emu/fabric/wire.h>
#include <emu/model/events.h>
#include <emu/model/model.h>

#include <uct/ib/mlx5/dv/wqe_ext.h>

#include <endian.h>


namespace uct_ib_emu {

using wire::resp_kind;

/* ------------------------------------------------------------------------
 * Opcodes (opcodes.cc)
 */
enum opcode_flags : unsigned {
    OP_RADDR      = 1u << 0, /* carries a remote address segment */
    OP_ATOMIC     = 1u << 1, /* carries an atomic segment */
    OP_IMM        = 1u << 2, /* the control segment's immediate is sent */
    OP_SEND       = 1u << 3, /* consumes a receive WQE at the responder */
    OP_WRITE      = 1u << 4, /* writes responder memory */
    OP_READ       = 1u << 5, /* reads responder memory */
    OP_ATOMIC_OP  = 1u << 6, /* atomic on responder memory */
    OP_RESPONSE   = 1u << 7, /* the response carries data */
    OP_LOCAL      = 1u << 8, /* executes in the local QP only */
    OP_MASKED     = 1u << 9, /* masked (extended) atomic */
    OP_UMR        = 1u << 10, /* a memory window's bind or invalidate */
    OP_INVAL      = 1u << 11, /* invalidates a memory window remotely */
    OP_TM         = 1u << 12  /* changes its XRQ's tag-matching list */
};

struct opcode_info {
    uint8_t    opcode;   /* MLX5_OPCODE_* */
    const char *name;
    unsigned   flags;    /* opcode_flags */
};

/* The entry of a modelled opcode, or NULL */
const opcode_info *find_opcode(uint8_t opcode);


/* ------------------------------------------------------------------------
 * Packets between a requester and a responder: a request is its header as
 * the wire carries it to another host (fabric/wire.h), whichever way it
 * goes, with this packet's data
 */
struct request_pkt {
    wire::req_hdr     hdr;
    const opcode_info *info;
    const uint8_t     *payload; /* hdr.payload_len bytes (SEND, WRITE) */
    bool              defer_read = false; /* a READ's data is not gathered:
                                             the response says where it is */

    bool first() const
    {
        return hdr.flags & wire::REQ_FIRST;
    }

    bool last() const
    {
        return hdr.flags & wire::REQ_LAST;
    }

    bool solicited() const
    {
        return hdr.flags & wire::REQ_SOLICITED;
    }
};

/* PSN a comes before b: 24-bit numbers, half of their space behind */
inline bool psn_before(uint32_t a, uint32_t b)
{
    uint32_t d = (b - a) & 0xffffff;

    return (d != 0) && (d < 0x800000);
}

struct response_pkt {
    resp_kind            kind      = resp_kind::ACK;
    uint32_t             psn       = 0;
    uint8_t              rnr_timer = 0; /* RNR NAK: the responder's encoding */
    std::vector<uint8_t> data;          /* read response / atomic original */
    bool                 read      = false; /* a deferred READ, checked: */
    uint64_t             read_addr = 0;     /* its data, still in memory */
    uint32_t             read_len  = 0;
};


/* ------------------------------------------------------------------------
 * Memory keys (mkey.cc)
 */
struct mem_frag {
    uint8_t *ptr;
    uint32_t len;
};

/* The fragments of one translation: nearly always one, so a few live in
 * place and the fast path allocates nothing */
class frag_list {
public:
    void push_back(const mem_frag &f)
    {
        if (m_count < INLINE) {
            m_inline[m_count] = f;
        } else {
            m_more.push_back(f);
        }
        ++m_count;
    }

    void clear()
    {
        m_count = 0;
        m_more.clear();
    }

    size_t size() const
    {
        return m_count;
    }

    const mem_frag &operator[](size_t i) const
    {
        return (i < INLINE) ? m_inline[i] : m_more[i - INLINE];
    }

    template <typename F>
    void for_each(F f) const
    {
        for (size_t i = 0; i < m_count; ++i) {
            f((*this)[i]);
        }
    }

    /* The fragments' bytes from @a src, which advances past them; a page
     * the user unmapped takes nothing (dma_user_write) */
    void write_from(const uint8_t *&src) const
    {
        for_each([&src](const mem_frag &f) {
            (void)dma_user_write(f.ptr, src, f.len);
            src += f.len;
        });
    }

    /* The fragments' bytes, appended to @a out; an unmapped page reads as
     * zeros (dma_user_read) */
    void append_to(std::vector<uint8_t> *out) const
    {
        for_each([out](const mem_frag &f) {
            const size_t at = out->size();

            out->resize(at + f.len);
            (void)dma_user_read(out->data() + at, f.ptr, f.len);
        });
    }

private:
    static constexpr size_t INLINE = 4;

    mem_frag              m_inline[INLINE];
    std::vector<mem_frag> m_more;
    size_t                m_count = 0;
};

enum class key_check {
    OK,
    NO_KEY,    /* no MR or mkey with this key, or unbound */
    PD,        /* the key's PD is not the QP's */
    ACCESS,    /* the key does not grant the access */
    BOUNDS     /* the range is outside the key */
};

/* Translate [addr, addr + len) of key, for a QP in pd needing access (ibv
 * access flags; 0 = local read), into host memory fragments. A remote
 * access names the responder QP (@a via): only then may the key be a
 * memory window's (a type 2 window only through the QP it is bound to) */
key_check mem_translate(const device *dev, const pd *p, uint32_t key,
                        uint64_t addr, uint64_t len, int access,
                        frag_list *frags, const qp *via = nullptr);

/* A UMR WQE: a memory window bound or invalidated (mw.cc); the syndrome of
 * its failure, or 0 */
uint8_t mw_execute(emu_state &s, qp *q, const send_wqe &w);

/* A SEND_INVAL's remote invalidation of a type 2 window bound to dst
 * (mw.cc); false if the key names no such window */
bool mw_invalidate_remote(emu_state &s, qp *dst, uint32_t rkey);


/* ------------------------------------------------------------------------
 * Completions (completer.cc)
 */
struct cqe_desc {
    uint8_t  opcode;        /* MLX5_CQE_* */
    uint8_t  sop;           /* requester: the WQE's opcode */
    uint16_t wqe_counter;
    uint32_t qpn;
    uint32_t byte_cnt;
    uint32_t imm;           /* big endian */
    uint32_t srqn;
    uint8_t  syndrome;      /* error CQEs */
    uint8_t  vendor_syndrome;
    bool     solicited;     /* a receive of a solicited message */
    bool     ud;            /* a UD receive: the fields below are written */
    uint32_t flags_rqpn;    /* GRH bits, sl, source QPN */
    uint16_t slid;
    uint8_t  ml_path;       /* the DLID's path bits (InfiniBand, LMC > 0) */
    /* Scatter to CQE: the data written into the CQE instead of memory, up
     * to 32 bytes in the 64-byte CQE itself (MLX5_INLINE_SCATTER_32), up
     * to 64 in the 64 bytes before it, the first half of a 128-byte CQE
     * (MLX5_INLINE_SCATTER_64) */
    const uint8_t *scatter;
    uint32_t      scatter_len;
    /* Tag matching (app UCT_MLX5_CQE_APP_TAG_MATCHING when app_op is set):
     * the entry, and the 16 bytes the CQE begins with (a matched message's
     * header, or a list operation's result) */
    uint8_t       app_op;
    uint16_t      app_info;
    const uint8_t *tm_hdr;
    bool          stride_set;   /* a striding queue's CQE: its stride */
    uint16_t      stride_index;
};

/* Scatter to CQE: the largest read or atomic response (requester, cs_req)
 * or received SEND (responder, cs_res) q writes into its CQE instead of
 * memory; 0 when off */
uint32_t cqe_scatter_max_req(const qp *q);
uint32_t cqe_scatter_max_res(const qp *q);

/* Write a CQE; false on an overrun (nothing written, CQ in error) */
bool cqe_write(emu_state &s, cq *c, const cqe_desc &d);

/* The emulator's vendor syndrome of an error CQE's syndrome */
uint8_t vendor_syndrome(uint8_t syndrome);

/* Move q to ERR as after an error completion (logged once) */
void qp_to_error(emu_state &s, qp *q, const char *why);


/* ------------------------------------------------------------------------
 * Rings and receive queues (queues.cc)
 */
struct ring {
    uint8_t  *buf;    /* NULL: the QP has no such queue */
    uint32_t cnt;     /* entries (send queue: basic blocks), a power of two */
    uint32_t stride;
};

ring sq_ring(const qp *q);
ring rq_ring(const qp *q);

/* The QP's doorbell record: [MLX5_RCV_DBR] receive, [MLX5_SND_DBR] send */
uint32_t *qp_dbrec(const qp *q);

/* Take the next receive WQE of q (its RQ or SRQ): false if none */
bool recv_take(qp *q, uint16_t *wqe_index, std::vector<sge> *sges);

/* A striding XRQ: the strides posted and not yet taken; take the next
 * stride (its WQE's index, its place in the WQE and its data segment),
 * false if none */
uint64_t srq_strides_left(srq *sq);
bool srq_take_stride(srq *sq, uint16_t *wqe_index, uint16_t *stride,
                     sge *out);

/* Flush the receive WQEs of an RQ in ERR (not an SRQ's) */
bool recv_flush(emu_state &s, qp *q);

/* Check the doorbells rung on dev's UAR pages since the last pass against
 * the doorbell records and the rings, counting and reporting what is wrong
 * (doorbells.cc); before the send queues run, so their WQEs are still in
 * the rings */
void doorbell_check(emu_state &s, device *dev);
/* The same for one page: a QP's destroy runs it first, since the rings a
 * program made before the destroy command reached the device before it */
void doorbell_check_page(emu_state &s, device *dev, uar_page *page);


/* ------------------------------------------------------------------------
 * WQEs (wqe.cc): decode the send WQE at basic block index of q's ring
 */
void wqe_decode(const qp *q, const ring &r, uint16_t index, send_wqe *w);


/* ------------------------------------------------------------------------
 * The requester (requester.cc): one pass over q's send queue, true if it
 * did work; the earliest timer of its send queue, or UINT64_MAX; go back to
 * the oldest WQE sent to another host (everything after it is sent again,
 * with the same PSNs); wait the RNR timer the responder asked for
 */
bool requester_progress(emu_state &s, qp *q);
uint64_t requester_next_timer(const qp *q);
void requester_rewind(qp *q);
void requester_rnr_wait(emu_state &s, send_wqe &w, uint8_t rnr_timer);
/* A piece of w's answer arrived: its ack timer starts again */
void requester_answered(emu_state &s, const qp *q, send_wqe &w);


/* ------------------------------------------------------------------------
 * The responder (responder.cc): execute a request that reached dst
 */
void responder_receive(emu_state &s, qp *dst, const request_pkt &req,
                       response_pkt *resp);


/* ------------------------------------------------------------------------
 * The completer (completer.cc), for the requester's WQEs:
 *  - complete_wqe: w's CQE, if it asked for one or failed (a CQ overrun
 *    moves the QP to ERR);
 *  - fail_wqe: w completes with syndrome, and the QP moves to ERR (a UD QP
 *    to SQER);
 *  - take_response: len bytes of w's response, at offset of the message,
 *    into its CQE (scatter to CQE) or its local buffers;
 *  - nak_syndrome: the CQE syndrome of a NAK;
 *  - rnr_retry_left: an RNR NAK for w, counted; whether w may be retried;
 *  - completer_ack: the ACK of w's last packet, with its response data;
 *  - completer_response: an answer from another host of the fabric for q
 */
void complete_wqe(emu_state &s, qp *q, const send_wqe &w, uint8_t syndrome);
void fail_wqe(emu_state &s, qp *q, const send_wqe &w, uint8_t syndrome);
void take_response(const qp *q, send_wqe &w, size_t offset,
                   const uint8_t *src, size_t len);
uint8_t nak_syndrome(resp_kind kind);
bool rnr_retry_left(emu_state &s, qp *q, send_wqe &w);
void completer_ack(emu_state &s, qp *q, send_wqe &w, const uint8_t *data,
                   size_t len);
void completer_response(emu_state &s, qp *q, const wire::resp_hdr &h,
                        const uint8_t *data);


/* ------------------------------------------------------------------------
 * Tag matching (tag_matching.cc), on an XRQ with the tag-matching topology:
 *  - tm_list_op: a TAG_MATCHING WQE of q changes its XRQ's list; the
 *    syndrome of a WQE the device refuses, or 0;
 *  - tm_receive: the first packet of a SEND reached dst, whose XRQ matches
 *    it against its list: the receive in progress set up (the tagged
 *    buffer, or a receive WQE for an unexpected or untagged message); false
 *    if it needs a receive WQE and there is none (RNR);
 *  - tm_rndv_arrived: a matched rendezvous request has arrived whole: its
 *    entry is consumed, and the device reads the data;
 *  - tm_stride_packet: a packet of a message that a striding XRQ
 *    receives into its strides, each with a CQE; the syndrome of a
 *    failure, or 0;
 *  - tm_device_op_done: what the device queued on q completed;
 *  - tm_srq: dst's XRQ if it matches tags, else NULL
 */
uint8_t tm_list_op(emu_state &s, qp *q, const send_wqe &w);
bool tm_receive(emu_state &s, qp *dst, const request_pkt &req);
void tm_rndv_arrived(emu_state &s, qp *dst, const request_pkt &req);
uint8_t tm_stride_packet(emu_state &s, qp *dst, const request_pkt &req);
void tm_device_op_done(emu_state &s, qp *q, const send_wqe &w,
                       uint8_t syndrome);

inline srq *tm_srq(const qp *dst)
{
    return ((dst->srq != nullptr) && dst->srq->tag_matching) ? dst->srq :
                                                               nullptr;
}


/* ------------------------------------------------------------------------
 * Delivery (delivery.cc): whether what requester q sends now reaches a
 * responder, by the rules of docs/architecture.md. UCT_IB_EMU_DROP_NONE and
 * the responder, or the reason of the drop (counted and logged by the
 * caller). A destination on another host of the fabric is checked up to
 * its port here: then *dst_p is NULL and *remote says where to send
 * (without @a remote such a destination is a drop); the QP is checked
 * there (remote.cc).
 */
uct_ib_emu_drop_t deliver(const emu_state &s, const qp *q, qp **dst_p,
                          wire::dest *remote = nullptr);

/* The first half of deliver(), for a packet of q on path (a datagram's
 * address vector, for UD): the destination device and port, or, on another
 * host, *dev_p NULL and *remote filled */
uct_ib_emu_drop_t route(const emu_state &s, const qp *q,
                        const uct_ib_emu_ads_t &path, const device **dev_p,
                        const port **port_p, wire::dest *remote);

/* deliver() for one packet of the engine carrying payload_len bytes: also
 * dropped when larger than the responder's path MTU */
uct_ib_emu_drop_t deliver_packet(const emu_state &s, const qp *q,
                                 uint32_t payload_len, qp **dst_p,
                                 wire::dest *remote = nullptr);

/* Bytes of a path MTU in the IB encoding (1 = 256 .. 5 = 4096), 0 if invalid */
uint32_t mtu_bytes(uint8_t mtu);

/* Count and log a dropped packet of q */
void count_drop(emu_state &s, const qp *q, uct_ib_emu_drop_t reason);


/* ------------------------------------------------------------------------
 * The fabric's frames (remote.cc): one pass of receiving (each frame taken
 * apart and its packets executed here) and of sending what the pass
 * queued; true if it did work
 */
bool engine_receive_locked(emu_state &s);
bool engine_flush_locked(emu_state &s);

/* The reads q answers to other hosts, as far as their links take them;
 * true if it did work */
bool remote_reads_progress(emu_state &s, qp *q);


/* ------------------------------------------------------------------------
 * UD (ud.cc): datagrams, no acknowledgements, no retries
 */
constexpr unsigned UD_GRH_LEN = 40;

/* A datagram as it reaches the destination port */
struct datagram {
    uint32_t      src_qpn;
    uint32_t      dst_qpn;
    uint32_t      qkey;
    uint32_t      imm;        /* big endian, with has_imm */
    bool          has_imm;
    bool          solicited;
    bool          has_grh;    /* grh holds the GRH / IPv4 header area */
    uint8_t       grh[UD_GRH_LEN];
    uint16_t      slid;
    uint8_t       dlid_bits;  /* the DLID's low 7 bits (InfiniBand) */
    uint8_t       sl;         /* the receive CQE's sl field */
    const uint8_t *payload;
    uint32_t      payload_len;
};

/* The address path an address vector (a UD or DC WQE's datagram segment)
 * names: what route() reads, and the GRH fields */
void av_path(const struct mlx5_wqe_av &av, uct_ib_emu_ads_t *path);

/* Decode a UD WQE's datagram segment at seg (left bytes of the WQE from
 * there) into w; its length in *used, or a CQE syndrome */
uint8_t ud_decode_datagram_seg(send_wqe *w, const uint8_t *seg, unsigned left,
                               unsigned *used);

/* Send w's message (gathered in payload) as one datagram: 0 once it is
 * on the wire (delivered or not), or the syndrome of a local error */
uint8_t ud_send(emu_state &s, qp *q, const send_wqe &w,
                const std::vector<uint8_t> &payload);

/* A datagram reached a port of this host: its UD QP dst_qpn there
 * receives it or it is dropped (counted) */
void ud_receive(emu_state &s, const device *dev, const port *p,
                const datagram &d);

/* Move a UD QP to SQER after a send error (receives go on) */
void qp_to_sq_error(qp *q, const char *why);


/* ------------------------------------------------------------------------
 * DC (dc.cc):
 *  - dc_same_target: w goes where the DCI's connection goes;
 *  - dc_connect: the DCI's oldest WQE w names its target: connect to it
 *    anew unless it is the current one;
 *  - dc_request_fields: what a DCI's packets carry for the DCT;
 *  - dc_admit: a request h reached a DCT: false if it is dropped (a wrong
 *    key, an older connection; counted), else the stream that executes it
 */
bool dc_same_target(const qp *dci, const send_wqe &w);
void dc_connect(emu_state &s, qp *dci, const send_wqe &w);
void dc_request_fields(const qp *dci, wire::req_hdr *h);
bool dc_admit(emu_state &s, qp *dct, const wire::req_hdr &h, qp **stream_p);


/* ------------------------------------------------------------------------
 * Counters (counters.cc): each counts on the emulator's totals and on the
 * port of the QP it names (the sender of a packet, the receiver of a
 * delivered one, the QP whose CQE it is)
 */
inline void count_sent(emu_state &s, const qp *from, uint64_t n = 1)
{
    port *p = qp_port(from);

    s.engine.packets_sent += n;
    if (p != nullptr) {
        p->counters.engine.packets_sent += n;
    }
}

inline void count_delivered(emu_state &s, const qp *to, uint64_t n = 1)
{
    port *p = qp_port(to);

    s.engine.packets_delivered += n;
    if (p != nullptr) {
        p->counters.engine.packets_delivered += n;
    }
}

void count_retry(emu_state &s, const qp *q);
void count_rnr_nak(emu_state &s, const qp *q);
void count_err_cqe(emu_state &s, const cq *c, uint32_t qpn, uint8_t syndrome);
void count_cq_overrun(emu_state &s, const cq *c, uint32_t qpn);


/* The emulator's clock, in nanoseconds (read lazily, once a pass) */
uint64_t engine_now(emu_state &s);

/* Work the engine does once per pass over the devices (s.lock held) */
bool engine_pass_locked(emu_state &s);

/* The engine's thread starts for an opened context and stops after the
 * last one is closed (both called without s.lock); its clock scale is set
 * again from the configuration with the topology (s.lock held) */
void engine_context_opened();
void engine_context_closed();
void engine_clock_reset_locked(emu_state &s);

/* On the engine thread: ask the kernel to serve its wake-ups promptly
 * (engine_thread.cc) */
void engine_thread_tune();


} // namespace uct_ib_emu

#endif
