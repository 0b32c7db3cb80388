/*
 * ucx_connect_bench: how fast, and at what cost, DevX RC QPs get connected.
 *
 * Two rc_mlx5 interfaces on two ports of one fabric; M endpoints on each,
 * endpoint i of one side connected to endpoint i of the other, both ways.
 *
 *  - default: rc_mlx5 endpoints through the public API (uct_ep_create,
 *    uct_ep_get_address, uct_ep_connect_to_ep);
 *  - -k K: multi-channel endpoints of K DevX QPs each, connected with the
 *    connect helper (uct_rc_mlx5_tool_connect_qps()), one call (one
 *    destination resolution) per endpoint;
 *  - -b: the same helper-level connects twice more: with the library's
 *    validated AV cache (UCX_IB_AH_CACHE=validated, interfaces of their
 *    own), and with the baseline: AHs kept per destination and looked up at
 *    every connect, the way the library's AH cache worked before connects
 *    resolved the destination with a transient AH (baseline_ah_cache.h).
 *    The baseline lives only here: it reads the cached AH's address vector
 *    and calls the helper's two halves (uct_rc_mlx5_tool_connect_qps_av()).
 *
 * Below the public API it goes through the library's declared interface for
 * its tools, uct/api/tools/rc_mlx5_connect.h.
 *
 * Everything the library asks of the device is counted by a glue table in
 * front of the selected one (bench_probe.h), on hardware and on the emulated
 * device alike; on the emulated device the emulator's own counters are
 * compared with it, and the MAC scenario (-m) reads back each QP's context.
 */
#include "baseline_ah_cache.h"
#include "bench_probe.h"

#include <uct/api/tools/rc_mlx5_connect.h>
#include <uct/api/uct.h>
#include <emu/api/emu.h>

#include <chrono>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>
#include <unistd.h>

namespace {

using bench::glue_counts;

struct options {
    bool        emulated     = false;
    std::string local_dev;              /* "mlx5_0:1"; empty: the first */
    std::string peer_dev;               /* empty: the next device */
    unsigned    num_eps      = 1000;
    unsigned    channels     = 0;       /* 0: rc_mlx5 eps, public API */
    bool        mac_scenario = false;
    bool        baseline     = false;
    unsigned    queue_len    = 16;
    std::string dump_dir     = ".";
};

void usage(FILE *stream)
{
    fprintf(stream,
"Usage: ucx_connect_bench [options]\n"
"\n"
"Connects M endpoints on one rc_mlx5 interface to M endpoints on another\n"
"(both ways) and reports the connect rate, address handles created and\n"
"destroyed per endpoint, DevX commands per connect (QP creation excluded)\n"
"and the address handles alive at the end.\n"
"\n"
"  -e        use the emulated mlx5 device (the same as UCX_IB_GLUE=emulated);\n"
"            without it, the devices rdma-core finds are used\n"
"  -d DEV    local port, e.g. mlx5_0:1 (default: the first rc_mlx5 port)\n"
"  -p DEV    peer port (default: the first rc_mlx5 port of another device,\n"
"            else the local port itself)\n"
"  -n M      endpoints per side (default 1000)\n"
"  -k K      multi-channel endpoints of K QPs, connected by the connect\n"
"            helper with one destination resolution per endpoint\n"
"            (default: rc_mlx5 endpoints through the public UCT API)\n"
"  -m        MAC scenario (emulated device only): the peer port's MAC\n"
"            changes half-way, and every later connect is checked to carry\n"
"            the new MAC (read back from the emulated QP context)\n"
"  -b        also connect with the library's validated AV cache\n"
"            (UCX_IB_AH_CACHE=validated) and with the baseline, AHs cached\n"
"            per destination the way the pre-fix cache did (looked up and\n"
"            read at every connect), and compare the three; helper-level\n"
"            (-k, default 1 QP per endpoint), RoCE ports only\n"
"  -q N      send and receive queue length of each QP (default 16)\n"
"  -C DIR    where callgrind writes its dumps (default: .)\n"
"  -h        print this help\n"
"\n"
"Each phase first connects 16 endpoint pairs that are not measured (cold\n"
"caches, lazy symbol binding).\n"
"\n"
"Instructions per connect are reported when the benchmark runs under\n"
"callgrind with collection off outside the measured calls:\n"
"\n"
"  valgrind --tool=callgrind --collect-atstart=no \\\n"
"      ucx_connect_bench -e -b -n 500\n"
"\n"
"Each connect call is bracketed with CALLGRIND_TOGGLE_COLLECT, and so is each\n"
"call the library makes through the glue table: the device behind it (the\n"
"emulator, or rdma-core and the kernel) is not collected. Each phase ends\n"
"with a callgrind dump (callgrind.out.<pid>.<n>), which the benchmark reads\n"
"back, counting only the library's objects (libuct_ib, libucs and the libc\n"
"and libstdc++ functions they call) and leaving out its own code; it prints\n"
"the instructions by object and what it left out. callgrind_annotate shows\n"
"the functions of a dump.\n");
}

bool parse_uint(const char *arg, unsigned min, unsigned *value_p)
{
    char          *end;
    unsigned long value;

    errno = 0;
    value = strtoul(arg, &end, 10);
    if ((errno != 0) || (*end != '\0') || (end == arg) || (value < min) ||
        (value > 10000000)) {
        return false;
    }
    *value_p = unsigned(value);
    return true;
}

bool parse_options(int argc, char **argv, options *opts)
{
    int c;

    while ((c = getopt(argc, argv, "ed:p:n:k:mbq:C:h")) != -1) {
        switch (c) {
        case 'e':
            opts->emulated = true;
            break;
        case 'd':
            opts->local_dev = optarg;
            break;
        case 'p':
            opts->peer_dev = optarg;
            break;
        case 'n':
            if (!parse_uint(optarg, 1, &opts->num_eps)) {
                fprintf(stderr, "invalid -n '%s'\n", optarg);
                return false;
            }
            break;
        case 'k':
            if (!parse_uint(optarg, 1, &opts->channels)) {
                fprintf(stderr, "invalid -k '%s'\n", optarg);
                return false;
            }
            break;
        case 'm':
            opts->mac_scenario = true;
            break;
        case 'b':
            opts->baseline = true;
            break;
        case 'q':
            if (!parse_uint(optarg, 1, &opts->queue_len)) {
                fprintf(stderr, "invalid -q '%s'\n", optarg);
                return false;
            }
            break;
        case 'C':
            opts->dump_dir = optarg;
            break;
        case 'h':
            usage(stdout);
            exit(EXIT_SUCCESS);
        default:
            usage(stderr);
            return false;
        }
    }

    if (optind < argc) {
        fprintf(stderr, "unexpected argument '%s'\n", argv[optind]);
        return false;
    }
    if (opts->baseline && (opts->channels == 0)) {
        opts->channels = 1; /* the baseline is a helper-level comparison */
    }
    if (opts->mac_scenario && (opts->num_eps < 2)) {
        fprintf(stderr, "-m needs at least 2 endpoints (-n)\n");
        return false;
    }
    return true;
}

std::string mac_str(const uct_ib_emu_mac_t &mac)
{
    char buf[32];

    snprintf(buf, sizeof(buf), "%02x:%02x:%02x:%02x:%02x:%02x", mac[0],
             mac[1], mac[2], mac[3], mac[4], mac[5]);
    return buf;
}

/* "1234567" -> "1,234,567" */
std::string grouped(uint64_t value)
{
    std::string digits = std::to_string(value);
    std::string out;

    for (size_t i = 0; i < digits.size(); ++i) {
        if ((i > 0) && (((digits.size() - i) % 3) == 0)) {
            out += ',';
        }
        out += digits[i];
    }
    return out;
}

/* "mlx5_1:1" -> device "mlx5_1", port 1 */
bool split_port(const std::string &name, std::string *dev_p, uint8_t *port_p)
{
    size_t colon = name.rfind(':');

    if ((colon == std::string::npos) || (colon + 1 == name.size())) {
        return false;
    }
    *dev_p  = name.substr(0, colon);
    *port_p = uint8_t(atoi(name.c_str() + colon + 1));
    return *port_p != 0;
}


/* ------------------------------------------------------------------------
 * The two sides
 */

struct qp_deleter {
    void operator()(uct_rc_mlx5_tool_qp_t *qp) const
    {
        uct_rc_mlx5_tool_qp_destroy(qp);
    }
};

using qp_ptr = std::unique_ptr<uct_rc_mlx5_tool_qp_t, qp_deleter>;

struct side {
    std::string                   dev_name;   /* "mlx5_0:1" */
    uct_md_h                      md    = nullptr;
    uct_iface_h                   iface = nullptr;
    uct_rc_mlx5_tool_iface_info_t info  = {}; /* below the public API */
    std::vector<uint8_t>          dev_addr;
    size_t                        ep_addr_len = 0;

    /* endpoint mode */
    std::vector<uct_ep_h>         eps;
    std::vector<uint8_t>          ep_addrs;   /* ep_addr_len bytes each */

    /* multi-channel mode: all phases' QPs, destroyed at the end */
    std::vector<qp_ptr>           qps;

    ~side()
    {
        for (uct_ep_h ep : eps) {
            uct_ep_destroy(ep);
        }
        qps.clear();
        if (iface != nullptr) {
            uct_iface_close(iface);
        }
        if (md != nullptr) {
            uct_md_close(md);
        }
    }

    bool roce() const { return info.roce; }
};

ucs_status_t open_side(uct_component_h component, uct_worker_h worker,
                       const std::string &dev_name, unsigned queue_len,
                       side *s, const char *ah_cache = nullptr)
{
    std::string        md_name;
    uint8_t            port;
    uct_md_config_t    *md_config;
    uct_iface_config_t *config;
    uct_iface_params_t params = {};
    uct_iface_attr_t   attr;
    ucs_status_t       status;

    if (!split_port(dev_name, &md_name, &port)) {
        fprintf(stderr, "invalid device '%s': expected dev:port\n",
                dev_name.c_str());
        return UCS_ERR_INVALID_PARAM;
    }
    s->dev_name = dev_name;

    status = uct_md_config_read(component, nullptr, nullptr, &md_config);
    if (status != UCS_OK) {
        return status;
    }
    if ((ah_cache != nullptr) &&
        (uct_config_modify(md_config, "AH_CACHE", ah_cache) != UCS_OK)) {
        fprintf(stderr, "cannot set AH_CACHE=%s\n", ah_cache);
        uct_config_release(md_config);
        return UCS_ERR_INVALID_PARAM;
    }
    status = uct_md_open(component, md_name.c_str(), md_config, &s->md);
    uct_config_release(md_config);
    if (status != UCS_OK) {
        fprintf(stderr, "cannot open %s: %s\n", md_name.c_str(),
                ucs_status_string(status));
        return status;
    }

    status = uct_md_iface_config_read(s->md, "rc_mlx5", nullptr, nullptr,
                                      &config);
    if (status != UCS_OK) {
        return status;
    }
    std::string qlen = std::to_string(queue_len);
    if ((uct_config_modify(config, "RC_TX_QUEUE_LEN", qlen.c_str()) != UCS_OK) ||
        (uct_config_modify(config, "RC_RX_QUEUE_LEN", qlen.c_str()) != UCS_OK)) {
        fprintf(stderr, "cannot set the rc_mlx5 queue lengths\n");
        uct_config_release(config);
        return UCS_ERR_INVALID_PARAM;
    }

    params.field_mask           = UCT_IFACE_PARAM_FIELD_OPEN_MODE |
                                  UCT_IFACE_PARAM_FIELD_DEVICE;
    params.open_mode            = UCT_IFACE_OPEN_MODE_DEVICE;
    params.mode.device.tl_name  = "rc_mlx5";
    params.mode.device.dev_name = dev_name.c_str();
    status = uct_iface_open(s->md, worker, &params, config, &s->iface);
    uct_config_release(config);
    if (status != UCS_OK) {
        fprintf(stderr, "cannot open rc_mlx5 on %s: %s\n", dev_name.c_str(),
                ucs_status_string(status));
        return status;
    }
    uct_rc_mlx5_tool_iface_info(s->iface, &s->info);

    status = uct_iface_query(s->iface, &attr);
    if (status != UCS_OK) {
        return status;
    }
    s->dev_addr.resize(attr.device_addr_len);
    s->ep_addr_len = attr.ep_addr_len;
    return uct_iface_get_device_address(
            s->iface, reinterpret_cast<uct_device_addr_t*>(s->dev_addr.data()));
}

const uct_device_addr_t *dev_addr_of(const side &s)
{
    return reinterpret_cast<const uct_device_addr_t*>(s.dev_addr.data());
}

/* The rc_mlx5 ports of the ib component's devices, in order */
ucs_status_t list_ports(uct_component_h component,
                        const std::vector<uct_md_resource_desc_t> &mds,
                        std::vector<std::string> *ports_p)
{
    for (const uct_md_resource_desc_t &md_desc : mds) {
        uct_md_config_t        *config;
        uct_md_h               md;
        uct_tl_resource_desc_t *resources;
        unsigned               count;
        ucs_status_t           status;

        status = uct_md_config_read(component, nullptr, nullptr, &config);
        if (status != UCS_OK) {
            return status;
        }
        status = uct_md_open(component, md_desc.md_name, config, &md);
        uct_config_release(config);
        if (status != UCS_OK) {
            continue;
        }
        if (uct_md_query_tl_resources(md, &resources, &count) == UCS_OK) {
            for (unsigned i = 0; i < count; ++i) {
                if (!strcmp(resources[i].tl_name, "rc_mlx5")) {
                    ports_p->push_back(resources[i].dev_name);
                }
            }
            uct_release_tl_resource_list(resources);
        }
        uct_md_close(md);
    }
    return UCS_OK;
}


/* ------------------------------------------------------------------------
 * Phases
 */

/*
 * Each phase first connects this many endpoint pairs, not measured: the
 * first connects pay for cold caches and the dynamic linker's lazy binding
 * of the functions they call, which is not the cost of a connect.
 */
constexpr unsigned warmup_eps = 16;

enum class resolution {
    transient, /* the library: a transient AH per connect */
    validated, /* the library's AV cache, dropped by neighbour events */
    cached     /* the baseline: AHs kept per destination, looked up */
};

/* The emulator's counters, as far as the report compares them */
struct emu_snapshot {
    uint64_t ah_created   = 0;
    uint64_t ah_destroyed = 0;
    uint64_t cmds         = 0;
};

emu_snapshot emu_snap()
{
    uct_ib_emu_counters_t c = uct_ib_emu_counters();
    emu_snapshot          s;

    s.ah_created   = c.ah_created;
    s.ah_destroyed = c.ah_destroyed;
    for (const auto &cmd : c.cmds) {
        s.cmds += cmd.second;
    }
    return s;
}

struct mac_result {
    bool             enabled      = false;
    unsigned         changed_at   = 0;   /* endpoint pair index */
    uct_ib_emu_mac_t old_mac      = {};
    uct_ib_emu_mac_t new_mac      = {};
    unsigned         before       = 0;   /* QPs to the peer before the change */
    unsigned         before_old   = 0;   /*   of them with the old MAC */
    unsigned         after        = 0;   /* QPs to the peer after the change */
    unsigned         after_new    = 0;   /*   of them with the new MAC */
    unsigned         after_old    = 0;   /*   of them with the old MAC */
};

struct phase_result {
    std::string  name;
    resolution   how          = resolution::transient;
    unsigned     ep_connects  = 0;
    unsigned     qp_connects  = 0;
    double       seconds      = 0;
    glue_counts  glue;
    uint64_t     ah_alive     = 0;  /* after the phase (glue count) */
    bool         emulated     = false;
    emu_snapshot emu;
    bool         have_instr   = false;
    uint64_t     instructions = 0;  /* the library's objects */
    uint64_t     probe_instr  = 0;  /* this program's, left out */
    uint64_t     emu_instr    = 0;  /* the emulator's, must be 0 */
    uint64_t     cache_instr  = 0;  /* the baseline's AH cache, counted */
    std::map<std::string, uint64_t> instr_by_object; /* library objects */
    mac_result   mac;
};

class phase_runner {
public:
    phase_runner(const options &opts, side &a, side &b) :
        m_opts(opts), m_a(a), m_b(b)
    {
    }

    ucs_status_t run_endpoints(phase_result *res);
    ucs_status_t run_channels(resolution how, phase_result *res);

private:
    void begin(phase_result *res);
    ucs_status_t end(phase_result *res, const std::vector<uint32_t> &a_qpns);
    ucs_status_t change_peer_mac(phase_result *res);

    const options &m_opts;
    side          &m_a;
    side          &m_b;
    glue_counts   m_glue_before;
    emu_snapshot  m_emu_before;
    unsigned      m_phase_index = 0;
    std::chrono::steady_clock::time_point m_start;
};

void phase_runner::begin(phase_result *res)
{
    res->emulated = bench::glue_inner()->emulated;
    if (res->emulated) {
        m_emu_before = emu_snap();
    }
    m_glue_before = bench::glue_counted();
    bench::instr::phase_begin();
    m_start = std::chrono::steady_clock::now();
}

/*
 * Close the phase: time, counts, instructions, and the MAC check over
 * @a a_qpns, the QPs of side a (which connect to the peer whose MAC moves)
 * in connect order.
 */
ucs_status_t phase_runner::end(phase_result *res,
                               const std::vector<uint32_t> &a_qpns)
{
    auto       stop  = std::chrono::steady_clock::now();
    const auto &glue = bench::glue_counted();

    res->seconds = std::chrono::duration<double>(stop - m_start).count();
    if (bench::instr::enabled()) {
        bench::instr::dump_costs costs;
        std::string              why_not;

        res->have_instr = bench::instr::phase_end(res->name, m_opts.dump_dir,
                                                  &costs, &why_not);
        if (!res->have_instr) {
            fprintf(stderr, "no instruction count: %s\n", why_not.c_str());
        }
        for (const auto &object : costs.by_object) {
            if (bench::instr::is_probe_object(object.first)) {
                res->probe_instr += object.second;
            } else if (object.first.find("libucx_mlx5_emu") !=
                       std::string::npos) {
                res->emu_instr += object.second;
            } else if (object.second > 0) {
                res->instructions += object.second;
                res->instr_by_object[object.first] += object.second;
            }
        }

        /* The baseline's cache is this program's code, but it stands for
         * the old library's lookup: it is part of the cached connect */
        for (const auto &fn : costs.by_function) {
            if (bench::baseline_ah_cache::is_own_function(fn.first)) {
                res->cache_instr += fn.second;
            }
        }
        res->probe_instr  -= res->cache_instr;
        res->instructions += res->cache_instr;
    }
    res->glue     = glue - m_glue_before;
    res->ah_alive = glue.ah_created - glue.ah_destroyed;
    if (res->emulated) {
        emu_snapshot now = emu_snap();
        res->emu.ah_created   = now.ah_created - m_emu_before.ah_created;
        res->emu.ah_destroyed = now.ah_destroyed - m_emu_before.ah_destroyed;
        res->emu.cmds         = now.cmds - m_emu_before.cmds;
    }

    if (!res->mac.enabled) {
        return UCS_OK;
    }

    const unsigned per_pair = std::max(m_opts.channels, 1u);
    for (size_t i = 0; i < a_qpns.size(); ++i) {
        uct_ib_emu_qp_info_t info;
        bool                 after = (i / per_pair) >= res->mac.changed_at;
        ucs_status_t         status;

        status = uct_ib_emu_qp_info(a_qpns[i], &info);
        if (status != UCS_OK) {
            fprintf(stderr, "no emulated qp 0x%x\n", a_qpns[i]);
            return status;
        }
        if (after) {
            ++res->mac.after;
            res->mac.after_new += (info.primary.rmac == res->mac.new_mac);
            res->mac.after_old += (info.primary.rmac == res->mac.old_mac);
        } else {
            if (i == 0) {
                res->mac.old_mac = info.primary.rmac;
            }
            ++res->mac.before;
            res->mac.before_old += (info.primary.rmac == res->mac.old_mac);
        }
    }
    return UCS_OK;
}

/* Move the peer port to a MAC it never had (a bond fail-over, a VF moved) */
ucs_status_t phase_runner::change_peer_mac(phase_result *res)
{
    std::string  dev;
    uint8_t      port;
    ucs_status_t status;

    static unsigned changes = 0; /* phases of several runners */

    res->mac.new_mac = {0x02, 0xbe, 0x9c, 0x00, 0x00, uint8_t(0x10 + changes++)};
    split_port(m_b.dev_name, &dev, &port);
    status = uct_ib_emu_port_set_mac(dev, port, res->mac.new_mac, true);
    if (status != UCS_OK) {
        fprintf(stderr, "uct_ib_emu_port_set_mac(%s) failed: %s\n",
                m_b.dev_name.c_str(), ucs_status_string(status));
    }
    return status;
}

ucs_status_t phase_runner::run_endpoints(phase_result *res)
{
    const unsigned        n     = m_opts.num_eps;
    const unsigned        total = n + warmup_eps;
    std::vector<uint32_t> a_qpns;
    uct_ep_params_t       params = {};
    ucs_status_t          status;

    res->name        = "rc_mlx5 endpoints (public API, transient AH)";
    res->ep_connects = 2 * n;
    res->qp_connects = 2 * n;
    res->mac.enabled = m_opts.mac_scenario;
    res->mac.changed_at = n / 2;

    for (side *s : {&m_a, &m_b}) {
        s->eps.resize(total, nullptr);
        s->ep_addrs.resize(total * s->ep_addr_len);
        params.field_mask = UCT_EP_PARAM_FIELD_IFACE;
        params.iface      = s->iface;
        for (unsigned i = 0; i < total; ++i) {
            status = uct_ep_create(&params, &s->eps[i]);
            if (status != UCS_OK) {
                s->eps.resize(i);
                fprintf(stderr, "uct_ep_create(%s) failed: %s\n",
                        s->dev_name.c_str(), ucs_status_string(status));
                return status;
            }
            status = uct_ep_get_address(s->eps[i], reinterpret_cast<uct_ep_addr_t*>(
                                        &s->ep_addrs[i * s->ep_addr_len]));
            if (status != UCS_OK) {
                return status;
            }
        }
    }

    for (unsigned i = warmup_eps; i < total; ++i) {
        a_qpns.push_back(uct_rc_mlx5_tool_ep_addr_qpn(
                reinterpret_cast<const uct_ep_addr_t*>(
                        &m_a.ep_addrs[i * m_a.ep_addr_len])));
    }

    /* Endpoint pair i, both ways */
    auto connect_pair = [&](unsigned i) {
        for (int dir = 0; dir < 2; ++dir) {
            side         &from = dir ? m_b : m_a;
            side         &to   = dir ? m_a : m_b;
            ucs_status_t ret;

            bench::instr::region_enter();
            ret = uct_ep_connect_to_ep(from.eps[i], dev_addr_of(to),
                                       reinterpret_cast<const uct_ep_addr_t*>(
                                       &to.ep_addrs[i * to.ep_addr_len]));
            bench::instr::region_leave();
            if (ret != UCS_OK) {
                fprintf(stderr, "uct_ep_connect_to_ep(%s -> %s) failed: %s\n",
                        from.dev_name.c_str(), to.dev_name.c_str(),
                        ucs_status_string(ret));
                return ret;
            }
        }
        return UCS_OK;
    };

    for (unsigned i = 0; i < warmup_eps; ++i) {
        status = connect_pair(i);
        if (status != UCS_OK) {
            return status;
        }
    }

    begin(res);
    for (unsigned i = 0; i < n; ++i) {
        if (res->mac.enabled && (i == res->mac.changed_at)) {
            status = change_peer_mac(res);
            if (status != UCS_OK) {
                return status;
            }
        }
        status = connect_pair(warmup_eps + i);
        if (status != UCS_OK) {
            return status;
        }
    }
    status = end(res, a_qpns);
    ++m_phase_index;
    return status;
}

ucs_status_t phase_runner::run_channels(resolution how, phase_result *res)
{
    const unsigned        n     = m_opts.num_eps;
    const unsigned        total = n + warmup_eps;
    const unsigned        k     = m_opts.channels;
    std::vector<uint32_t> a_qpns;
    struct ibv_ah_attr    attr[2];
    struct ibv_ah_attr    cache_key[2];
    std::unique_ptr<bench::baseline_ah_cache> cache[2];
    ucs_status_t          status = UCS_OK;

    res->how  = how;
    res->name = "multi-channel endpoints, " + std::to_string(k) + " QP(s) each " +
                ((how == resolution::transient) ? "(connect helper, transient AH)" :
                 (how == resolution::validated) ?
                 "(connect helper, validated AV cache)" :
                 "(baseline: AH cached per destination)");
    res->ep_connects    = 2 * n;
    res->qp_connects    = 2 * n * k;
    res->mac.enabled    = m_opts.mac_scenario;
    res->mac.changed_at = n / 2;

    /* total endpoints of k QPs per side, all in INIT; peers[side][ep * k + j] */
    std::vector<uct_rc_mlx5_qp_peer_t> peers[2];
    size_t first[2];
    for (int dir = 0; dir < 2; ++dir) {
        side &s = dir ? m_b : m_a;

        first[dir] = s.qps.size();
        for (unsigned i = 0; i < total * k; ++i) {
            uct_rc_mlx5_tool_qp_t *qp;

            status = uct_rc_mlx5_tool_qp_create(s.iface, m_opts.queue_len,
                                                m_opts.queue_len, &qp);
            if (status != UCS_OK) {
                fprintf(stderr, "cannot create QP %u of %s: %s\n", i,
                        s.dev_name.c_str(), ucs_status_string(status));
                return status;
            }
            s.qps.emplace_back(qp);
        }
    }
    for (int dir = 0; dir < 2; ++dir) {
        side &from = dir ? m_b : m_a;
        side &to   = dir ? m_a : m_b;

        for (unsigned i = 0; i < total * k; ++i) {
            peers[dir].push_back({from.qps[first[dir] + i].get(),
                                  uct_rc_mlx5_tool_qp_num(
                                          to.qps[first[1 - dir] + i].get())});
        }
        uct_rc_mlx5_tool_ah_attr(from.iface, dev_addr_of(to), 0, &attr[dir]);
    }
    for (unsigned i = warmup_eps * k; i < total * k; ++i) {
        a_qpns.push_back(uct_rc_mlx5_tool_qp_num(peers[0][i].qp));
    }

    if (how == resolution::cached) {
        for (int dir = 0; dir < 2; ++dir) {
            const side                          &from = dir ? m_b : m_a;
            const uct_rc_mlx5_tool_iface_info_t &info = from.info;

            /* the key the connect helper would build at every connect;
             * built once here, which only favours the baseline */
            cache_key[dir]                = attr[dir];
            cache_key[dir].is_global      = 1;
            cache_key[dir].port_num       = info.port_num;
            cache_key[dir].grh.sgid_index = info.gid_index;
            cache[dir].reset(new bench::baseline_ah_cache(info.pd,
                                                          from.dev_name));
        }
    }

    /* Endpoint pair i, both ways, one helper call per endpoint */
    auto connect_pair = [&](unsigned i) {
        for (int dir = 0; dir < 2; ++dir) {
            uct_iface_h                      iface    = (dir ? m_b : m_a).iface;
            const uct_rc_mlx5_qp_peer_t *ep_peers = &peers[dir][i * k];
            struct mlx5_wqe_av               av;
            ucs_status_t                     ret;

            bench::instr::region_enter();
            if (how != resolution::cached) {
                ret = uct_rc_mlx5_tool_connect_qps(iface, ep_peers, k,
                                                   &attr[dir]);
            } else if (cache[dir]->get_av(cache_key[dir], &av)) {
                ret = uct_rc_mlx5_tool_connect_qps_av(iface, ep_peers, k, &av,
                                                      attr[dir].sl);
            } else {
                ret = UCS_ERR_IO_ERROR;
            }
            bench::instr::region_leave();
            if (ret != UCS_OK) {
                fprintf(stderr, "connect of endpoint %u (%s) failed: %s\n", i,
                        (dir ? m_b : m_a).dev_name.c_str(),
                        ucs_status_string(ret));
                return ret;
            }
        }
        return UCS_OK;
    };

    for (unsigned i = 0; (i < warmup_eps) && (status == UCS_OK); ++i) {
        status = connect_pair(i);
    }

    if (status == UCS_OK) {
        begin(res);
    }
    for (unsigned i = 0; (i < n) && (status == UCS_OK); ++i) {
        if (res->mac.enabled && (i == res->mac.changed_at)) {
            status = change_peer_mac(res);
            if (status != UCS_OK) {
                break;
            }
        }
        status = connect_pair(warmup_eps + i);
    }

    if (status == UCS_OK) {
        status = end(res, a_qpns);
    }
    ++m_phase_index;
    return status;
}


/* ------------------------------------------------------------------------
 * Report
 */

void print_phase(const phase_result &r)
{
    const double eps = r.ep_connects;

    printf("\n%s\n", r.name.c_str());
    printf("  endpoint connects        %u (%u QPs)\n", r.ep_connects,
           r.qp_connects);
    printf("  time                     %.3f ms\n", r.seconds * 1e3);
    printf("  connect rate             %s QP/s, %s endpoints/s\n",
           grouped(uint64_t(r.qp_connects / r.seconds)).c_str(),
           grouped(uint64_t(r.ep_connects / r.seconds)).c_str());
    printf("  AH creates per endpoint  %.2f (%" PRIu64 " created)\n",
           r.glue.ah_created / eps, r.glue.ah_created);
    printf("  AH destroys per endpoint %.2f (%" PRIu64 " destroyed)\n",
           r.glue.ah_destroyed / eps, r.glue.ah_destroyed);

    std::string by_opcode;
    for (unsigned op = 0; op < glue_counts::max_opcode; ++op) {
        if (r.glue.by_opcode[op] == 0) {
            continue;
        }
        const char *name = bench::devx_opcode_name(op);
        char        buf[64];

        if (name != nullptr) {
            snprintf(buf, sizeof(buf), "%s %" PRIu64, name,
                     r.glue.by_opcode[op]);
        } else {
            snprintf(buf, sizeof(buf), "opcode 0x%x %" PRIu64, op,
                     r.glue.by_opcode[op]);
        }
        by_opcode += (by_opcode.empty() ? "" : ", ") + std::string(buf);
    }
    if (r.glue.obj_destroyed > 0) {
        by_opcode += (by_opcode.empty() ? "" : ", ") + std::string("destroy ") +
                     std::to_string(r.glue.obj_destroyed);
    }
    printf("  DevX commands per QP     %.2f (%s)\n",
           double(r.glue.devx_cmds) / r.qp_connects,
           by_opcode.empty() ? "none" : by_opcode.c_str());
    printf("  AHs alive after it       %" PRIu64 "%s\n", r.ah_alive,
           (r.how == resolution::cached) ? " (the baseline's cache)" : "");

    if (r.emulated) {
        bool agree = (r.emu.ah_created == r.glue.ah_created) &&
                     (r.emu.ah_destroyed == r.glue.ah_destroyed) &&
                     (r.emu.cmds == r.glue.devx_cmds);
        printf("  emulator counters        %s (%" PRIu64 " AHs created, %" PRIu64
               " destroyed, %" PRIu64 " commands)\n",
               agree ? "agree" : "DISAGREE", r.emu.ah_created,
               r.emu.ah_destroyed, r.emu.cmds);
    }

    if (r.have_instr) {
        std::string by_object;

        for (const auto &object : r.instr_by_object) {
            size_t slash = object.first.rfind('/');
            by_object += (by_object.empty() ? "" : ", ") +
                         object.first.substr(slash + 1) + " " +
                         grouped(object.second / r.ep_connects);
        }
        printf("  instructions             %s per endpoint, %s per QP "
               "(callgrind, the library's objects)\n",
               grouped(r.instructions / r.ep_connects).c_str(),
               grouped(r.instructions / r.qp_connects).c_str());
        if (r.cache_instr > 0) {
            by_object += ", the baseline's AH cache " +
                         grouped(r.cache_instr / r.ep_connects);
        }
        printf("    by object, per endpoint %s\n", by_object.c_str());
        printf("    left out, per endpoint  this program %s, emulator %s\n",
               grouped(r.probe_instr / r.ep_connects).c_str(),
               grouped(r.emu_instr / r.ep_connects).c_str());
    }

    if (r.mac.enabled) {
        printf("  peer MAC change          after %u of %u endpoint pairs: "
               "%s -> %s\n", r.mac.changed_at, r.ep_connects / 2,
               mac_str(r.mac.old_mac).c_str(), mac_str(r.mac.new_mac).c_str());
        printf("  QPs before the change    %u, %u with the old MAC\n",
               r.mac.before, r.mac.before_old);
        printf("  QPs after the change     %u, %u with the new MAC%s\n",
               r.mac.after, r.mac.after_new,
               (r.mac.after_new == r.mac.after) ? " (every one)" : "");
        if (r.mac.after_old > 0) {
            printf("                           %u still carry the stale MAC %s\n",
                   r.mac.after_old, mac_str(r.mac.old_mac).c_str());
        }
    }
}

bool mac_check_failed(const phase_result &r)
{
    return r.mac.enabled && (r.how != resolution::cached) &&
           ((r.mac.after_new != r.mac.after) ||
            (r.mac.before_old != r.mac.before));
}

void print_comparison(const phase_result &transient, const phase_result &cached)
{
    printf("\ntransient vs cached AH, per endpoint connect\n");
    printf("  connect time             %.2f us vs %.2f us (x%.2f)\n",
           transient.seconds * 1e6 / transient.ep_connects,
           cached.seconds * 1e6 / cached.ep_connects,
           transient.seconds / cached.seconds);
    if (transient.have_instr && cached.have_instr && cached.instructions) {
        uint64_t cached_lib = cached.instructions - cached.cache_instr;

        printf("  instructions             %s vs %s (ratio %.3f)\n",
               grouped(transient.instructions / transient.ep_connects).c_str(),
               grouped(cached.instructions / cached.ep_connects).c_str(),
               double(transient.instructions) / double(cached.instructions));
        printf("    with a free AH lookup  %s vs %s (ratio %.3f): the "
               "cache's own code left out\n",
               grouped(transient.instructions / transient.ep_connects).c_str(),
               grouped(cached_lib / cached.ep_connects).c_str(),
               double(transient.instructions) / double(cached_lib));
    } else {
        printf("  instructions             run under callgrind to compare "
               "(ucx_connect_bench -h)\n");
    }
}

/* The three ways to a destination's AV, side by side */
void print_three_way(const phase_result &transient,
                     const phase_result &validated, const phase_result &cached)
{
    const phase_result *all[3] = {&transient, &validated, &cached};

    printf("\ntransient AH vs validated AV cache vs cached AH (baseline), "
           "per endpoint connect\n");
    printf("  AH creates               %.2f vs %.2f vs %.2f\n",
           double(transient.glue.ah_created) / transient.ep_connects,
           double(validated.glue.ah_created) / validated.ep_connects,
           double(cached.glue.ah_created) / cached.ep_connects);
    if (transient.mac.enabled) {
        printf("  QPs with the stale MAC   %u vs %u vs %u (after the peer's "
               "MAC moved)\n", transient.mac.after_old,
               validated.mac.after_old, cached.mac.after_old);
    }
    for (const phase_result *r : all) {
        if (!r->have_instr || (r->instructions == 0)) {
            printf("  instructions             run under callgrind to compare "
                   "(ucx_connect_bench -h)\n");
            return;
        }
    }
    printf("  instructions             %s vs %s vs %s (validated/transient "
           "%.3f, validated/cached %.3f)\n",
           grouped(transient.instructions / transient.ep_connects).c_str(),
           grouped(validated.instructions / validated.ep_connects).c_str(),
           grouped(cached.instructions / cached.ep_connects).c_str(),
           double(validated.instructions) / double(transient.instructions),
           double(validated.instructions) / double(cached.instructions));
}


/* ------------------------------------------------------------------------
 * Main
 */

int run(const options &opts)
{
    uct_component_h *components;
    unsigned        num_components;
    uct_component_h ib = nullptr;
    uct_worker_h    worker;
    ucs_status_t    status;

    status = uct_query_components(&components, &num_components);
    if (status != UCS_OK) {
        fprintf(stderr, "uct_query_components() failed: %s\n",
                ucs_status_string(status));
        return EXIT_FAILURE;
    }
    for (unsigned i = 0; i < num_components; ++i) {
        uct_component_attr_t attr = {};
        attr.field_mask = UCT_COMPONENT_ATTR_FIELD_NAME;
        if ((uct_component_query(components[i], &attr) == UCS_OK) &&
            !strcmp(attr.name, "ib")) {
            ib = components[i];
        }
    }
    if (ib == nullptr) {
        fprintf(stderr, "no ib component\n");
        uct_release_component_list(components);
        return EXIT_FAILURE;
    }

    /* Listing the memory domains applies UCX_IB_GLUE; then count, before
     * any device is opened */
    uct_component_attr_t attr = {};
    attr.field_mask = UCT_COMPONENT_ATTR_FIELD_MD_RESOURCE_COUNT;
    status = uct_component_query(ib, &attr);
    std::vector<uct_md_resource_desc_t> mds(attr.md_resource_count);
    if ((status == UCS_OK) && !mds.empty()) {
        attr.field_mask   = UCT_COMPONENT_ATTR_FIELD_MD_RESOURCES;
        attr.md_resources = mds.data();
        status            = uct_component_query(ib, &attr);
    }
    if (status == UCS_OK) {
        status = bench::glue_install_counting();
    }
    if (status != UCS_OK) {
        fprintf(stderr, "cannot set up the ib component: %s\n",
                ucs_status_string(status));
        uct_release_component_list(components);
        return EXIT_FAILURE;
    }

    const uct_ib_glue_ops_t *inner = bench::glue_inner();
    std::string error;
    if (opts.emulated && !inner->emulated) {
        error = "-e: the emulated device is not in use";
    } else if (opts.mac_scenario && !inner->emulated) {
        error = "-m needs the emulated device (-e): it moves a port's MAC";
    } else if (inner->emulated &&
               (inner->create_ah != uct_ib_emu_glue_ops.create_ah)) {
        /* compare a slot: the table itself may be a copy in this program */
        error = "the emulated device in use is not the one this program "
                "links (two copies of libucx_mlx5_emu loaded?)";
    }

    std::vector<std::string> ports;
    if (error.empty()) {
        list_ports(ib, mds, &ports);
        if (ports.empty()) {
            error = std::string("no rc_mlx5 ports found (") + inner->name +
                    "); -e uses the emulated device";
        }
    }
    if (!error.empty()) {
        fprintf(stderr, "ucx_connect_bench: %s\n", error.c_str());
        uct_release_component_list(components);
        return EXIT_FAILURE;
    }

    /* The peer: as given, else the first port of another device that the
     * local port reaches, else the local port itself */
    std::string              local = opts.local_dev.empty() ? ports[0] :
                                     opts.local_dev;
    std::vector<std::string> candidates;
    if (!opts.peer_dev.empty()) {
        candidates.push_back(opts.peer_dev);
    } else {
        std::string local_md, md;
        uint8_t     port;

        split_port(local, &local_md, &port);
        for (const std::string &p : ports) {
            if (split_port(p, &md, &port) && (md != local_md)) {
                candidates.push_back(p);
            }
        }
        candidates.push_back(local);
    }

    status = uct_worker_create(nullptr, UCS_THREAD_MODE_SINGLE, &worker);
    if (status != UCS_OK) {
        uct_release_component_list(components);
        return EXIT_FAILURE;
    }

    int ret = EXIT_FAILURE;
    {
        side                      a;
        std::unique_ptr<side>     peer_side;
        std::vector<phase_result> results;

        status = open_side(ib, worker, local, opts.queue_len, &a);
        for (size_t i = 0; (status == UCS_OK) && (i < candidates.size()) &&
                           !peer_side; ++i) {
            auto s = std::make_unique<side>();

            if ((open_side(ib, worker, candidates[i], opts.queue_len,
                           s.get()) == UCS_OK) &&
                uct_iface_is_reachable(a.iface, dev_addr_of(*s), nullptr)) {
                peer_side = std::move(s);
            }
        }
        if ((status == UCS_OK) && !peer_side) {
            if (opts.peer_dev.empty()) {
                fprintf(stderr, "%s reaches no rc_mlx5 port\n", local.c_str());
            } else {
                fprintf(stderr, "%s cannot reach %s\n", local.c_str(),
                        opts.peer_dev.c_str());
            }
            status = UCS_ERR_UNREACHABLE;
        }

        side              dummy;
        side              &b   = peer_side ? *peer_side : dummy;
        const std::string peer = b.dev_name;
        if ((status == UCS_OK) && opts.mac_scenario && !b.roce()) {
            fprintf(stderr, "-m needs Ethernet (RoCE) ports: %s is "
                    "InfiniBand\n", peer.c_str());
            status = UCS_ERR_INVALID_PARAM;
        }

        if (status == UCS_OK) {
            printf("ucx_connect_bench: %s <-> %s%s, %s", local.c_str(),
                   peer.c_str(), inner->emulated ? " (emulated)" : "",
                   a.roce() ? "Ethernet" : "InfiniBand");
            if (a.roce()) {
                printf(", %s, GID index %u",
                       a.info.roce_version, a.info.gid_index);
            }
            printf("\n%u endpoints per side, %s\n", opts.num_eps,
                   (opts.channels == 0) ? "rc_mlx5 through the public API" :
                   ("multi-channel, " + std::to_string(opts.channels) +
                    " QP(s) per endpoint").c_str());
            std::string why_not;
            if (bench::instr::start(opts.dump_dir, &why_not)) {
                printf("instructions per connect: counted by callgrind\n");
            } else if (bench::instr::under_valgrind()) {
                printf("instructions per connect: not counted: %s\n",
                       why_not.c_str());
            }
        }

        phase_runner runner(opts, a, b);
        if (status == UCS_OK) {
            results.emplace_back();
            status = (opts.channels == 0) ?
                     runner.run_endpoints(&results.back()) :
                     runner.run_channels(resolution::transient,
                                         &results.back());
        }
        /* the validated cache on interfaces of its own, closed with it */
        side va, vb;
        if ((status == UCS_OK) && opts.baseline && a.roce()) {
            status = open_side(ib, worker, a.dev_name, opts.queue_len, &va,
                               "validated");
            if (status == UCS_OK) {
                status = open_side(ib, worker, b.dev_name, opts.queue_len, &vb,
                                   "validated");
            }
            if (status == UCS_OK) {
                phase_runner validated_runner(opts, va, vb);

                results.emplace_back();
                status = validated_runner.run_channels(resolution::validated,
                                                       &results.back());
            }
        }
        if ((status == UCS_OK) && opts.baseline && a.roce()) {
            results.emplace_back();
            status = runner.run_channels(resolution::cached, &results.back());
        }

        if (status == UCS_OK) {
            bool failed = false;

            for (const phase_result &r : results) {
                print_phase(r);
                failed = failed || mac_check_failed(r);
            }
            if (results.size() == 3) {
                print_comparison(results[0], results[2]);
                print_three_way(results[0], results[1], results[2]);
            } else if (opts.baseline) {
                printf("\nno baseline: InfiniBand connects use no AH\n");
            }

            const glue_counts &total = bench::glue_counted();
            printf("\nAHs alive at the end     %" PRIu64,
                   total.ah_created - total.ah_destroyed);
            if (inner->emulated) {
                printf(" (emulator: %" PRIu64 ")",
                       uct_ib_emu_counters().ah_alive);
            }
            printf("\n");
            if (failed) {
                printf("FAILED: a connect after the MAC change does not "
                       "carry the new MAC\n");
            }
            ret = failed ? EXIT_FAILURE : EXIT_SUCCESS;
        }
    }

    uct_worker_destroy(worker);
    uct_release_component_list(components);
    return ret;
}

} // namespace

int main(int argc, char **argv)
{
    options    opts;
    const char *glue;

    if (!parse_options(argc, argv, &opts)) {
        return EXIT_FAILURE;
    }

    if (opts.emulated) {
        glue = getenv(UCT_IB_GLUE_ENV);
        if ((glue != nullptr) && (glue[0] != '\0') &&
            strcmp(glue, UCT_IB_GLUE_ENV_EMULATED)) {
            fprintf(stderr, "-e conflicts with %s=%s\n", UCT_IB_GLUE_ENV, glue);
            return EXIT_FAILURE;
        }
        setenv(UCT_IB_GLUE_ENV, UCT_IB_GLUE_ENV_EMULATED, 1);
    }

    return run(opts);
}
