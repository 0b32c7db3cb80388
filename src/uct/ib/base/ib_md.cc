#include "ib_md.h"
#include "ib_av_cache.h"

#include <ucs/debug/log_def.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <string>
#include <vector>

static const char *uct_ib_ah_cache_mode_names[] = {"transient", "validated", NULL};

ucs_config_field_t uct_ib_md_config_table[] = {
    {"", "", NULL, offsetof(uct_ib_md_config_t, super),
     UCS_CONFIG_TYPE_TABLE(uct_md_config_table)},

    {"NET_DEVICES", "all",
     "Devices and ports to use, as a comma-separated list of dev:port\n"
     "(e.g. mlx5_0:1,mlx5_1:1), or \"all\".",
     offsetof(uct_ib_md_config_t, net_devices), UCS_CONFIG_TYPE_STRING_ARRAY},

    {"MLX5_DEVX", "y",
     "Open mlx5 devices with DevX when the device allows it, so RC queue\n"
     "pairs are created with DevX; \"n\" uses verbs queue pairs only.",
     offsetof(uct_ib_md_config_t, devx), UCS_CONFIG_TYPE_BOOL},

    {"MLX5_UMR", "n",
     "Export memory registrations of mlx5 DevX devices through indirect\n"
     "mkeys: a UMR queue pair connected to itself binds each registration to\n"
     "an mkey of a pool on registration and invalidates it on release, and\n"
     "the packed remote key is the mkey's (it addresses the region from\n"
     "offset 0). The first registration probes the UMR path once; if it does\n"
     "not work, one warning names the device, port, GID index and reason, and\n"
     "the memory domain keeps exporting the MRs' own keys.",
     offsetof(uct_ib_md_config_t, mlx5_umr), UCS_CONFIG_TYPE_BOOL},

    {"MLX5_UMR_TIMEOUT", "2s",
     "How long a UMR operation may take to complete: each bind and each\n"
     "invalidate, and the first-use probe as a whole. An operation that does\n"
     "not complete in time disables export for the memory domain.",
     offsetof(uct_ib_md_config_t, mlx5_umr_timeout), UCS_CONFIG_TYPE_TIME},

    {"GID_INDEX", "auto",
     "The interfaces' GID index knob (see the interface configuration), read\n"
     "by the memory domain for its UMR queue pair, which connects to itself\n"
     "through the GID the interfaces would select.",
     offsetof(uct_ib_md_config_t, gid_index), UCS_CONFIG_TYPE_ULUNITS},

    {"ROCE_SUBNETS", "",
     "The interfaces' RoCE subnet filter for GID_INDEX=auto, read by the\n"
     "memory domain for its UMR queue pair.",
     offsetof(uct_ib_md_config_t, roce_subnets), UCS_CONFIG_TYPE_STRING_ARRAY},

    {"AH_CACHE", "transient",
     "How a DevX connect on RoCE learns its destination's MAC:\n"
     " transient  an address handle made for the connect and destroyed at\n"
     "            once: the kernel resolves the MAC every time.\n"
     " validated  address vectors cached per port, GID index, destination GID,\n"
     "            traffic class, hop limit and flow label, each dropped as soon\n"
     "            as the kernel's neighbour table says its MAC changed or went\n"
     "            away (rtnetlink neighbour events, read before every lookup).\n"
     "            Destinations the neighbour table does not confirm (routed\n"
     "            ones) are not cached; if events are lost, the cache is\n"
     "            flushed and falls back to transient with one warning.",
     offsetof(uct_ib_md_config_t, ah_cache),
     UCS_CONFIG_TYPE_ENUM(uct_ib_ah_cache_mode_names)},

    UCS_CONFIG_EMPTY_FIELD
};

namespace {

/* The memory export implementation, registered at load by mlx5/dv */
uct_ib_md_mem_export_open_func_t mem_export_open = nullptr;

ucs_status_t select_glue_once()
{
    static std::once_flag once;
    static ucs_status_t   status = UCS_OK;

    std::call_once(once, [] { status = uct_ib_glue_init_from_env(); });
    return status;
}

/* One info line while there are no devices, not one per query */
void report_no_devices(const uct_ib_device_list &list)
{
    static std::mutex              lock;
    static const uct_ib_glue_ops_t *reported = nullptr;
    std::lock_guard<std::mutex>    guard(lock);

    if (list.size() != 0) {
        reported = nullptr;
        return;
    } else if (reported == uct_ib_glue) {
        return;
    }

    reported = uct_ib_glue;
    if (list.error() != 0) {
        errno = list.error();
        ucs_info("no InfiniBand/RoCE devices: get_device_list(%s) failed: %m",
                 uct_ib_glue->name);
    } else {
        ucs_info("no InfiniBand/RoCE devices found (%s)", uct_ib_glue->name);
    }
}

ucs_status_t query_md_resources(uct_component_t *, uct_md_resource_desc_t **resources_p,
                                unsigned *num_resources_p)
{
    uct_md_resource_desc_t *resources;
    ucs_status_t           status;

    status = select_glue_once();
    if (status != UCS_OK) {
        return status;
    }

    uct_ib_device_list list;
    report_no_devices(list);

    resources = static_cast<uct_md_resource_desc_t*>(
            calloc(std::max(list.size(), 1), sizeof(*resources)));
    if (resources == nullptr) {
        return UCS_ERR_NO_MEMORY;
    }

    for (int i = 0; i < list.size(); ++i) {
        snprintf(resources[i].md_name, sizeof(resources[i].md_name), "%s",
                 uct_ib_glue->get_device_name(list[i]));
    }

    *resources_p     = resources;
    *num_resources_p = list.size();
    return UCS_OK;
}

bool has_roce_port(const uct_ib_md *md)
{
    for (const uct_ib_port &port : md->dev->ports()) {
        if (md->dev->is_port_roce(port.port_num)) {
            return true;
        }
    }
    return false;
}

void md_close(uct_md_h tl_md)
{
    uct_ib_md *md = static_cast<uct_ib_md*>(tl_md);
    int       ret;

    /* Its QP and mkeys live on the PD */
    delete md->mem_export;
    md->mem_export = nullptr;
    delete md->av_cache;
    md->av_cache = nullptr;

    if (md->pd != nullptr) {
        ret = uct_ib_glue->dealloc_pd(md->pd);
        if (ret != 0) {
            errno = ret;
            ucs_warn("dealloc_pd(%s) failed: %m", md->dev->name());
        }
    }
    delete md->dev;
    ucs_config_parser_release_opts(&md->config, uct_ib_md_config_table);
    delete md;
}

ucs_status_t md_query(uct_md_h tl_md, uct_md_attr_t *md_attr)
{
    uct_ib_md *md = static_cast<uct_ib_md*>(tl_md);

    md_attr->cap.flags         = UCT_MD_FLAG_REG | UCT_MD_FLAG_NEED_MEMH |
                                 UCT_MD_FLAG_NEED_RKEY;
    md_attr->cap.max_reg       = md->dev->attr().max_mr_size;
    md_attr->cap.reg_mem_types = UCS_BIT(UCS_MEMORY_TYPE_HOST);
    md_attr->cap.access_mem_types = UCS_BIT(UCS_MEMORY_TYPE_HOST);
    md_attr->rkey_packed_size  = sizeof(uint64_t);
    return UCS_OK;
}

int access_flags(unsigned flags)
{
    int access = IBV_ACCESS_LOCAL_WRITE;

    if (!(flags & UCT_MD_MEM_ACCESS_ALL)) {
        flags |= UCT_MD_MEM_ACCESS_ALL; /* no access given: everything */
    }
    if (flags & UCT_MD_MEM_ACCESS_REMOTE_PUT) {
        access |= IBV_ACCESS_REMOTE_WRITE;
    }
    if (flags & UCT_MD_MEM_ACCESS_REMOTE_GET) {
        access |= IBV_ACCESS_REMOTE_READ;
    }
    if (flags & UCT_MD_MEM_ACCESS_REMOTE_ATOMIC) {
        access |= IBV_ACCESS_REMOTE_ATOMIC;
    }
    return access;
}

ucs_status_t mem_reg(uct_md_h tl_md, void *address, size_t length,
                     unsigned flags, uct_mem_h *memh_p)
{
    uct_ib_md    *md = static_cast<uct_ib_md*>(tl_md);
    uct_ib_mem_t *memh;

    memh = new (std::nothrow) uct_ib_mem_t();
    if (memh == nullptr) {
        return UCS_ERR_NO_MEMORY;
    }

    memh->mr = uct_ib_glue->reg_mr(md->pd, address, length, access_flags(flags));
    if (memh->mr == nullptr) {
        const int err = errno; /* the log and delete may change it */

        ucs_log(uct_md_reg_log_level(flags),
                "reg_mr(%s, address %p length %zu) failed: %m",
                md->dev->name(), address, length);
        delete memh;
        return (err == ENOMEM) ? UCS_ERR_NO_MEMORY : UCS_ERR_IO_ERROR;
    }

    memh->rkey          = memh->mr->rkey;
    memh->export_handle = nullptr;
    if ((md->mem_export != nullptr) &&
        (md->mem_export->export_mr(memh->mr, access_flags(flags), &memh->rkey,
                                   &memh->export_handle) != UCS_OK)) {
        /* not exported: the MR's own key, as without export */
        memh->rkey          = memh->mr->rkey;
        memh->export_handle = nullptr;
    }

    *memh_p = memh;
    return UCS_OK;
}

ucs_status_t mem_dereg(uct_md_h tl_md, uct_mem_h tl_memh)
{
    uct_ib_md    *md   = static_cast<uct_ib_md*>(tl_md);
    uct_ib_mem_t *memh = static_cast<uct_ib_mem_t*>(tl_memh);
    int          ret;

    /* The exported key goes first: it must not outlive the MR */
    if (memh->export_handle != nullptr) {
        md->mem_export->release(memh->export_handle);
        memh->export_handle = nullptr;
        memh->rkey          = memh->mr->rkey;
    }

    ret = uct_ib_glue->dereg_mr(memh->mr);
    if (ret != 0) {
        errno = ret;
        ucs_error("dereg_mr(%s, lkey 0x%x) failed: %m", md->dev->name(),
                  memh->mr->lkey);
        return UCS_ERR_IO_ERROR;
    }

    delete memh;
    return UCS_OK;
}

ucs_status_t mkey_pack(uct_md_h, uct_mem_h tl_memh, void *rkey_buffer)
{
    uint64_t packed = uct_ib_md_pack_rkey(
            static_cast<uct_ib_mem_t*>(tl_memh)->rkey);

    memcpy(rkey_buffer, &packed, sizeof(packed));
    return UCS_OK;
}

const uct_md_ops_t uct_ib_md_ops = {
    .close     = md_close,
    .query     = md_query,
    .mem_reg   = mem_reg,
    .mem_dereg = mem_dereg,
    .mkey_pack = mkey_pack
};

/* The variable UCX_NET_DEVICES was read from: the md's own prefix wins */
std::string net_devices_variable()
{
    const std::string specific = std::string(UCS_DEFAULT_ENV_PREFIX) +
                                 UCT_IB_CONFIG_PREFIX + "NET_DEVICES";

    return (getenv(specific.c_str()) != nullptr) ?
           specific : std::string(UCS_DEFAULT_ENV_PREFIX) + "NET_DEVICES";
}

/* Why @a entry of UCX_NET_DEVICES names no port, or "" when it may name one */
std::string net_device_problem(const std::string &entry,
                               const uct_ib_device_list &list,
                               const uct_ib_md *md)
{
    const size_t colon = entry.rfind(':');
    std::string  devices;
    char         *end;
    long         port;

    if (entry == "all") {
        return "";
    }
    if ((colon == std::string::npos) || (colon == 0) ||
        (colon + 1 == entry.size())) {
        return "'" + entry + "' is not dev:port (e.g. mlx5_0:1) or all";
    }

    port = strtol(entry.c_str() + colon + 1, &end, 10);
    if ((*end != '\0') || (port < 1) || (port > 255)) {
        return "'" + entry + "': the port is not a number from 1 to 255";
    }

    const std::string dev = entry.substr(0, colon);
    if (dev == md->dev->name()) {
        return (md->dev->port(port) == nullptr) ?
               ("device " + dev + " has no port " + std::to_string(port)) : "";
    }

    for (int i = 0; i < list.size(); ++i) {
        const char *name = uct_ib_glue->get_device_name(list[i]);
        if (dev == name) {
            return ""; /* its own md checks the port */
        }
        devices += std::string(devices.empty() ? "" : ", ") + name;
    }
    return "no device '" + dev + "' (devices: " +
           (devices.empty() ? "none" : devices) + ")";
}

/*
 * Name the variable when an entry of UCX_NET_DEVICES can never match, once
 * per process and entry: the mds of every device read the same list, and
 * without this a typo only shows as "no supported devices".
 */
void check_net_devices(const uct_ib_md *md, const uct_ib_device_list &list)
{
    const ucs_config_names_array_t *names = &md->config.net_devices;

    for (unsigned i = 0; i < names->count; ++i) {
        const std::string problem = net_device_problem(names->names[i], list,
                                                       md);
        const std::string var     = net_devices_variable();

        const char        *value  = getenv(var.c_str());

        if (!problem.empty() &&
            ucs_config_parser_first_report((var + " " + problem).c_str())) {
            ucs_error("%s=%s: %s; it matches no port", var.c_str(),
                      (value != nullptr) ? value : "", problem.c_str());
        }
    }
}

ucs_status_t md_open(uct_component_t *, const char *md_name,
                     const uct_md_config_t *tl_config, uct_md_h *md_p)
{
    auto               *config = reinterpret_cast<const uct_ib_md_config_t*>(tl_config);
    uct_ib_device_list list;
    struct ibv_device  *ibv_dev;
    uct_ib_md          *md;
    ucs_status_t       status;

    ibv_dev = list.find(md_name);
    if (ibv_dev == nullptr) {
        ucs_error("IB device %s not found", md_name);
        return UCS_ERR_NO_DEVICE;
    }

    md = new (std::nothrow) uct_ib_md();
    if (md == nullptr) {
        return UCS_ERR_NO_MEMORY;
    }
    md->ops        = &uct_ib_md_ops;
    md->mem_export = nullptr;
    md->av_cache   = nullptr;

    status = ucs_config_parser_clone_opts(config, &md->config,
                                          uct_ib_md_config_table);
    if (status != UCS_OK) {
        delete md;
        return status;
    }

    status = uct_ib_device::open(ibv_dev, md->config.devx, &md->dev);
    if (status != UCS_OK) {
        md_close(md);
        return status;
    }

    check_net_devices(md, list);

    md->pd = uct_ib_glue->alloc_pd(md->dev->context());
    if (md->pd == nullptr) {
        ucs_error("alloc_pd(%s) failed: %m", md_name);
        md_close(md);
        return UCS_ERR_IO_ERROR;
    }

    if ((md->config.ah_cache == UCT_IB_AH_CACHE_VALIDATED) && has_roce_port(md)) {
        md->av_cache = new (std::nothrow) uct_ib_av_cache(*md->dev);
        if (md->av_cache == nullptr) {
            md_close(md);
            return UCS_ERR_NO_MEMORY;
        }
    }

    if (md->config.mlx5_umr && (mem_export_open != nullptr)) {
        status = mem_export_open(md, &md->mem_export);
        if ((status != UCS_OK) && (status != UCS_ERR_UNSUPPORTED)) {
            md_close(md);
            return status;
        }
    }

    *md_p = md;
    return UCS_OK;
}

ucs_status_t rkey_unpack(uct_component_t *, const void *rkey_buffer,
                         uct_rkey_t *rkey_p, void **handle_p)
{
    uint64_t packed;

    memcpy(&packed, rkey_buffer, sizeof(packed));
    *rkey_p   = packed;
    *handle_p = nullptr;
    return UCS_OK;
}

bool net_device_allowed(const uct_ib_md_config_t *config, const std::string &name)
{
    const ucs_config_names_array_t *list = &config->net_devices;

    for (unsigned i = 0; i < list->count; ++i) {
        if (!strcmp(list->names[i], "all") || (name == list->names[i])) {
            return true;
        }
    }
    return false;
}

} // namespace

uct_component_t uct_ib_component = {
    .name               = "ib",
    .query_md_resources = query_md_resources,
    .md_open            = md_open,
    .rkey_unpack        = rkey_unpack,
    .rkey_release       = uct_component_rkey_release_nop,
    .md_config          = {"IB memory domain", UCT_IB_CONFIG_PREFIX,
                           uct_ib_md_config_table, sizeof(uct_ib_md_config_t)},
    .flags              = 0,
    .tl_list            = nullptr,
    .next               = nullptr
};
UCT_COMPONENT_REGISTER(&uct_ib_component)

void uct_ib_md_register_mem_export(uct_ib_md_mem_export_open_func_t open)
{
    mem_export_open = open;
}

uint64_t uct_ib_md_pack_rkey(uint32_t rkey)
{
    return (static_cast<uint64_t>(rkey) << 32) | rkey;
}

ucs_status_t uct_ib_md_parse_port(const uct_ib_md *md, const char *dev_name,
                                  uint8_t *port_num_p)
{
    std::string name(dev_name);
    size_t      colon = name.rfind(':');
    char        *end;
    long        port;

    if ((colon == std::string::npos) || (name.substr(0, colon) != md->dev->name())) {
        return UCS_ERR_NO_DEVICE;
    }

    port = strtol(name.c_str() + colon + 1, &end, 10);
    if ((*end != '\0') || (md->dev->port(port) == nullptr)) {
        return UCS_ERR_NO_DEVICE;
    }

    *port_num_p = static_cast<uint8_t>(port);
    return UCS_OK;
}

ucs_status_t uct_ib_md_query_tl_devices(uct_md_h tl_md,
                                        bool (*accept)(const uct_ib_md *md,
                                                       uint8_t port_num),
                                        uct_tl_device_resource_t **devices_p,
                                        unsigned *num_devices_p)
{
    const uct_ib_md                       *md = static_cast<uct_ib_md*>(tl_md);
    std::vector<uct_tl_device_resource_t> devices;

    for (const uct_ib_port &port : md->dev->ports()) {
        std::string name = md->dev->port_name(port.port_num);

        if ((port.attr.state != IBV_PORT_ACTIVE) ||
            !net_device_allowed(&md->config, name) ||
            !accept(md, port.port_num)) {
            continue;
        }

        uct_tl_device_resource_t resource = {};
        snprintf(resource.name, sizeof(resource.name), "%s", name.c_str());
        resource.type       = UCT_DEVICE_TYPE_NET;
        resource.sys_device = UCS_SYS_DEVICE_ID_UNKNOWN;
        devices.push_back(resource);
    }

    *devices_p = static_cast<uct_tl_device_resource_t*>(
            malloc(std::max<size_t>(devices.size(), 1) * sizeof(**devices_p)));
    if (*devices_p == nullptr) {
        return UCS_ERR_NO_MEMORY;
    }

    std::copy(devices.begin(), devices.end(), *devices_p);
    *num_devices_p = devices.size();
    return UCS_OK;
}

ucs_status_t uct_ib_md_av_cache_stats(uct_md_h tl_md,
                                      uct_ib_av_cache_stats_t *stats)
{
    auto *md = static_cast<uct_ib_md*>(tl_md);

    if ((md->ops != &uct_ib_md_ops) || (md->av_cache == nullptr)) {
        return UCS_ERR_UNSUPPORTED;
    }
    *stats = md->av_cache->stats();
    return UCS_OK;
}
