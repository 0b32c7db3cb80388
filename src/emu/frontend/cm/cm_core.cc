/*
 * The connection manager's channels, ids and events, and its messages
 * between hosts (cm.h). An event channel is a pipe: a byte for each event
 * queued, so that the program may poll its descriptor, block on it, or make
 * it non-blocking, as with the kernel's rdma_cm device.
 */
#include <emu/frontend/cm/cm.h>
#include <emu/fabric/member.h>

#include <fcntl.h>
#include <time.h>
#include <unistd.h>


namespace uct_ib_emu {
namespace cm {

namespace {

constexpr size_t CLOSED_WFDS_KEPT = 64;

void on_message(emu_state &s, unsigned src_host, const uint8_t *p,
                size_t len)
{
    msg m;

    (void)s;
    if (len < sizeof(m)) {
        return;
    }
    memcpy(&m, p, sizeof(m));
    receive_locked(src_host, m);
}

bool on_tick(emu_state &s)
{
    (void)s;
    return tick_locked();
}

} // namespace


cm_state &the_cm()
{
    /* made once and kept: the devices it opened live as long as the
     * program, as librdmacm's */
    static cm_state *cm = new cm_state();

    return *cm;
}

uint64_t now_ns()
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}

void hook_engine()
{
    emu_state &s = state();
    guard g(s.lock);

    s.cm_receive = on_message;
    s.cm_tick    = on_tick;
}

unsigned own_host()
{
    emu_state &s = state();
    guard g(s.lock);

    return (s.fabric != nullptr) ? s.fabric->host() : 0;
}

channel *channel_create()
{
    auto ch = std::make_unique<channel>();
    int fds[2];

    if (pipe2(fds, O_CLOEXEC) != 0) {
        return nullptr;
    }
    ch->pub.fd = fds[0];
    ch->wfd    = fds[1];

    cm_state &cm = the_cm();
    std::lock_guard<std::mutex> g(cm.lock);
    channel *raw = ch.get();
    cm.channels[raw] = std::move(ch);
    return raw;
}

void channel_destroy(channel *ch)
{
    cm_state &cm = the_cm();
    std::unique_ptr<channel> gone;

    {
        std::lock_guard<std::mutex> g(cm.lock);
        auto it = cm.channels.find(ch);
        if (it == cm.channels.end()) {
            return;
        }
        gone = std::move(it->second);
        cm.channels.erase(it);
    }
    close(gone->pub.fd);
    /* A thread of the program may still be blocked reading the channel
     * (rping's event thread, when its main thread destroys the channel):
     * as on the kernel's rdma_cm device, it stays blocked, so the write
     * end is not closed, which would wake it with an end of file. The last
     * few are kept; an older one is closed. */
    std::lock_guard<std::mutex> g(cm.lock);
    cm.closed_wfds.push_back(gone->wfd);
    if (cm.closed_wfds.size() > CLOSED_WFDS_KEPT) {
        close(cm.closed_wfds.front());
        cm.closed_wfds.pop_front();
    }
}

void post_locked(channel *ch, const pending &p)
{
    const char one = 1;

    ch->queue.push_back(p);
    /* a pipe of 64 KiB takes this many unread events; past that the
     * program reads the byte of an event it already has */
    (void)!write(ch->wfd, &one, 1);
}

void post_event(id *target, enum rdma_cm_event_type type, int status)
{
    cm_state &cm = the_cm();
    std::lock_guard<std::mutex> g(cm.lock);
    pending p;

    p.target = target;
    p.type   = type;
    p.status = status;
    post_locked(target->ch, p);
}

id *find_id(struct rdma_cm_id *pub)
{
    id *i = reinterpret_cast<id*>(pub);

    return (the_cm().owned.count(i) != 0) ? i : nullptr;
}

id *id_create(channel *ch, void *context, enum rdma_port_space ps)
{
    cm_state &cm = the_cm();
    auto i    = std::make_unique<id>();
    std::lock_guard<std::mutex> g(cm.lock);
    id *raw   = i.get();

    i->ch                  = ch;
    i->token               = cm.next_token++;
    i->pub.channel         = &ch->pub;
    i->pub.context         = context;
    i->pub.ps              = ps;
    i->pub.qp_type         = ((ps == RDMA_PS_UDP) || (ps == RDMA_PS_IPOIB)) ?
                             IBV_QPT_UD : IBV_QPT_RC;
    i->pub.route.path_rec  = &i->path;
    i->psn                 = static_cast<uint32_t>(now_ns() & 0xffffff);
    ++ch->ids;
    cm.ids[i->token] = raw;
    cm.owned[raw]    = std::move(i);
    return raw;
}

void id_destroy(id *i)
{
    cm_state &cm = the_cm();
    std::unique_ptr<id> gone;

    std::lock_guard<std::mutex> g(cm.lock);
    auto it = cm.owned.find(i);
    if (it == cm.owned.end()) {
        return;
    }
    /* its local events go with it; its messages find no id */
    std::deque<pending> &q = i->ch->queue;
    for (auto p = q.begin(); p != q.end();) {
        p = (p->target == i) ? q.erase(p) : std::next(p);
    }
    --i->ch->ids;
    cm.ids.erase(i->token);
    gone = std::move(it->second);
    cm.owned.erase(it);
}

namespace {

/* s.lock held */
bool send_locked(emu_state &s, unsigned host, const msg &m)
{
    if ((s.fabric == nullptr) || (host == s.fabric->host())) {
        receive_locked(host, m);
        return true;
    }
    if (s.fabric->isolated(host)) {
        return false;
    }
    s.fabric->net().add_cm(host, &m, sizeof(m));
    s.fabric->net().flush(s);
    return true;
}

} // namespace

bool send_msg(unsigned host, const msg &m)
{
    emu_state &s = state();
    guard g(s.lock);

    return send_locked(s, host, m);
}

} // namespace cm
} // namespace uct_ib_emu


extern "C" int uct_ib_emu_cm_release(void)
{
    using namespace uct_ib_emu;
    cm::cm_state &cm = cm::the_cm();
    std::vector<struct ibv_context*> devices;
    std::vector<struct ibv_pd*> pds;

    {
        std::lock_guard<std::mutex> g(cm.lock);
        if (!cm.owned.empty() || !cm.channels.empty()) {
            return EBUSY;
        }
        devices.swap(cm.devices);
        pds.swap(cm.pds);
        for (int fd : cm.closed_wfds) {
            close(fd);
        }
        cm.closed_wfds.clear();
    }
    {
        emu_state &s = state();
        guard g(s.lock);
        s.cm_receive = nullptr;
        s.cm_tick    = nullptr;
    }
    for (size_t d = 0; d < devices.size(); ++d) {
        if (pds[d] != nullptr) {
            (void)uct_ib_emu_glue_ops.dealloc_pd(pds[d]);
        }
        if (devices[d] != nullptr) {
            (void)uct_ib_emu_glue_ops.close_device(devices[d]);
        }
    }
    return 0;
}
