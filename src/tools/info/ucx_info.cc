/*
 * ucx_info: what this build is, how it is configured, and which devices and
 * transports it finds.
 *
 * -d goes through the public UCT API (components, memory domains, transport
 * resources, interfaces). What that API does not tell about an IB port (link
 * layer, GID table, selected GID, emulated or not) comes from one internal
 * query function of the ib module, looked up in the module the component
 * came from (see uct/api/tools/ib_port_info.h), so this tool links no
 * transport.
 * The counters of an emulated port come the same way from the emulated
 * device library the glue table loaded (emu/api/port_stats.h).
 */
#include <uct/api/uct.h>
#include <uct/api/tools/ib_port_info.h>
#include <emu/api/port_stats.h>
#include <ucs/config/global_opts.h>
#include <ucs/config/parser.h>
#include <ucs/debug/log_def.h>
#include <ucs/sys/lib_info.h>
#include <ucs/sys/module.h>

#include <dlfcn.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>
#include <unistd.h>

namespace {

void usage(FILE *stream)
{
    fprintf(stream,
            "Usage: ucx_info [options]\n"
            "  -v    print version and build configuration\n"
            "  -d    print the devices and ports, their GID tables and the\n"
            "        transports on each (UCX_IB_GLUE=emulated: the emulated\n"
            "        mlx5 device)\n"
            "  -c    print every configuration knob with its value and doc\n"
            "  -h    print this help\n");
}

void print_version()
{
    char dir[4096];

    printf("# Library version: %s\n", PACKAGE_VERSION);
    printf("# Library path: %s\n", ucs_sys_get_lib_path() ?: "unknown");
    if (ucs_module_dir(dir, sizeof(dir)) == UCS_OK) {
        printf("# Module directory: %s\n", dir);
    }
    printf("# Configured with: %s\n", UCX_CONFIGURE_ARGS);
    printf("# Build flags: %s\n", UCX_BUILD_FLAGS);
#ifdef UCS_ENABLE_ASSERT
    printf("# Assertions: enabled\n");
#else
    printf("# Assertions: disabled\n");
#endif
#ifdef UCS_ENABLE_ASAN
    printf("# AddressSanitizer: enabled\n");
#endif
#ifdef UCS_ENABLE_TSAN
    printf("# ThreadSanitizer: enabled\n");
#endif
}


/* ------------------------------------------------------------------------
 * -d: devices and transports
 */

/* The port query of the ib module, if the module is loaded. */
class ib_port_query {
public:
    ib_port_query()
    {
        char        dir[4096];
        std::string path;

        if (ucs_module_dir(dir, sizeof(dir)) == UCS_OK) {
            path     = std::string(dir) + "/libuct_ib.so";
            m_handle = dlopen(path.c_str(), RTLD_LAZY | RTLD_NOLOAD);
            if (m_handle == nullptr) {
                (void)dlerror(); /* not loaded from there: consume the text */
            }
        }

        /* from the module, or from the program if it links the module */
        m_func = reinterpret_cast<uct_ib_md_query_port_info_func_t>(
                dlsym((m_handle != nullptr) ? m_handle : RTLD_DEFAULT,
                      UCT_IB_PORT_INFO_SYMBOL));
        if (m_func == nullptr) {
            (void)dlerror();
        }
    }

    ~ib_port_query()
    {
        if (m_handle != nullptr) {
            dlclose(m_handle);
        }
    }

    ib_port_query(const ib_port_query&)            = delete;
    ib_port_query &operator=(const ib_port_query&) = delete;

    bool query(uct_md_h md, const char *dev_name, uct_ib_port_info_t *info) const
    {
        info->version = UCT_IB_PORT_INFO_VERSION;
        return (m_func != nullptr) && (m_func(md, dev_name, info) == UCS_OK);
    }

private:
    void                             *m_handle = nullptr;
    uct_ib_md_query_port_info_func_t m_func    = nullptr;
};

/* The counters of emulated ports, if the emulated device library is loaded
 * (UCX_IB_GLUE=emulated: the glue loads it when the first device is opened,
 * so it is looked up at the first query) or linked into the program */
class emu_port_stats_query {
public:
    emu_port_stats_query() = default;

    ~emu_port_stats_query()
    {
        if (m_handle != nullptr) {
            dlclose(m_handle);
        }
    }

    emu_port_stats_query(const emu_port_stats_query&)            = delete;
    emu_port_stats_query &operator=(const emu_port_stats_query&) = delete;

    bool query(const char *dev_name, uct_ib_emu_port_stats_t *stats)
    {
        if (!m_looked_up) {
            look_up();
        }

        stats->version = UCT_IB_EMU_PORT_STATS_VERSION;
        return (m_func != nullptr) && (m_func(dev_name, stats) == UCS_OK);
    }

private:
    void look_up()
    {
        m_looked_up = true;
        m_handle = dlopen(UCT_IB_EMU_PORT_STATS_LIBRARY,
                          RTLD_LAZY | RTLD_NOLOAD);
        if (m_handle == nullptr) {
            (void)dlerror(); /* not loaded: consume the text */
        }

        m_func = reinterpret_cast<uct_ib_emu_query_port_stats_func_t>(
                dlsym((m_handle != nullptr) ? m_handle : RTLD_DEFAULT,
                      UCT_IB_EMU_PORT_STATS_SYMBOL));
        if (m_func == nullptr) {
            (void)dlerror();
        }
    }

    bool                               m_looked_up = false;
    void                               *m_handle   = nullptr;
    uct_ib_emu_query_port_stats_func_t m_func      = nullptr;
};

std::string size_str(size_t size)
{
    char buf[32];

    if (size == SIZE_MAX) {
        return "unlimited";
    } else if ((size >= (1ul << 30)) && !(size % (1ul << 30))) {
        snprintf(buf, sizeof(buf), "%zuG", size >> 30);
    } else if ((size >= (1ul << 20)) && !(size % (1ul << 20))) {
        snprintf(buf, sizeof(buf), "%zuM", size >> 20);
    } else if ((size >= (1ul << 10)) && !(size % (1ul << 10))) {
        snprintf(buf, sizeof(buf), "%zuK", size >> 10);
    } else {
        snprintf(buf, sizeof(buf), "%zu", size);
    }
    return buf;
}

void print_port_info(const uct_ib_port_info_t &info)
{
    printf("#           link layer: %s\n", info.link_layer);
    printf("#                state: %s\n", info.state);
    if (!strcmp(info.link_layer, "InfiniBand")) {
        printf("#                  lid: 0x%x\n", info.lid);
    }
    printf("#           active mtu: %u\n", info.active_mtu);
    printf("#                 devx: %s\n", info.devx ? "yes" : "no");
    printf("#                 glue: %s\n", info.glue);

    printf("#            GID table: %u entr%s", info.num_gids,
           (info.num_gids == 1) ? "y" : "ies");
    if (info.gid_selected >= 0) {
        printf(", selected index %d\n", info.gid_selected);
    } else {
        printf(", no GID selected: %s\n", info.gid_select_error);
    }

    int width = 0;
    for (unsigned i = 0; i < info.num_gids; ++i) {
        width = std::max(width, int(strlen(info.gids[i].address)));
    }

    for (unsigned i = 0; i < info.num_gids; ++i) {
        const uct_ib_port_gid_t &gid      = info.gids[i];
        bool                    selected = (info.gid_selected >= 0) &&
                                           (gid.index ==
                                            unsigned(info.gid_selected));

        printf("#                %s %3u  %-*s  %-7s  %-4s%s\n",
               selected ? "*" : " ", gid.index, width, gid.address, gid.type,
               gid.family, selected ? "  (selected)" : "");
    }
}

/* One counter, then its breakdown one entry a line */
void print_stat(const char *name, uint64_t count,
                const uct_ib_emu_port_stat_t *entries = nullptr,
                unsigned num_entries = 0)
{
    printf("#    %17s: %lu\n", name, static_cast<unsigned long>(count));
    for (unsigned i = 0; i < num_entries; ++i) {
        printf("#                       - %lu %s\n",
               static_cast<unsigned long>(entries[i].count), entries[i].name);
    }
}

/* The engine's counters of an emulated port, in this process */
void print_emu_port_stats(emu_port_stats_query &query,
                          const char *dev_name)
{
    uct_ib_emu_port_stats_t stats;

    if (!query.query(dev_name, &stats)) {
        printf("#             counters: < not available >\n");
        return;
    }

    printf("#             counters: emulated engine, this process\n");
    print_stat("packets sent", stats.packets_sent);
    print_stat("packets delivered", stats.packets_delivered);
    print_stat("packets dropped", stats.packets_dropped, stats.drops,
               stats.num_drops);
    print_stat("retries", stats.retries);
    print_stat("RNR NAKs", stats.rnr_naks);
    print_stat("error CQEs", stats.err_cqes, stats.err_cqe,
               stats.num_err_cqes);
    print_stat("CQ overruns", stats.cq_overruns);
}

/* One "op: <= size" line per operation the interface offers, as UCX's
 * ucx_info prints them */
void print_op(uint64_t flags, uint64_t flag, const char *name, size_t max,
              size_t max_iov = 0)
{
    if (!(flags & flag)) {
        return;
    }
    if (max_iov > 0) {
        printf("#     %16s: <= %s, up to %zu iov\n", name, size_str(max).c_str(),
               max_iov);
    } else {
        printf("#     %16s: <= %s\n", name, size_str(max).c_str());
    }
}

void print_atomics(const char *name, uint64_t op_flags, uint64_t fop_flags)
{
    static const char *const ops[] = {"add", "and", "or", "xor", "swap",
                                      "cswap"};
    std::string post, fetch;

    for (unsigned op = 0; op < UCT_ATOMIC_OP_LAST; ++op) {
        if (op_flags & UCS_BIT(op)) {
            post += std::string(post.empty() ? "" : ", ") + ops[op];
        }
        if (fop_flags & UCS_BIT(op)) {
            fetch += std::string(fetch.empty() ? "" : ", ") + ops[op];
        }
    }
    if (!post.empty() || !fetch.empty()) {
        printf("#     %16s: post %s; fetch %s\n", name,
               post.empty() ? "none" : post.c_str(),
               fetch.empty() ? "none" : fetch.c_str());
    }
}

void print_capabilities(const uct_iface_attr_t &attr)
{
    const uint64_t f = attr.cap.flags;

    printf("#      capabilities:\n");
    print_op(f, UCT_IFACE_FLAG_AM_SHORT, "am_short", attr.cap.am.max_short);
    print_op(f, UCT_IFACE_FLAG_AM_BCOPY, "am_bcopy", attr.cap.am.max_bcopy);
    print_op(f, UCT_IFACE_FLAG_AM_ZCOPY, "am_zcopy", attr.cap.am.max_zcopy,
             attr.cap.am.max_iov);
    print_op(f, UCT_IFACE_FLAG_AM_ZCOPY, "am header", attr.cap.am.max_hdr);
    print_op(f, UCT_IFACE_FLAG_PUT_SHORT, "put_short", attr.cap.put.max_short);
    print_op(f, UCT_IFACE_FLAG_PUT_BCOPY, "put_bcopy", attr.cap.put.max_bcopy);
    print_op(f, UCT_IFACE_FLAG_PUT_ZCOPY, "put_zcopy", attr.cap.put.max_zcopy,
             attr.cap.put.max_iov);
    print_op(f, UCT_IFACE_FLAG_GET_SHORT, "get_short", attr.cap.get.max_short);
    print_op(f, UCT_IFACE_FLAG_GET_BCOPY, "get_bcopy", attr.cap.get.max_bcopy);
    print_op(f, UCT_IFACE_FLAG_GET_ZCOPY, "get_zcopy", attr.cap.get.max_zcopy,
             attr.cap.get.max_iov);
    print_atomics("atomic_32bit", attr.cap.atomic32.op_flags,
                  attr.cap.atomic32.fop_flags);
    print_atomics("atomic_64bit", attr.cap.atomic64.op_flags,
                  attr.cap.atomic64.fop_flags);
    if (!(f & (UCT_IFACE_FLAG_AM_SHORT | UCT_IFACE_FLAG_AM_BCOPY |
               UCT_IFACE_FLAG_AM_ZCOPY | UCT_IFACE_FLAG_PUT_SHORT |
               UCT_IFACE_FLAG_PUT_BCOPY | UCT_IFACE_FLAG_PUT_ZCOPY |
               UCT_IFACE_FLAG_GET_BCOPY | UCT_IFACE_FLAG_GET_ZCOPY))) {
        printf("#                      no data transfer operations\n");
    }
    if (f & UCT_IFACE_FLAG_PENDING) {
        printf("#              pending: yes\n");
    }
    printf("#            callbacks: %s\n",
           (f & UCT_IFACE_FLAG_CB_SYNC) ? "sync" :
           (f & UCT_IFACE_FLAG_CB_ASYNC) ? "async" : "none");
}

void print_error_handling(const uct_iface_attr_t &attr)
{
    std::string what;

    if (attr.cap.flags & UCT_IFACE_FLAG_ERRHANDLE_PEER_FAILURE) {
        what += ", peer failure";
    }
    if (attr.cap.flags & UCT_IFACE_FLAG_EP_CHECK) {
        what += ", ep_check";
    }
    printf("#       error handling: %s\n",
           what.empty() ? "none" : what.c_str() + 2);
}

/* Print one interface; false when it does not open */
bool print_iface_info(uct_md_h md, uct_worker_h worker,
                      const uct_tl_resource_desc_t &resource)
{
    uct_iface_params_t params = {};
    uct_iface_config_t *config;
    uct_iface_attr_t   attr;
    uct_iface_h        iface;
    ucs_status_t       status;
    std::string        connection;

    printf("#\n");
    printf("#      Transport: %s\n", resource.tl_name);

    status = uct_md_iface_config_read(md, resource.tl_name, nullptr, nullptr,
                                      &config);
    if (status != UCS_OK) {
        printf("#      < failed to read the configuration: %s >\n",
               ucs_status_string(status));
        return false;
    }

    params.field_mask           = UCT_IFACE_PARAM_FIELD_OPEN_MODE |
                                  UCT_IFACE_PARAM_FIELD_DEVICE;
    params.open_mode            = UCT_IFACE_OPEN_MODE_DEVICE;
    params.mode.device.tl_name  = resource.tl_name;
    params.mode.device.dev_name = resource.dev_name;
    status = uct_iface_open(md, worker, &params, config, &iface);
    uct_config_release(config);
    if (status != UCS_OK) {
        printf("#      < failed to open interface: %s >\n",
               ucs_status_string(status));
        return false;
    }

    status = uct_iface_query(iface, &attr);
    if (status != UCS_OK) {
        printf("#      < failed to query interface: %s >\n",
               ucs_status_string(status));
        uct_iface_close(iface);
        return false;
    }

    if (attr.cap.flags & UCT_IFACE_FLAG_CONNECT_TO_EP) {
        connection += ", to ep";
    }
    if (attr.cap.flags & UCT_IFACE_FLAG_CONNECT_TO_IFACE) {
        connection += ", to iface";
    }

    printf("#           Type: %s\n", uct_device_type_names[resource.dev_type]);
    print_capabilities(attr);
    printf("#            bandwidth: %.2f MB/sec\n",
           (attr.bandwidth.dedicated + attr.bandwidth.shared) / 1e6);
    printf("#              latency: %.0f nsec\n", attr.latency.c * 1e9);
    printf("#             overhead: %.0f nsec\n", attr.overhead * 1e9);
    printf("#           connection: %s\n",
           connection.empty() ? "none" : connection.c_str() + 2);
    printf("#             priority: %u\n", attr.priority);
    printf("#     device num paths: %u\n", attr.dev_num_paths);
    printf("#              max eps: %s\n", size_str(attr.max_num_eps).c_str());
    printf("#       device address: %zu bytes\n", attr.device_addr_len);
    if (attr.cap.flags & UCT_IFACE_FLAG_CONNECT_TO_IFACE) {
        printf("#        iface address: %zu bytes\n", attr.iface_addr_len);
    }
    if (attr.cap.flags & UCT_IFACE_FLAG_CONNECT_TO_EP) {
        printf("#           ep address: %zu bytes\n", attr.ep_addr_len);
    }
    print_error_handling(attr);
    uct_iface_close(iface);
    return true;
}

/* Device names of @a resources, in the order they first appear */
std::vector<std::string> device_names(const uct_tl_resource_desc_t *resources,
                                      unsigned count)
{
    std::vector<std::string> names;

    for (unsigned i = 0; i < count; ++i) {
        bool seen = false;
        for (const std::string &name : names) {
            seen = seen || (name == resources[i].dev_name);
        }
        if (!seen) {
            names.push_back(resources[i].dev_name);
        }
    }
    return names;
}

/* Print one memory domain; returns how many of its interfaces opened */
unsigned print_md_info(uct_component_h component, const char *component_name,
                   const char *md_name, uct_worker_h worker,
                   const ib_port_query &ib_query,
                   emu_port_stats_query &emu_query)
{
    const bool             is_ib = !strcmp(component_name, "ib");
    uct_md_config_t        *md_config;
    uct_tl_resource_desc_t *resources;
    unsigned               num_resources;
    uct_md_attr_t          md_attr;
    uct_md_h               md;
    ucs_status_t           status;
    unsigned               opened = 0;

    status = uct_md_config_read(component, nullptr, nullptr, &md_config);
    if (status != UCS_OK) {
        printf("# < failed to read the configuration of %s >\n", md_name);
        return 0;
    }

    status = uct_md_open(component, md_name, md_config, &md);
    uct_config_release(md_config);
    if (status != UCS_OK) {
        printf("#\n# Memory domain: %s\n", md_name);
        printf("#   < failed to open memory domain: %s >\n",
               ucs_status_string(status));
        return 0;
    }

    status = uct_md_query_tl_resources(md, &resources, &num_resources);
    if (status != UCS_OK) {
        printf("#\n# Memory domain: %s\n", md_name);
        printf("#   < failed to query resources: %s >\n",
               ucs_status_string(status));
        uct_md_close(md);
        return 0;
    }

    const std::vector<std::string> devices = device_names(resources,
                                                          num_resources);
    bool                           md_emulated = false;
    std::vector<uct_ib_port_info_t> ports(is_ib ? devices.size() : 0);
    std::vector<bool>               port_known(ports.size(), false);

    for (size_t i = 0; i < ports.size(); ++i) {
        port_known[i] = ib_query.query(md, devices[i].c_str(), &ports[i]);
        md_emulated   = md_emulated || (port_known[i] && ports[i].emulated);
    }

    printf("#\n");
    printf("# Memory domain: %s%s\n", md_name, md_emulated ? " (emulated)" : "");
    printf("#     Component: %s\n", component_name);
    if (uct_md_query(md, &md_attr) == UCS_OK) {
        if (md_attr.cap.flags & UCT_MD_FLAG_REG) {
            printf("#             register: %s\n",
                   size_str(md_attr.cap.max_reg).c_str());
        }
        if (md_attr.cap.flags & UCT_MD_FLAG_NEED_RKEY) {
            printf("#           remote key: %zu bytes\n",
                   md_attr.rkey_packed_size);
        }
        if (md_attr.cap.flags & UCT_MD_FLAG_NEED_MEMH) {
            printf("#           local memory handle is required for zcopy\n");
        }
    }

    if (num_resources == 0) {
        printf("#   < no supported devices found >\n");
    }

    for (size_t d = 0; d < devices.size(); ++d) {
        const bool emulated = (d < ports.size()) && port_known[d] &&
                              ports[d].emulated;

        printf("#\n");
        printf("#   Device: %s%s\n", devices[d].c_str(),
               emulated ? " (emulated)" : "");
        if ((d < ports.size()) && port_known[d]) {
            print_port_info(ports[d]);
        }
        if (emulated) {
            print_emu_port_stats(emu_query, devices[d].c_str());
        }
        for (unsigned i = 0; i < num_resources; ++i) {
            if (devices[d] == resources[i].dev_name) {
                opened += print_iface_info(md, worker, resources[i]) ? 1 : 0;
            }
        }
    }

    uct_release_tl_resource_list(resources);
    uct_md_close(md);
    return opened;
}

/* Ask every component for its memory domains, and forget the answers */
void list_md_resources()
{
    uct_component_h *components;
    unsigned        num_components;

    if (uct_query_components(&components, &num_components) != UCS_OK) {
        return; /* print_devices() reports it */
    }

    for (unsigned c = 0; c < num_components; ++c) {
        uct_component_attr_t attr = {};

        attr.field_mask = UCT_COMPONENT_ATTR_FIELD_MD_RESOURCE_COUNT;
        (void)uct_component_query(components[c], &attr);
    }
    uct_release_component_list(components);
}

int print_devices()
{
    uct_component_h *components;
    unsigned        num_components;
    uct_worker_h    worker;
    ucs_status_t    status;

    status = uct_query_components(&components, &num_components);
    if (status != UCS_OK) {
        fprintf(stderr, "ucx_info: uct_query_components() failed: %s\n",
                ucs_status_string(status));
        return EXIT_FAILURE;
    }

    status = uct_worker_create(nullptr, UCS_THREAD_MODE_SINGLE, &worker);
    if (status != UCS_OK) {
        fprintf(stderr, "ucx_info: uct_worker_create() failed: %s\n",
                ucs_status_string(status));
        uct_release_component_list(components);
        return EXIT_FAILURE;
    }

    if (num_components == 0) {
        printf("# < no transport components: is the module directory "
               "right? (ucx_info -v) >\n");
    }

    unsigned                   opened = 0;
    const ib_port_query        ib_query;
    emu_port_stats_query       emu_query;
    for (unsigned c = 0; c < num_components; ++c) {
        uct_component_attr_t attr = {};

        attr.field_mask = UCT_COMPONENT_ATTR_FIELD_NAME |
                          UCT_COMPONENT_ATTR_FIELD_MD_RESOURCE_COUNT;
        if (uct_component_query(components[c], &attr) != UCS_OK) {
            continue;
        }

        std::vector<uct_md_resource_desc_t> mds(attr.md_resource_count);
        attr.field_mask   = UCT_COMPONENT_ATTR_FIELD_MD_RESOURCES;
        attr.md_resources = mds.data();
        if ((attr.md_resource_count > 0) &&
            (uct_component_query(components[c], &attr) != UCS_OK)) {
            continue;
        }

        if (mds.empty()) {
            printf("#\n# Component %s: < no devices found >\n", attr.name);
        }
        for (const uct_md_resource_desc_t &md : mds) {
            opened += print_md_info(components[c], attr.name, md.md_name,
                                    worker, ib_query, emu_query);
        }
    }
    printf("#\n");

    uct_worker_destroy(worker);
    uct_release_component_list(components);
    if (opened == 0) {
        fprintf(stderr, "ucx_info: no transport interface opened (see the "
                "messages above; UCX_NET_DEVICES and UCX_MODULE_DIR choose "
                "what opens)\n");
        return EXIT_FAILURE;
    }
    return EXIT_SUCCESS;
}

} // namespace

int main(int argc, char **argv)
{
    bool version = false;
    bool devices = false;
    bool config  = false;
    int  ret     = EXIT_SUCCESS;
    int  c;

    while ((c = getopt(argc, argv, "vdch")) != -1) {
        switch (c) {
        case 'v':
            version = true;
            break;
        case 'd':
            devices = true;
            break;
        case 'c':
            config = true;
            break;
        case 'h':
            usage(stdout);
            return EXIT_SUCCESS;
        default:
            usage(stderr);
            return EXIT_FAILURE;
        }
    }

    if (!version && !devices && !config) {
        usage(stderr);
        return EXIT_FAILURE;
    }

    ucs_modules_load("uct");
    /* The components choose their device tables now, so the knobs of what
     * those load (the emulated device's) are known before the check */
    list_md_resources();
    if (ucs_global_opts.warn_unused_env_vars) {
        ucs_config_parser_warn_unused_env_vars(UCS_DEFAULT_ENV_PREFIX);
    }

    if (version) {
        print_version();
    }
    if (devices) {
        ret = print_devices();
    }
    if (config) {
        ucs_config_parser_print_all_opts(stdout, UCS_DEFAULT_ENV_PREFIX);
    }
    return ret;
}
