/*
 * The shared registry of a fabric: its segment, the lock, liveness, and
 * the default topology of a fresh fabric (shm_fabric.h).
 */
#include <emu/fabric/host_topology.h>
#include <emu/fabric/segment_guard.h>
#include <emu/fabric/shm_fabric.h>
#include <emu/model/model.h>

#include <ucs/debug/log_def.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>
#include <thread>


namespace uct_ib_emu {
namespace fab {

namespace {

constexpr auto LOCK_TIMEOUT = std::chrono::seconds(10);

void copy_name(char *dst, size_t size, const std::string &src)
{
    snprintf(dst, size, "%s", src.c_str());
}

} // namespace


socklen_t abstract_addr(const std::string &name, struct sockaddr_un *addr)
{
    size_t len = std::min(name.size(), sizeof(addr->sun_path) - 1);

    memset(addr, 0, sizeof(*addr));
    addr->sun_family = AF_UNIX;
    /* sun_path[0] = 0: the abstract namespace, nothing in the file system */
    memcpy(addr->sun_path + 1, name.data(), len);
    return static_cast<socklen_t>(offsetof(struct sockaddr_un, sun_path) + 1 +
                                  len);
}


bool name_valid(const std::string &name)
{
    if (name.empty() || (name.size() > MAX_FABRIC_NAME)) {
        return false;
    }

    for (char c : name) {
        if (!isalnum(static_cast<unsigned char>(c)) && (c != '_') &&
            (c != '-') && (c != '.')) {
            return false;
        }
    }
    return true;
}

std::string socket_name(const std::string &fabric, const std::string &what)
{
    return "ucx-emu." + std::to_string(getuid()) + "." + fabric + "." + what;
}

std::string shm_name(const std::string &fabric)
{
    return "/ucx-emu." + std::to_string(getuid()) + "." + fabric;
}

int bind_abstract(const std::string &name)
{
    struct sockaddr_un addr;
    socklen_t len = abstract_addr(name, &addr);
    int fd        = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK,
                           0);
    int err;

    if (fd < 0) {
        return -1;
    }

    if (bind(fd, reinterpret_cast<struct sockaddr*>(&addr), len) != 0) {
        err = errno;
        ::close(fd);
        errno = err;
        return -1;
    }
    return fd;
}

bool name_bound(const std::string &name)
{
    struct sockaddr_un addr;
    socklen_t len = abstract_addr(name, &addr);
    int fd        = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    bool bound;

    if (fd < 0) {
        return true; /* cannot tell: assume alive, never recycle wrongly */
    }

    bound = (connect(fd, reinterpret_cast<struct sockaddr*>(&addr), len) == 0)
            || (errno != ECONNREFUSED);
    ::close(fd);
    return bound;
}


fabric_lock::~fabric_lock()
{
    if (m_fd >= 0) {
        ::close(m_fd);
    }
}

ucs_status_t fabric_lock::acquire(const std::string &fabric)
{
    auto deadline = std::chrono::steady_clock::now() + LOCK_TIMEOUT;
    std::string name = socket_name(fabric, "lock");
    auto pause       = std::chrono::microseconds(50);

    for (;;) {
        m_fd = bind_abstract(name);
        if (m_fd >= 0) {
            return UCS_OK;
        }
        if (errno != EADDRINUSE) {
            ucs_error("emu: fabric %s: cannot take its lock: %m",
                      fabric.c_str());
            return UCS_ERR_IO_ERROR;
        }
        if (std::chrono::steady_clock::now() > deadline) {
            ucs_error("emu: fabric %s: its lock is held for more than %lld s",
                      fabric.c_str(), static_cast<long long>(
                              LOCK_TIMEOUT.count()));
            return UCS_ERR_TIMED_OUT;
        }
        std::this_thread::sleep_for(pause);
        pause = std::min(pause * 2, std::chrono::microseconds(5000));
    }
}


bool host_alive(const std::string &fabric, unsigned h)
{
    return name_bound(socket_name(fabric, "h" + std::to_string(h)));
}

unsigned live_hosts(const fabric_rec *rec)
{
    std::string name(rec->name, strnlen(rec->name, sizeof(rec->name)));
    unsigned count = 0;

    for (unsigned h = 0; h < host_count(rec); ++h) {
        count += host_alive(name, h);
    }
    return count;
}

unsigned bound_hosts(const std::string &fabric)
{
    unsigned count = 0;

    for (unsigned h = 0; h < MAX_HOSTS; ++h) {
        count += host_alive(fabric, h);
    }
    return count;
}

bool header_intact(const fabric_rec *rec, uint64_t fabric_id)
{
    return (rec->magic == MAGIC) && (rec->version == LAYOUT_VERSION) &&
           (rec->size == sizeof(fabric_rec)) && (rec->nhosts >= 1) &&
           (rec->nhosts <= MAX_HOSTS) && (rec->fabric_id == fabric_id);
}

namespace {

/* A name field: NUL-terminated within its size, printable, not empty */
bool name_field_ok(const char *field, size_t size)
{
    const size_t len = strnlen(field, size);

    if ((len == 0) || (len == size)) {
        return false;
    }
    for (size_t i = 0; i < len; ++i) {
        if ((field[i] < 0x21) || (field[i] > 0x7e)) {
            return false;
        }
    }
    return true;
}

} // namespace

std::string registry_problem(const fabric_rec *rec, const std::string &name)
{
    char buf[128];

    if (rec->magic != MAGIC) {
        return "no fabric header (wrong magic)";
    }
    if (rec->version != LAYOUT_VERSION) {
        snprintf(buf, sizeof(buf), "made by version %u of the emulated "
                 "fabric, this library speaks version %u", rec->version,
                 LAYOUT_VERSION);
        return buf;
    }
    if (rec->size != sizeof(fabric_rec)) {
        snprintf(buf, sizeof(buf), "its header says %u bytes, a version %u "
                 "registry has %zu", rec->size, LAYOUT_VERSION,
                 sizeof(fabric_rec));
        return buf;
    }
    if ((rec->nhosts < 1) || (rec->nhosts > MAX_HOSTS)) {
        snprintf(buf, sizeof(buf), "it counts %u hosts (1..%u)", rec->nhosts,
                 MAX_HOSTS);
        return buf;
    }
    if (!name_field_ok(rec->name, sizeof(rec->name)) ||
        (name != rec->name)) {
        return "it carries another fabric's name, or none";
    }
    for (unsigned h = 0; h < host_count(rec); ++h) {
        if (!name_field_ok(rec->hosts[h].name, sizeof(rec->hosts[h].name))) {
            snprintf(buf, sizeof(buf), "host %u has no readable name", h);
            return buf;
        }
    }
    return "";
}

void init_registry(fabric_rec *rec, const std::string &name, unsigned nhosts,
                   bool persistent)
{
    std::random_device rd;

    memset(rec, 0, sizeof(*rec));
    rec->magic      = MAGIC;
    rec->version    = LAYOUT_VERSION;
    rec->size       = sizeof(*rec);
    rec->nhosts     = nhosts;
    rec->fabric_id  = (uint64_t(rd()) << 32) | rd();
    rec->persistent = persistent;
    copy_name(rec->name, sizeof(rec->name), name);

    for (unsigned h = 0; h < nhosts; ++h) {
        host_rec *host = &rec->hosts[h];

        snprintf(host->name, sizeof(host->name), "host%u", h);
        host->next_qp   = 0x100;
        host->next_mkey = 0x1000;
        fill_host_devices(host, h);
    }

    /* every host resolves every Ethernet GID of its segment */
    for (unsigned h = 0; h < nhosts; ++h) {
        for (unsigned o = 0; o < nhosts; ++o) {
            for (const dev_rec &dev : rec->hosts[o].devs) {
                const port_rec &p = dev.port;

                if (p.link_layer != IBV_LINK_LAYER_ETHERNET) {
                    continue;
                }
                for (const gid_rec &g : p.gids) {
                    if (g.valid) {
                        neigh_set(&rec->hosts[h], p.segment, g.raw, p.mac);
                    }
                }
            }
        }
    }
}


mapping::~mapping()
{
    close();
}

void mapping::close()
{
    if (m_rec != nullptr) {
        segment_guard_remove(m_guard);
        m_guard = -1;
        munmap(m_rec, sizeof(*m_rec));
        m_rec = nullptr;
    }
}

bool mapping::lost() const
{
    return segment_guard_lost(m_guard);
}

void mapping::unlink_name()
{
    shm_unlink(shm_name(m_name).c_str());
}

ucs_status_t mapping::open(const std::string &name, unsigned create_hosts,
                           unsigned want_hosts, bool persistent,
                           bool readonly)
{
    std::string path = shm_name(name);
    std::string file = "/dev/shm" + path; /* what a user sees */
    bool fresh       = false;
    std::string problem;
    struct stat st;
    void *addr;
    int fd;

    m_name = name;
    fd     = shm_open(path.c_str(), (readonly ? O_RDONLY : O_RDWR) | O_CLOEXEC,
                      0600);
    if ((fd < 0) && (errno == ENOENT) && (create_hosts > 0)) {
        fd    = shm_open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC,
                         0600);
        fresh = true;
    }
    if (fd < 0) {
        if (errno == ENOENT) {
            ucs_error("emu: fabric %s does not exist", name.c_str());
            return UCS_ERR_NO_ELEM;
        }
        ucs_error("emu: fabric %s: shm_open(%s) failed: %m", name.c_str(),
                  file.c_str());
        return UCS_ERR_IO_ERROR;
    }

    if (fstat(fd, &st) != 0) {
        ucs_error("emu: fabric %s: fstat(%s) failed: %m", name.c_str(),
                  file.c_str());
        ::close(fd);
        return UCS_ERR_IO_ERROR;
    }

    if ((st.st_size != 0) && (size_t(st.st_size) != sizeof(fabric_rec))) {
        uint32_t hdr[2] = {};

        /* another layout: name its version if it is one of ours */
        if ((pread(fd, hdr, sizeof(hdr), 0) == sizeof(hdr)) &&
            (hdr[0] == MAGIC) && (hdr[1] != LAYOUT_VERSION)) {
            ucs_error("emu: fabric %s was made by version %u of the emulated "
                      "fabric, this library speaks version %u", name.c_str(),
                      hdr[1], LAYOUT_VERSION);
        } else if (hdr[0] == MAGIC) {
            ucs_error("emu: fabric %s: its segment %s has %jd bytes, a "
                      "version %u segment has %zu: it is damaged (`ucx_emu "
                      "destroy --force %s` removes it)", name.c_str(),
                      file.c_str(), intmax_t(st.st_size), LAYOUT_VERSION,
                      sizeof(fabric_rec), name.c_str());
        } else {
            ucs_error("emu: fabric %s: %s is not a fabric segment of this "
                      "emulator (`ucx_emu destroy %s` removes it)",
                      name.c_str(), file.c_str(), name.c_str());
        }
        ::close(fd);
        return UCS_ERR_INVALID_PARAM;
    }

    /* empty: a maker died before it sized it; only a maker takes it over */
    if ((st.st_size == 0) && (create_hosts == 0)) {
        ucs_error("emu: fabric %s: its segment %s is empty (`ucx_emu destroy "
                  "%s` removes it)", name.c_str(), file.c_str(), name.c_str());
        ::close(fd);
        return UCS_ERR_INVALID_PARAM;
    }

    if ((st.st_size == 0) && (ftruncate(fd, sizeof(fabric_rec)) != 0)) {
        ucs_error("emu: fabric %s: cannot size its segment: %m", name.c_str());
        ::close(fd);
        return UCS_ERR_IO_ERROR;
    }

    addr = mmap(nullptr, sizeof(fabric_rec),
                readonly ? PROT_READ : (PROT_READ | PROT_WRITE), MAP_SHARED,
                fd, 0);
    ::close(fd);
    if (addr == MAP_FAILED) {
        ucs_error("emu: fabric %s: mmap failed: %m", name.c_str());
        return UCS_ERR_IO_ERROR;
    }
    m_rec   = static_cast<fabric_rec*>(addr);
    m_guard = segment_guard_add(addr, sizeof(fabric_rec));

    if (fresh || (size_t(st.st_size) == 0)) {
        init_registry(m_rec, name, create_hosts ? create_hosts : DEFAULT_HOSTS,
                      persistent);
        return UCS_OK;
    }

    problem = registry_problem(m_rec, name);
    if (!problem.empty()) {
        if ((m_rec->magic == MAGIC) && (m_rec->version != LAYOUT_VERSION)) {
            ucs_error("emu: fabric %s was made by version %u of the emulated "
                      "fabric, this library speaks version %u", name.c_str(),
                      m_rec->version, LAYOUT_VERSION);
        } else if (m_rec->magic == MAGIC) {
            ucs_error("emu: fabric %s: its segment %s is damaged: %s "
                      "(`ucx_emu destroy --force %s` removes it)",
                      name.c_str(), file.c_str(), problem.c_str(),
                      name.c_str());
        } else {
            ucs_error("emu: fabric %s: %s is not a fabric segment of this "
                      "emulator (`ucx_emu destroy %s` removes it)",
                      name.c_str(), file.c_str(), name.c_str());
        }
        close();
        return UCS_ERR_INVALID_PARAM;
    }

    /* a fabric whose members all died is stale: nobody vouches for its
     * state, so it starts over */
    if ((create_hosts > 0) && !readonly) {
        bool had_members = false;

        for (unsigned h = 0; h < m_rec->nhosts; ++h) {
            had_members |= (m_rec->hosts[h].joined != 0);
        }
        if (had_members && (live_hosts(m_rec) == 0)) {
            ucs_debug("emu: fabric %s: every member is gone, recycling it",
                      name.c_str());
            init_registry(m_rec, name, m_rec->nhosts,
                          m_rec->persistent || persistent);
        }
    }

    if ((want_hosts > 0) && (m_rec->nhosts != want_hosts)) {
        ucs_error("emu: fabric %s has %u hosts, not the %u asked for",
                  name.c_str(), m_rec->nhosts, want_hosts);
        close();
        return UCS_ERR_INVALID_PARAM;
    }
    return UCS_OK;
}


/*
 * The sequence lock's counter is changed and read with sequentially
 * consistent atomics, whose full barriers (a locked instruction, or a
 * load-acquire/store-release pair with a barrier on weaker machines) keep
 * the data between its two reads or writes; thread fences would say the
 * same, but ThreadSanitizer does not model them. Inside one process the
 * writer and the reader also hold emu_state::lock.
 */
void write_begin(fabric_rec *rec)
{
    __atomic_add_fetch(&rec->seq, 1, __ATOMIC_SEQ_CST);
}

void write_end(fabric_rec *rec)
{
    __atomic_add_fetch(&rec->seq, 1, __ATOMIC_SEQ_CST);
}

uint32_t read_begin(const fabric_rec *rec)
{
    return __atomic_load_n(&rec->seq, __ATOMIC_SEQ_CST);
}

bool read_retry(const fabric_rec *rec, uint32_t seq)
{
    return (seq & 1) || (__atomic_load_n(&rec->seq, __ATOMIC_SEQ_CST) != seq);
}


int find_host(const fabric_rec *rec, const std::string &name)
{
    for (unsigned h = 0; h < host_count(rec); ++h) {
        if ((name == rec->hosts[h].name) || (name == std::to_string(h))) {
            return static_cast<int>(h);
        }
    }
    return -1;
}

ucs_status_t find_port(fabric_rec *rec, const std::string &host,
                       const std::string &dev, uint8_t port, unsigned *h_p,
                       port_rec **p_p)
{
    int h = find_host(rec, host);

    if (h < 0) {
        ucs_error("emu: fabric %s has no host '%s'", rec->name, host.c_str());
        return UCS_ERR_NO_ELEM;
    }

    for (dev_rec &d : rec->hosts[h].devs) {
        if ((dev == d.name) && (port == 1)) {
            *h_p = static_cast<unsigned>(h);
            *p_p = &d.port;
            return UCS_OK;
        }
    }

    ucs_error("emu: fabric %s: host %s has no port %s:%u", rec->name,
              host.c_str(), dev.c_str(), port);
    return UCS_ERR_NO_ELEM;
}

void neigh_set(host_rec *h, const char *segment, const uint8_t *gid,
               const uint8_t *mac)
{
    neigh_rec *free_slot = nullptr;

    for (neigh_rec &n : h->neigh) {
        if (n.valid && !strcmp(n.segment, segment) &&
            !memcmp(n.gid, gid, sizeof(n.gid))) {
            if (memcmp(n.mac, mac, sizeof(n.mac))) {
                memcpy(n.mac, mac, sizeof(n.mac));
                neigh_event_post(&h->neigh_events, NEIGH_EVENT_NEW, segment,
                                 gid, mac);
            }
            return;
        }
        if (!n.valid && (free_slot == nullptr)) {
            free_slot = &n;
        }
    }

    if (free_slot == nullptr) {
        ucs_warn("emu: the neighbour table of %s is full", h->name);
        return;
    }

    snprintf(free_slot->segment, sizeof(free_slot->segment), "%s", segment);
    memcpy(free_slot->gid, gid, sizeof(free_slot->gid));
    memcpy(free_slot->mac, mac, sizeof(free_slot->mac));
    free_slot->valid = 1;
    neigh_event_post(&h->neigh_events, NEIGH_EVENT_NEW, segment, gid, mac);
}

bool neigh_del(host_rec *h, const char *segment, const uint8_t *gid)
{
    for (neigh_rec &n : h->neigh) {
        if (n.valid && !strcmp(n.segment, segment) &&
            !memcmp(n.gid, gid, sizeof(n.gid))) {
            n.valid = 0;
            neigh_event_post(&h->neigh_events, NEIGH_EVENT_DEL, segment, gid,
                             n.mac);
            return true;
        }
    }
    return false;
}

void conn_write(host_rec *h, const conn_info &c)
{
    uint64_t gen  = __atomic_load_n(&h->conns_made, __ATOMIC_RELAXED) + 1;
    conn_rec *r   = &h->conns[(gen - 1) % CONNS_PER_HOST];
    uint64_t w[5] = {};

    w[0] = (uint64_t(c.qpn) << 32) | c.remote_qpn;
    w[1] = uint64_t(c.dev) | (uint64_t(c.port) << 8) |
           (uint64_t(c.grh) << 16) | (uint64_t(c.devx) << 24) |
           (uint64_t(c.rlid) << 32);
    memcpy(&w[2], c.rmac, sizeof(c.rmac));
    memcpy(&w[3], c.rgid, sizeof(c.rgid));

    __atomic_store_n(&r->gen, 0, __ATOMIC_SEQ_CST);
    for (unsigned i = 0; i < 5; ++i) {
        __atomic_store_n(&r->words[i], w[i], __ATOMIC_SEQ_CST);
    }
    __atomic_store_n(&r->gen, gen, __ATOMIC_SEQ_CST);
    __atomic_store_n(&h->conns_made, gen, __ATOMIC_SEQ_CST);
}

std::vector<conn_info> conn_read(const host_rec *h)
{
    uint64_t made  = __atomic_load_n(&h->conns_made, __ATOMIC_SEQ_CST);
    uint64_t first = (made > CONNS_PER_HOST) ? made - CONNS_PER_HOST + 1 : 1;
    std::vector<conn_info> conns;

    for (uint64_t gen = first; gen <= made; ++gen) {
        const conn_rec *r = &h->conns[(gen - 1) % CONNS_PER_HOST];
        uint64_t w[5];
        conn_info c;

        if (__atomic_load_n(&r->gen, __ATOMIC_SEQ_CST) != gen) {
            continue; /* being rewritten by a newer one */
        }
        for (unsigned i = 0; i < 5; ++i) {
            w[i] = __atomic_load_n(&r->words[i], __ATOMIC_SEQ_CST);
        }
        if (__atomic_load_n(&r->gen, __ATOMIC_SEQ_CST) != gen) {
            continue;
        }

        c.gen        = gen;
        c.qpn        = uint32_t(w[0] >> 32);
        c.remote_qpn = uint32_t(w[0]);
        c.dev        = uint8_t(w[1]);
        c.port       = uint8_t(w[1] >> 8);
        c.grh        = uint8_t(w[1] >> 16);
        c.devx       = uint8_t(w[1] >> 24);
        c.rlid       = uint16_t(w[1] >> 32);
        memcpy(c.rmac, &w[2], sizeof(c.rmac));
        memcpy(c.rgid, &w[3], sizeof(c.rgid));
        conns.push_back(c);
    }
    return conns;
}

uint64_t process_start_time(int pid)
{
    char path[64], buf[1024];
    unsigned long long start = 0;
    const char *p;
    FILE *f;
    size_t n;

    snprintf(path, sizeof(path), "/proc/%d/stat", pid);
    f = fopen(path, "re");
    if (f == nullptr) {
        return 0;
    }
    n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';

    /* field 22, counted after the command name's closing parenthesis */
    p = strrchr(buf, ')');
    for (int field = 2; (p != nullptr) && (field < 22); ++field) {
        p = strchr(p + 1, ' ');
    }
    if ((p == nullptr) || (sscanf(p + 1, "%llu", &start) != 1)) {
        return 0;
    }
    return start;
}

} // namespace fab
} // namespace uct_ib_emu
