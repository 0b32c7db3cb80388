/*
 * ucx_rc_data_bench: what one data path operation of rc_mlx5 or rc_verbs
 * costs the library, and the message rate, on two ports of one process.
 *
 * Under callgrind (--collect-atstart=no), each measured call is one region
 * of the instruction probe (bench_probe.h): only the library's objects
 * count, not this program (the pack callback, the loop) and not the device
 * behind the glue table. On the emulated device the engine runs in step
 * mode between the regions, so nothing of it runs inside one. Without
 * callgrind, the benchmark prints the message rate of 8-byte active
 * messages with the engine on its thread.
 *
 *   valgrind --tool=callgrind --collect-atstart=no ucx_rc_data_bench -e
 */
#include "bench_probe.h"

#include <uct/api/uct.h>
#include <emu/api/emu.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unistd.h>
#include <vector>

namespace {

struct options {
    bool        emulated   = false;
    std::string tl         = "rc_mlx5";
    std::string dev_a      = "mlx5_0:1";
    std::string dev_b      = "mlx5_1:1";
    unsigned    iterations = 2000;
    std::string dump_dir   = ".";
};

struct side {
    uct_md_h    md    = nullptr;
    uct_iface_h iface = nullptr;
    uct_ep_h    ep    = nullptr;
};

uct_component_h          g_ib;
uct_worker_h             g_worker;
side                     g_a, g_b;
std::vector<std::string> g_errors;
unsigned                 g_received;

bool fail(const std::string &what, ucs_status_t status)
{
    fprintf(stderr, "ucx_rc_data_bench: %s: %s\n", what.c_str(),
            ucs_status_string(status));
    return false;
}

ucs_status_t count_am(void*, void*, size_t, unsigned)
{
    ++g_received;
    return UCS_OK;
}

size_t pack_256(void *dest, void*)
{
    memset(dest, 0x5a, 256);
    return 256;
}

bool open_side(const options &opts, const std::string &dev, side *s)
{
    uct_md_config_t    *md_config;
    uct_iface_config_t *config;
    uct_iface_params_t params = {};
    std::string        md_name = dev.substr(0, dev.find(':'));
    ucs_status_t       status;

    status = uct_md_config_read(g_ib, nullptr, nullptr, &md_config);
    if (status != UCS_OK) {
        return fail("md config", status);
    }
    status = uct_md_open(g_ib, md_name.c_str(), md_config, &s->md);
    uct_config_release(md_config);
    if (status != UCS_OK) {
        return fail("uct_md_open(" + md_name + ")", status);
    }

    status = uct_md_iface_config_read(s->md, opts.tl.c_str(), nullptr, nullptr,
                                      &config);
    if (status != UCS_OK) {
        return fail("iface config", status);
    }
    params.field_mask           = UCT_IFACE_PARAM_FIELD_OPEN_MODE |
                                  UCT_IFACE_PARAM_FIELD_DEVICE;
    params.open_mode            = UCT_IFACE_OPEN_MODE_DEVICE;
    params.mode.device.tl_name  = opts.tl.c_str();
    params.mode.device.dev_name = dev.c_str();
    status = uct_iface_open(s->md, g_worker, &params, config, &s->iface);
    uct_config_release(config);
    if (status != UCS_OK) {
        return fail("uct_iface_open(" + opts.tl + "/" + dev + ")", status);
    }

    uct_ep_params_t ep_params = {};
    ep_params.field_mask = UCT_EP_PARAM_FIELD_IFACE;
    ep_params.iface      = s->iface;
    status = uct_ep_create(&ep_params, &s->ep);
    return (status == UCS_OK) || fail("uct_ep_create", status);
}

bool connect_sides()
{
    uct_iface_attr_t  attr;
    std::vector<char> dev_a, dev_b, ep_a, ep_b;
    ucs_status_t      status;

    for (auto *s : {&g_a, &g_b}) {
        status = uct_iface_query(s->iface, &attr);
        if (status != UCS_OK) {
            return fail("uct_iface_query", status);
        }
        auto &dev = (s == &g_a) ? dev_a : dev_b;
        auto &ep  = (s == &g_a) ? ep_a : ep_b;
        dev.resize(attr.device_addr_len);
        ep.resize(attr.ep_addr_len);
        if ((uct_iface_get_device_address(
                     s->iface, reinterpret_cast<uct_device_addr_t*>(dev.data())) !=
             UCS_OK) ||
            (uct_ep_get_address(s->ep, reinterpret_cast<uct_ep_addr_t*>(
                                               ep.data())) != UCS_OK)) {
            return fail("addresses", UCS_ERR_IO_ERROR);
        }
    }

    status = uct_ep_connect_to_ep(g_a.ep,
                                  reinterpret_cast<uct_device_addr_t*>(dev_b.data()),
                                  reinterpret_cast<uct_ep_addr_t*>(ep_b.data()));
    if (status == UCS_OK) {
        status = uct_ep_connect_to_ep(g_b.ep,
                                      reinterpret_cast<uct_device_addr_t*>(dev_a.data()),
                                      reinterpret_cast<uct_ep_addr_t*>(ep_a.data()));
    }
    return (status == UCS_OK) || fail("uct_ep_connect_to_ep", status);
}

/* Let the device and both sides finish what is under way (not measured) */
void settle(bool step_mode)
{
    for (int i = 0; i < 8; ++i) {
        if (step_mode) {
            uct_ib_emu_engine_run();
        }
        while ((uct_iface_progress(g_b.iface) + uct_iface_progress(g_a.iface)) >
               0) {
        }
    }
}

struct phase {
    const char *name;
    uint64_t   target;        /* instructions per operation, at most */
    uint64_t   instructions = 0;
    uint64_t   emulator     = 0;
    bool       counted      = false;
};

/* Run @a iterations of @a setup (not measured) and @a op (measured) */
template <typename Setup, typename Op>
void run_phase(const options &opts, bool step_mode, phase *p, Setup setup,
               Op op)
{
    bench::instr::phase_begin();
    for (unsigned i = 0; i < opts.iterations; ++i) {
        setup();
        bench::instr::region_enter();
        op();
        bench::instr::region_leave();
        settle(step_mode);
    }

    bench::instr::dump_costs costs;
    std::string              why_not;
    if (!bench::instr::enabled() ||
        !bench::instr::phase_end(p->name, opts.dump_dir, &costs, &why_not)) {
        return;
    }
    for (const auto &object : costs.by_object) {
        if (bench::instr::is_probe_object(object.first)) {
            continue;
        } else if (object.first.find("libucx_mlx5_emu") != std::string::npos) {
            p->emulator += object.second;
        } else {
            p->instructions += object.second;
        }
    }
    p->counted = true;
}

double message_rate(unsigned seconds)
{
    const auto start = std::chrono::steady_clock::now();
    uint64_t   sent  = 0;
    unsigned   before = g_received;

    while (std::chrono::steady_clock::now() - start <
           std::chrono::seconds(seconds)) {
        for (int i = 0; i < 64; ++i) {
            if (uct_ep_am_short(g_a.ep, 0, sent, nullptr, 0) == UCS_OK) {
                ++sent;
            }
        }
        uct_iface_progress(g_b.iface);
        uct_iface_progress(g_a.iface);
    }
    const double elapsed = std::chrono::duration<double>(
            std::chrono::steady_clock::now() - start).count();
    return (g_received - before) / elapsed;
}

int usage(const char *prog)
{
    fprintf(stderr,
            "usage: %s [-e] [-t rc_mlx5|rc_verbs] [-d dev:port] [-p dev:port]\n"
            "          [-n iterations] [-C dump_dir]\n"
            "  -e  the emulated device (UCX_IB_GLUE=emulated)\n", prog);
    return 2;
}

} // namespace

int main(int argc, char **argv)
{
    options opts;
    int     c;

    while ((c = getopt(argc, argv, "et:d:p:n:C:h")) != -1) {
        switch (c) {
        case 'e': opts.emulated = true; break;
        case 't': opts.tl = optarg; break;
        case 'd': opts.dev_a = optarg; break;
        case 'p': opts.dev_b = optarg; break;
        case 'n': opts.iterations = strtoul(optarg, nullptr, 0); break;
        case 'C': opts.dump_dir = optarg; break;
        default:  return usage(argv[0]);
        }
    }
    if (opts.emulated) {
        setenv("UCX_IB_GLUE", "emulated", 1);
    }

    uct_component_h *components;
    unsigned        num;
    if (uct_query_components(&components, &num) != UCS_OK) {
        return 1;
    }
    for (unsigned i = 0; i < num; ++i) {
        uct_component_attr_t attr = {};
        /* the md resources too: that selects the glue table (UCX_IB_GLUE),
         * which the counting one must go in front of */
        attr.field_mask = UCT_COMPONENT_ATTR_FIELD_NAME |
                          UCT_COMPONENT_ATTR_FIELD_MD_RESOURCE_COUNT;
        if ((uct_component_query(components[i], &attr) == UCS_OK) &&
            (std::string(attr.name) == "ib")) {
            g_ib = components[i];
        }
    }
    uct_release_component_list(components);
    if (g_ib == nullptr) {
        fprintf(stderr, "ucx_rc_data_bench: no ib component\n");
        return 1;
    }

    /* listing the memory domains applies UCX_IB_GLUE (the emulated device
     * with -e); then count, before any device is opened */
    uct_component_attr_t ib_attr = {};
    ib_attr.field_mask = UCT_COMPONENT_ATTR_FIELD_MD_RESOURCE_COUNT;
    if (uct_component_query(g_ib, &ib_attr) != UCS_OK) {
        return 1;
    }
    std::vector<uct_md_resource_desc_t> mds(ib_attr.md_resource_count);
    ib_attr.field_mask   = UCT_COMPONENT_ATTR_FIELD_MD_RESOURCES;
    ib_attr.md_resources = mds.data();
    if (!mds.empty() && (uct_component_query(g_ib, &ib_attr) != UCS_OK)) {
        return 1;
    }

    if ((bench::glue_install_counting() != UCS_OK) ||
        (uct_worker_create(nullptr, UCS_THREAD_MODE_SINGLE, &g_worker) !=
         UCS_OK)) {
        return 1;
    }

    std::string why_not;
    const bool  counting  = bench::instr::start(opts.dump_dir, &why_not);
    const bool  emulated  = bench::glue_inner()->emulated;
    const bool  step_mode = counting && emulated;
    if (step_mode) {
        uct_ib_emu_engine_set_step_mode(true);
    }

    if (!open_side(opts, opts.dev_a, &g_a) || !open_side(opts, opts.dev_b, &g_b) ||
        !connect_sides() ||
        (uct_iface_set_am_handler(g_b.iface, 0, count_am, nullptr, 0) !=
         UCS_OK)) {
        return 1;
    }

    printf("ucx_rc_data_bench: %s, %s <-> %s%s\n", opts.tl.c_str(),
           opts.dev_a.c_str(), opts.dev_b.c_str(),
           emulated ? " (emulated)" : "");

    int rc = 0;
    if (counting) {
        std::vector<char> target(64);
        uct_mem_h         memh;
        char              packed[16];
        uct_rkey_bundle_t rkey;
        const char        data[8] = {1, 2, 3, 4, 5, 6, 7, 8};
        auto              raddr = reinterpret_cast<uintptr_t>(target.data());

        if ((uct_md_mem_reg(g_b.md, target.data(), target.size(),
                            UCT_MD_MEM_ACCESS_ALL, &memh) != UCS_OK) ||
            (uct_md_mkey_pack(g_b.md, memh, packed) != UCS_OK) ||
            (uct_rkey_unpack(g_ib, packed, &rkey) != UCS_OK)) {
            return 1;
        }

        phase phases[] = {
            {"am_short 8 B", 150},
            {"put_short 8 B", 150},
            {"am_bcopy 256 B", 300},
            {"a send completion polled", 80},
            {"a received AM dispatched, its buffer reposted", 150}
        };
        auto nothing = [] {};
        auto one_am  = [] {
            (void)uct_ep_am_short(g_a.ep, 0, 0, nullptr, 0);
            uct_ib_emu_engine_run();
        };

        run_phase(opts, step_mode, &phases[0], nothing, [] {
            (void)uct_ep_am_short(g_a.ep, 0, 0x1234, nullptr, 0);
        });
        run_phase(opts, step_mode, &phases[1], nothing, [&] {
            (void)uct_ep_put_short(g_a.ep, data, 8, raddr, rkey.rkey);
        });
        run_phase(opts, step_mode, &phases[2], nothing, [] {
            (void)uct_ep_am_bcopy(g_a.ep, 0, pack_256, nullptr, 0);
        });
        run_phase(opts, step_mode, &phases[3], [&] {
            one_am();
            while (uct_iface_progress(g_b.iface) > 0) {
            }
        }, [] { (void)uct_iface_progress(g_a.iface); });
        run_phase(opts, step_mode, &phases[4], one_am,
                  [] { (void)uct_iface_progress(g_b.iface); });

        printf("\n%-48s %12s %8s %10s\n", "library instructions per operation",
               "measured", "target", "emulator");
        for (const auto &p : phases) {
            if (!p.counted) {
                printf("%-48s %12s\n", p.name, "not counted");
                rc = 1;
                continue;
            }
            const double per_op = double(p.instructions) / opts.iterations;
            printf("%-48s %12.1f %8llu %10llu%s\n", p.name, per_op,
                   (unsigned long long)p.target, (unsigned long long)p.emulator,
                   (per_op <= p.target) ? "" : "  (above the target)");
        }
        (void)uct_rkey_release(g_ib, &rkey);
        (void)uct_md_mem_dereg(g_b.md, memh);
    } else {
        if (bench::instr::under_valgrind()) {
            printf("instructions: not counted: %s\n", why_not.c_str());
        }
        printf("message rate, am_short 8 B: %.0f messages/s\n",
               message_rate(2));
    }

    uct_ep_destroy(g_a.ep);
    uct_ep_destroy(g_b.ep);
    uct_iface_close(g_a.iface);
    uct_iface_close(g_b.iface);
    uct_md_close(g_a.md);
    uct_md_close(g_b.md);
    uct_worker_destroy(g_worker);
    return rc;
}
