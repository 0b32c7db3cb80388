/*
 * The UCT core through its public API, on a fake component defined here:
 * component "gtfake" with one memory domain and one transport "gtfake" on
 * three devices. fake0 and fake1 share fabric 0, fake2 is alone on fabric 1.
 * Endpoints "connect" by looking each other up in this process; nothing is
 * sent anywhere.
 */
#include <common/test.h>

#include <uct/api/uct.h>
#include <uct/api/v2/uct_v2.h>
#include "uct/uct_test_util.h"

#include <uct/base/uct_component.h>
#include <uct/base/uct_iface.h>
#include <uct/base/uct_md.h>

#include <ucs/config/global_opts.h>
#include <ucs/config/parser.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

namespace {

/* ---------------------------------------------------------------------- *
 * The fake component
 * ---------------------------------------------------------------------- */

constexpr uint64_t fake_rkey_magic = 0x67746661'6b65726bull;
constexpr unsigned fake_num_devices = 3;

struct fake_md_config {
    uct_md_config_t super;
    size_t          max_reg;
};

ucs_config_field_t fake_md_config_table[] = {
    {"", "", nullptr, offsetof(fake_md_config, super),
     UCS_CONFIG_TYPE_TABLE(uct_md_config_table)},
    {"MAX_REG", "1m", "Largest registration of the gtest fake memory domain.",
     offsetof(fake_md_config, max_reg), UCS_CONFIG_TYPE_MEMUNITS},
    UCS_CONFIG_EMPTY_FIELD
};

struct fake_iface_config {
    uct_iface_config_t super;
    unsigned           priority;
};

ucs_config_field_t fake_iface_config_table[] = {
    {"", "", nullptr, offsetof(fake_iface_config, super),
     UCS_CONFIG_TYPE_TABLE(uct_iface_config_table)},
    {"PRIORITY", "7", "Priority the gtest fake interface reports.",
     offsetof(fake_iface_config, priority), UCS_CONFIG_TYPE_UINT},
    UCS_CONFIG_EMPTY_FIELD
};

struct fake_md : uct_md {
    size_t max_reg;
};

struct fake_memh {
    void   *address;
    size_t length;
};

struct fake_packed_rkey {
    uint64_t magic;
    uint64_t address;
    uint64_t length;
};

struct fake_rkey {
    uint64_t address;
    uint64_t length;
};

struct fake_device_addr {
    uint32_t fabric;
    uint32_t dev_index;
};

struct fake_iface_addr {
    uint32_t iface_id;
};

struct fake_ep_addr {
    uint32_t iface_id;
    uint32_t ep_id;
};

struct fake_ep;

struct fake_iface : uct_base_iface {
    unsigned                      dev_index;
    uint32_t                      id;
    uint8_t                       priority;
    unsigned                      progress_calls;
    uint32_t                      next_ep_id;
    std::map<uint32_t, fake_ep*>  eps;
};

struct fake_ep : uct_ep {
    uint32_t id;
    bool     connected;
    uint32_t peer_iface_id;
    uint32_t peer_ep_id;
};

/* Interfaces of the process, by id: what "connecting" looks up */
std::map<uint32_t, fake_iface*> fake_ifaces;
uint32_t                        fake_next_iface_id = 1;

uint32_t fake_fabric_of(unsigned dev_index)
{
    return (dev_index < 2) ? 0 : 1;
}

fake_iface *fake_iface_of(uct_iface_h tl_iface)
{
    return static_cast<fake_iface*>(static_cast<uct_base_iface_t*>(tl_iface));
}

/* Memory domain */

void fake_md_close(uct_md_h md)
{
    delete static_cast<fake_md*>(md);
}

ucs_status_t fake_md_query(uct_md_h tl_md, uct_md_attr_t *attr)
{
    auto *md = static_cast<fake_md*>(tl_md);

    attr->cap.flags            = UCT_MD_FLAG_REG | UCT_MD_FLAG_NEED_RKEY;
    attr->cap.max_reg          = md->max_reg;
    attr->cap.reg_mem_types    = UCS_BIT(UCS_MEMORY_TYPE_HOST);
    attr->cap.access_mem_types = UCS_BIT(UCS_MEMORY_TYPE_HOST);
    attr->rkey_packed_size     = sizeof(fake_packed_rkey);
    attr->reg_cost             = ucs_linear_func_make(1e-6, 1e-10);
    return UCS_OK;
}

ucs_status_t fake_mem_reg(uct_md_h tl_md, void *address, size_t length,
                          unsigned flags, uct_mem_h *memh_p)
{
    auto *md = static_cast<fake_md*>(tl_md);

    if (length > md->max_reg) {
        ucs_log(uct_md_reg_log_level(flags), "gtfake: cannot register %zu "
                "bytes, the limit is %zu", length, md->max_reg);
        return UCS_ERR_EXCEEDS_LIMIT;
    }

    *memh_p = new fake_memh{address, length};
    return UCS_OK;
}

ucs_status_t fake_mem_dereg(uct_md_h, uct_mem_h memh)
{
    delete static_cast<fake_memh*>(memh);
    return UCS_OK;
}

ucs_status_t fake_mkey_pack(uct_md_h, uct_mem_h tl_memh, void *rkey_buffer)
{
    auto             *memh = static_cast<fake_memh*>(tl_memh);
    fake_packed_rkey packed = {fake_rkey_magic, (uintptr_t)memh->address,
                               memh->length};

    memcpy(rkey_buffer, &packed, sizeof(packed));
    return UCS_OK;
}

const uct_md_ops_t fake_md_ops = {
    .close     = fake_md_close,
    .query     = fake_md_query,
    .mem_reg   = fake_mem_reg,
    .mem_dereg = fake_mem_dereg,
    .mkey_pack = fake_mkey_pack
};

/* Component */

ucs_status_t fake_md_open(uct_component_t *, const char *,
                          const uct_md_config_t *tl_config, uct_md_h *md_p)
{
    auto *config = reinterpret_cast<const fake_md_config*>(tl_config);
    auto *md     = new fake_md();

    md->ops     = &fake_md_ops;
    md->max_reg = config->max_reg;
    *md_p       = md;
    return UCS_OK;
}

ucs_status_t fake_rkey_unpack(uct_component_t *, const void *rkey_buffer,
                              uct_rkey_t *rkey_p, void **handle_p)
{
    fake_packed_rkey packed;

    memcpy(&packed, rkey_buffer, sizeof(packed));
    if (packed.magic != fake_rkey_magic) {
        ucs_error("gtfake: not a packed gtfake remote key (magic 0x%lx)",
                  (unsigned long)packed.magic);
        return UCS_ERR_INVALID_PARAM;
    }

    auto *rkey = new fake_rkey{packed.address, packed.length};
    *rkey_p    = (uintptr_t)rkey;
    *handle_p  = rkey;
    return UCS_OK;
}

ucs_status_t fake_rkey_release(uct_component_t *, uct_rkey_t, void *handle)
{
    delete static_cast<fake_rkey*>(handle);
    return UCS_OK;
}

uct_component_t fake_component = {
    .name               = "gtfake",
    .query_md_resources = uct_component_query_single_md_resource,
    .md_open            = fake_md_open,
    .rkey_unpack        = fake_rkey_unpack,
    .rkey_release       = fake_rkey_release,
    .md_config          = {"gtest fake memory domain", "GTFAKE_",
                           fake_md_config_table, sizeof(fake_md_config)},
    .flags              = 0
};
UCT_COMPONENT_REGISTER(&fake_component)

/* Endpoints */

ucs_status_t fake_ep_create(const uct_ep_params_t *params, uct_ep_h *ep_p)
{
    fake_iface *iface = fake_iface_of(params->iface);

    if (params->field_mask & UCT_EP_PARAM_FIELD_IFACE_ADDR) {
        ucs_debug("gtfake: no connect-to-iface endpoints");
        return UCS_ERR_UNSUPPORTED;
    }

    auto *ep       = new fake_ep();
    ep->iface      = params->iface;
    ep->id         = iface->next_ep_id++;
    iface->eps[ep->id] = ep;
    *ep_p          = ep;
    return UCS_OK;
}

void fake_ep_destroy(uct_ep_h tl_ep)
{
    auto *ep = static_cast<fake_ep*>(tl_ep);

    fake_iface_of(ep->iface)->eps.erase(ep->id);
    delete ep;
}

ucs_status_t fake_ep_get_address(uct_ep_h tl_ep, uct_ep_addr_t *addr)
{
    auto         *ep     = static_cast<fake_ep*>(tl_ep);
    fake_ep_addr ep_addr = {fake_iface_of(ep->iface)->id, ep->id};

    memcpy(addr, &ep_addr, sizeof(ep_addr));
    return UCS_OK;
}

ucs_status_t fake_ep_connect_to_ep_v2(uct_ep_h tl_ep,
                                      const uct_device_addr_t *device_addr,
                                      const uct_ep_addr_t *tl_ep_addr,
                                      const uct_ep_connect_to_ep_params_t *params)
{
    auto             *ep    = static_cast<fake_ep*>(tl_ep);
    fake_iface       *iface = fake_iface_of(ep->iface);
    fake_device_addr dev_addr;
    fake_ep_addr     ep_addr;

    if (((params->field_mask &
          UCT_EP_CONNECT_TO_EP_PARAM_FIELD_DEVICE_ADDR_LENGTH) &&
         (params->device_addr_length < sizeof(dev_addr))) ||
        ((params->field_mask & UCT_EP_CONNECT_TO_EP_PARAM_FIELD_EP_ADDR_LENGTH) &&
         (params->ep_addr_length < sizeof(ep_addr))) || (device_addr == nullptr)) {
        ucs_error("gtfake: truncated or missing remote address");
        return UCS_ERR_INVALID_PARAM;
    }

    memcpy(&dev_addr, device_addr, sizeof(dev_addr));
    memcpy(&ep_addr, tl_ep_addr, sizeof(ep_addr));

    if (dev_addr.fabric != fake_fabric_of(iface->dev_index)) {
        ucs_error("gtfake: fabric %u is not reachable from fake%u",
                  dev_addr.fabric, iface->dev_index);
        return UCS_ERR_UNREACHABLE;
    }

    auto peer = fake_ifaces.find(ep_addr.iface_id);
    if ((peer == fake_ifaces.end()) || !peer->second->eps.count(ep_addr.ep_id)) {
        ucs_error("gtfake: no endpoint %u on interface %u", ep_addr.ep_id,
                  ep_addr.iface_id);
        return UCS_ERR_UNREACHABLE;
    }

    ep->connected     = true;
    ep->peer_iface_id = ep_addr.iface_id;
    ep->peer_ep_id    = ep_addr.ep_id;
    return UCS_OK;
}

/* Interface */

void fake_iface_close(uct_iface_h tl_iface)
{
    fake_iface *iface = fake_iface_of(tl_iface);

    fake_ifaces.erase(iface->id);
    uct_base_iface_cleanup(iface);
    delete iface;
}

ucs_status_t fake_iface_query(uct_iface_h tl_iface, uct_iface_attr_t *attr)
{
    fake_iface *iface = fake_iface_of(tl_iface);

    uct_base_iface_query(iface, attr);
    attr->cap.flags         = UCT_IFACE_FLAG_CONNECT_TO_EP |
                              UCT_IFACE_FLAG_CB_SYNC | UCT_IFACE_FLAG_INTER_NODE;
    attr->device_addr_len   = sizeof(fake_device_addr);
    attr->iface_addr_len    = sizeof(fake_iface_addr);
    attr->ep_addr_len       = sizeof(fake_ep_addr);
    attr->overhead          = 10e-9;
    attr->bandwidth.shared  = 1e9;
    attr->latency           = ucs_linear_func_make(1e-6, 0);
    attr->priority          = iface->priority;
    return UCS_OK;
}

ucs_status_t fake_iface_get_device_address(uct_iface_h tl_iface,
                                           uct_device_addr_t *addr)
{
    fake_iface       *iface    = fake_iface_of(tl_iface);
    fake_device_addr dev_addr = {fake_fabric_of(iface->dev_index),
                                 iface->dev_index};

    memcpy(addr, &dev_addr, sizeof(dev_addr));
    return UCS_OK;
}

ucs_status_t fake_iface_get_address(uct_iface_h tl_iface, uct_iface_addr_t *addr)
{
    fake_iface_addr iface_addr = {fake_iface_of(tl_iface)->id};

    memcpy(addr, &iface_addr, sizeof(iface_addr));
    return UCS_OK;
}

int fake_iface_is_reachable_v2(uct_iface_h tl_iface,
                               const uct_iface_is_reachable_params_t *params)
{
    fake_iface       *iface = fake_iface_of(tl_iface);
    fake_device_addr dev_addr;

    if (!uct_iface_is_reachable_params_valid(
                params, UCT_IFACE_IS_REACHABLE_FIELD_DEVICE_ADDR)) {
        return 0;
    }

    memcpy(&dev_addr, params->device_addr, sizeof(dev_addr));
    if (dev_addr.fabric != fake_fabric_of(iface->dev_index)) {
        uct_iface_fill_info_str_buf(params, "fabric %u is not fabric %u",
                                    dev_addr.fabric,
                                    fake_fabric_of(iface->dev_index));
        return 0;
    }

    if ((uct_iface_is_reachable_params_scope(params) ==
         UCT_IFACE_REACHABILITY_SCOPE_DEVICE) &&
        (dev_addr.dev_index != iface->dev_index)) {
        uct_iface_fill_info_str_buf(params, "fake%u is another device",
                                    dev_addr.dev_index);
        return 0;
    }

    return 1;
}

unsigned fake_iface_progress(uct_iface_h tl_iface)
{
    ++fake_iface_of(tl_iface)->progress_calls;
    return 1;
}

const uct_iface_ops_t fake_iface_ops = {
    .ep_create                = fake_ep_create,
    .ep_destroy               = fake_ep_destroy,
    .ep_get_address           = fake_ep_get_address,
    .ep_connect_to_ep_v2      = fake_ep_connect_to_ep_v2,
    .iface_close              = fake_iface_close,
    .iface_query              = fake_iface_query,
    .iface_get_device_address = fake_iface_get_device_address,
    .iface_get_address        = fake_iface_get_address,
    .iface_is_reachable_v2    = fake_iface_is_reachable_v2,
    .iface_progress_enable    = uct_base_iface_progress_enable,
    .iface_progress_disable   = uct_base_iface_progress_disable,
    .iface_progress           = fake_iface_progress,
    UCT_IFACE_OPS_NO_DATA_PATH
};

/* Transport */

ucs_status_t fake_query_devices(uct_md_h, uct_tl_device_resource_t **devices_p,
                                unsigned *num_devices_p)
{
    auto *devices = static_cast<uct_tl_device_resource_t*>(
            calloc(fake_num_devices, sizeof(uct_tl_device_resource_t)));

    if (devices == nullptr) {
        return UCS_ERR_NO_MEMORY;
    }

    for (unsigned i = 0; i < fake_num_devices; ++i) {
        snprintf(devices[i].name, sizeof(devices[i].name), "fake%u", i);
        devices[i].type       = UCT_DEVICE_TYPE_NET;
        devices[i].sys_device = UCS_SYS_DEVICE_ID_UNKNOWN;
    }

    *devices_p     = devices;
    *num_devices_p = fake_num_devices;
    return UCS_OK;
}

ucs_status_t fake_iface_open(uct_md_h md, uct_worker_h worker,
                             const uct_iface_params_t *params,
                             const uct_iface_config_t *tl_config,
                             uct_iface_h *iface_p)
{
    auto         *config = reinterpret_cast<const fake_iface_config*>(tl_config);
    auto         *iface  = new fake_iface();
    ucs_status_t status;

    status = uct_base_iface_init(iface, &fake_iface_ops, md, worker, params,
                                 &config->super);
    if (status != UCS_OK) {
        delete iface;
        return status;
    }

    iface->dev_index  = (unsigned)atoi(params->mode.device.dev_name + 4);
    iface->id         = fake_next_iface_id++;
    iface->priority   = (uint8_t)config->priority;
    iface->next_ep_id = 1;
    fake_ifaces[iface->id] = iface;
    *iface_p          = iface;
    return UCS_OK;
}

uct_tl_t fake_tl = {
    .name          = "gtfake",
    .query_devices = fake_query_devices,
    .iface_open    = fake_iface_open,
    .config        = {"gtest fake transport", "GTFAKE_", fake_iface_config_table,
                      sizeof(fake_iface_config)}
};
UCT_TL_REGISTER(&fake_tl, &fake_component)


/* A progress callback that counts its calls */
struct counter {
    unsigned           calls = 0;
    unsigned           work  = 1;
    uct_worker_h       worker = nullptr;
    uct_worker_cb_id_t *remove_id = nullptr; /* removed from inside the call */

    static unsigned callback(void *arg)
    {
        auto *self = static_cast<counter*>(arg);

        ++self->calls;
        if (self->remove_id != nullptr) {
            uct_worker_progress_unregister_safe(self->worker, self->remove_id);
        }
        return self->work;
    }
};

} // namespace


/* ---------------------------------------------------------------------- *
 * Fixture
 * ---------------------------------------------------------------------- */

class test_uct_core : public ucs::test_base {
protected:
    void cleanup() override
    {
        for (uct_ep_h ep : m_eps) {
            uct_ep_destroy(ep);
        }
        for (uct_iface_h iface : m_ifaces) {
            uct_iface_close(iface);
        }
        if (m_worker != nullptr) {
            uct_worker_destroy(m_worker);
        }
        if (m_md != nullptr) {
            uct_md_close(m_md);
        }
    }

    /* The fake component, found by name in the public list */
    static uct_component_h fake()
    {
        return ucs::find_component("gtfake");
    }

    static uct_md_config_t *read_md_config(const char *env_prefix = nullptr)
    {
        uct_md_config_t *config = nullptr;

        EXPECT_EQ(UCS_OK, uct_md_config_read(fake(), env_prefix, nullptr,
                                             &config));
        return config;
    }

    /* Opens the fake memory domain with its configuration from the
     * environment (or @a config) */
    void open_md(uct_md_config_t *config = nullptr)
    {
        uct_md_config_t *own = (config == nullptr) ? read_md_config() : nullptr;

        ASSERT_EQ(UCS_OK, uct_md_open(fake(), "gtfake",
                                      (config == nullptr) ? own : config,
                                      &m_md));
        uct_config_release(own);
    }

    void create_worker(ucs_thread_mode_t mode = UCS_THREAD_MODE_SINGLE)
    {
        ASSERT_EQ(UCS_OK, uct_worker_create(nullptr, mode, &m_worker));
    }

    void callbacks_change_under_progress(ucs_thread_mode_t mode);

    static uct_iface_params_t device_params(const char *dev_name,
                                            const char *tl_name = "gtfake")
    {
        uct_iface_params_t params = {};

        params.field_mask           = UCT_IFACE_PARAM_FIELD_OPEN_MODE |
                                      UCT_IFACE_PARAM_FIELD_DEVICE;
        params.open_mode            = UCT_IFACE_OPEN_MODE_DEVICE;
        params.mode.device.tl_name  = tl_name;
        params.mode.device.dev_name = dev_name;
        return params;
    }

    ucs_status_t try_open_iface(const uct_iface_params_t &params,
                                uct_iface_h *iface_p)
    {
        uct_iface_config_t *config;
        ucs_status_t       status;

        status = uct_md_iface_config_read(m_md, "gtfake", nullptr, nullptr,
                                          &config);
        if (status != UCS_OK) {
            return status;
        }

        status = uct_iface_open(m_md, m_worker, &params, config, iface_p);
        uct_config_release(config);
        if (status == UCS_OK) {
            m_ifaces.push_back(*iface_p);
        }
        return status;
    }

    /* An interface on @a dev_name, with md and worker created on demand */
    uct_iface_h open_iface(const char *dev_name)
    {
        uct_iface_h iface = nullptr;

        if (m_md == nullptr) {
            open_md();
        }
        if (m_worker == nullptr) {
            create_worker();
        }
        EXPECT_EQ(UCS_OK, try_open_iface(device_params(dev_name), &iface));
        return iface;
    }

    uct_ep_h create_ep(uct_iface_h iface)
    {
        uct_ep_params_t params = {};
        uct_ep_h        ep     = nullptr;

        params.field_mask = UCT_EP_PARAM_FIELD_IFACE;
        params.iface      = iface;
        EXPECT_EQ(UCS_OK, uct_ep_create(&params, &ep));
        if (ep != nullptr) {
            m_eps.push_back(ep);
        }
        return ep;
    }

    void destroy_ep(uct_ep_h ep)
    {
        m_eps.erase(std::find(m_eps.begin(), m_eps.end(), ep));
        uct_ep_destroy(ep);
    }

    static std::string config_value(void *config, const char *name)
    {
        char value[64] = "";

        EXPECT_EQ(UCS_OK, uct_config_get(config, name, value, sizeof(value)));
        return value;
    }

    static uct_iface_attr_t query(uct_iface_h iface)
    {
        uct_iface_attr_t attr;

        EXPECT_EQ(UCS_OK, uct_iface_query(iface, &attr));
        return attr;
    }

    static fake_device_addr device_address(uct_iface_h iface)
    {
        fake_device_addr addr = {};

        EXPECT_EQ(UCS_OK, uct_iface_get_device_address(
                iface, reinterpret_cast<uct_device_addr_t*>(&addr)));
        return addr;
    }

    static fake_ep_addr ep_address(uct_ep_h ep)
    {
        fake_ep_addr addr = {};

        EXPECT_EQ(UCS_OK, uct_ep_get_address(
                ep, reinterpret_cast<uct_ep_addr_t*>(&addr)));
        return addr;
    }

    static const uct_device_addr_t *as_dev(const fake_device_addr &addr)
    {
        return reinterpret_cast<const uct_device_addr_t*>(&addr);
    }

    static const uct_ep_addr_t *as_ep(const fake_ep_addr &addr)
    {
        return reinterpret_cast<const uct_ep_addr_t*>(&addr);
    }

    uct_md_h                 m_md     = nullptr;
    uct_worker_h             m_worker = nullptr;
    std::vector<uct_iface_h> m_ifaces;
    std::vector<uct_ep_h>    m_eps;
};


/* ---------------------------------------------------------------------- *
 * Components
 * ---------------------------------------------------------------------- */

/* The loader scans each module directory once, so the fresh empty directory
 * here is scanned whatever ran before: finding no module is silent. */
TEST_F(test_uct_core, query_components_without_modules_is_silent)
{
    char            tmpl[] = "/tmp/uct_gtest_no_modules.XXXXXX";
    std::string     saved  = (ucs_global_opts.module_dir == nullptr) ? "" :
                             ucs_global_opts.module_dir;
    uct_component_h *components;
    unsigned        num_components;

    ASSERT_NE(nullptr, mkdtemp(tmpl)) << strerror(errno);
    ASSERT_EQ(UCS_OK, ucs_config_parser_set_value(&ucs_global_opts,
                                                  ucs_global_opts_table,
                                                  "MODULE_DIR", tmpl));
    {
        ucs::scoped_log_capture capture(UCS_LOG_LEVEL_WARN);

        ASSERT_EQ(UCS_OK, uct_query_components(&components, &num_components));
        EXPECT_TRUE(capture.lines().empty()) << capture.dump();
    }
    EXPECT_EQ(UCS_OK, ucs_config_parser_set_value(&ucs_global_opts,
                                                  ucs_global_opts_table,
                                                  "MODULE_DIR", saved.c_str()));
    rmdir(tmpl);

    ASSERT_GE(num_components, 1u);
    EXPECT_NE(components + num_components,
              std::find(components, components + num_components, fake()));
    uct_release_component_list(components);
}

TEST_F(test_uct_core, component_query_all_fields)
{
    uct_component_attr_t   attr = {};
    uct_md_resource_desc_t md_resources[4];

    ASSERT_NE(nullptr, fake());

    attr.field_mask = UCT_COMPONENT_ATTR_FIELD_NAME |
                      UCT_COMPONENT_ATTR_FIELD_MD_RESOURCE_COUNT |
                      UCT_COMPONENT_ATTR_FIELD_FLAGS;
    attr.flags      = 0xdead;
    ASSERT_EQ(UCS_OK, uct_component_query(fake(), &attr));
    EXPECT_STREQ("gtfake", attr.name);
    ASSERT_EQ(1u, attr.md_resource_count);
    EXPECT_EQ(0u, attr.flags);

    attr.field_mask   = UCT_COMPONENT_ATTR_FIELD_MD_RESOURCES;
    attr.md_resources = md_resources;
    ASSERT_EQ(UCS_OK, uct_component_query(fake(), &attr));
    EXPECT_STREQ("gtfake", md_resources[0].md_name);
}

TEST_F(test_uct_core, component_query_writes_only_masked_fields)
{
    uct_component_attr_t attr;

    memset(&attr, 0x5a, sizeof(attr));
    attr.field_mask = 0;
    ASSERT_EQ(UCS_OK, uct_component_query(fake(), &attr));
    EXPECT_EQ(0x5a, (unsigned char)attr.name[0]);
    EXPECT_EQ(0x5a5a5a5au, attr.md_resource_count);

    attr.field_mask = UCT_COMPONENT_ATTR_FIELD_NAME;
    ASSERT_EQ(UCS_OK, uct_component_query(fake(), &attr));
    EXPECT_STREQ("gtfake", attr.name);
    EXPECT_EQ(0x5a5a5a5au, attr.md_resource_count);
}

TEST_F(test_uct_core, incomplete_component_is_refused)
{
    uct_component_t broken = {};

    snprintf(broken.name, sizeof(broken.name), "gtbroken");
    broken.query_md_resources = uct_component_query_single_md_resource;
    broken.md_open            = fake_md_open; /* rkey slots left empty */

    {
        ucs::scoped_log_capture capture;

        uct_component_register(&broken);
        EXPECT_EQ(1u, capture.count(UCS_LOG_LEVEL_ERROR, "gtbroken"))
                << capture.dump();
    }

    uct_component_h *components;
    unsigned        num_components;

    ASSERT_EQ(UCS_OK, uct_query_components(&components, &num_components));
    EXPECT_EQ(components + num_components,
              std::find(components, components + num_components, &broken));
    uct_release_component_list(components);
    uct_component_unregister(&broken); /* not registered: no effect */
}

TEST_F(test_uct_core, configs_are_listed_for_ucx_info)
{
    char   *buf  = nullptr;
    size_t size  = 0;
    FILE   *file = open_memstream(&buf, &size);

    ucs_config_parser_print_all_opts(file, "UCX_");
    fclose(file);
    std::string out(buf, size);
    free(buf);

    EXPECT_NE(std::string::npos, out.find("# gtest fake memory domain")) << out;
    EXPECT_NE(std::string::npos, out.find("UCX_GTFAKE_MAX_REG=1M\n")) << out;
    EXPECT_NE(std::string::npos, out.find("# gtest fake transport")) << out;
    EXPECT_NE(std::string::npos, out.find("UCX_GTFAKE_PRIORITY=7\n")) << out;
    EXPECT_NE(std::string::npos, out.find("UCX_GTFAKE_MAX_NUM_EPS=inf\n"))
            << out;
}


/* ---------------------------------------------------------------------- *
 * Configuration
 * ---------------------------------------------------------------------- */

TEST_F(test_uct_core, md_config_defaults_and_environment)
{
    uct_md_config_t *config = read_md_config();

    ASSERT_NE(nullptr, config);
    EXPECT_EQ("1M", config_value(config, "MAX_REG"));
    uct_config_release(config);

    {
        ucs::scoped_setenv env("UCX_GTFAKE_MAX_REG", "2m");

        config = read_md_config();
        EXPECT_EQ("2M", config_value(config, "MAX_REG"));
        uct_config_release(config);
    }

    {
        /* Without the component prefix, as a fallback */
        ucs::scoped_setenv env("UCX_MAX_REG", "8k");

        config = read_md_config();
        EXPECT_EQ("8K", config_value(config, "MAX_REG"));
        uct_config_release(config);
    }
}

TEST_F(test_uct_core, md_config_env_prefix)
{
    ucs::scoped_setenv plain("UCX_GTFAKE_MAX_REG", "2m");
    ucs::scoped_setenv prefixed("GTAPP_UCX_GTFAKE_MAX_REG", "3m");
    uct_md_config_t    *config;

    config = read_md_config("GTAPP");
    EXPECT_EQ("3M", config_value(config, "MAX_REG"));
    uct_config_release(config);

    config = read_md_config("");
    EXPECT_EQ("2M", config_value(config, "MAX_REG"));
    uct_config_release(config);
}

TEST_F(test_uct_core, md_config_modify_reaches_the_md)
{
    uct_md_config_t *config = read_md_config();
    uct_md_attr_t   attr;

    ASSERT_EQ(UCS_OK, uct_config_modify(config, "MAX_REG", "4k"));
    EXPECT_EQ("4K", config_value(config, "MAX_REG"));

    open_md(config);
    uct_config_release(config);
    ASSERT_EQ(UCS_OK, uct_md_query(m_md, &attr));
    EXPECT_EQ(4096u, attr.cap.max_reg);
}

TEST_F(test_uct_core, config_modify_errors)
{
    uct_md_config_t *config = read_md_config();

    /* Not a knob of this configuration: a normal answer, not logged */
    EXPECT_EQ(UCS_ERR_NO_ELEM, uct_config_modify(config, "NO_SUCH_KNOB", "1"));

    {
        ucs::scoped_log_capture capture;

        EXPECT_EQ(UCS_ERR_INVALID_PARAM,
                  uct_config_modify(config, "MAX_REG", "lots"));
        EXPECT_EQ(1u, capture.count(UCS_LOG_LEVEL_ERROR, "MAX_REG"))
                << capture.dump();
    }

    EXPECT_EQ("1M", config_value(config, "MAX_REG"));
    uct_config_release(config);
    uct_config_release(nullptr);
}

TEST_F(test_uct_core, iface_config_read_and_base_knobs)
{
    uct_iface_config_t *config;

    open_md();
    {
        ucs::scoped_setenv env("UCX_GTFAKE_MAX_NUM_EPS", "16");

        ASSERT_EQ(UCS_OK, uct_md_iface_config_read(m_md, "gtfake", nullptr,
                                                   nullptr, &config));
    }

    EXPECT_EQ("7", config_value(config, "PRIORITY"));
    EXPECT_EQ("16", config_value(config, "MAX_NUM_EPS"));
    EXPECT_EQ("128", config_value(config, "MAX_SHORT"));
    EXPECT_EQ("8K", config_value(config, "MAX_BCOPY"));
    ASSERT_EQ(UCS_OK, uct_config_modify(config, "PRIORITY", "3"));

    uct_iface_h        iface;
    uct_iface_params_t params = device_params("fake0");

    create_worker();
    ASSERT_EQ(UCS_OK, uct_iface_open(m_md, m_worker, &params, config, &iface));
    m_ifaces.push_back(iface);
    uct_config_release(config);

    uct_iface_attr_t attr = query(iface);
    EXPECT_EQ(16u, attr.max_num_eps);
    EXPECT_EQ(3u, (unsigned)attr.priority);
}

TEST_F(test_uct_core, iface_config_read_unknown_tl)
{
    uct_iface_config_t      *config = nullptr;
    ucs::scoped_log_capture capture;

    open_md();
    EXPECT_EQ(UCS_ERR_NO_DEVICE,
              uct_md_iface_config_read(m_md, "nosuchtl", nullptr, nullptr,
                                       &config));
    EXPECT_EQ(nullptr, config);
    EXPECT_EQ(1u, capture.count(UCS_LOG_LEVEL_ERROR, "nosuchtl"))
            << capture.dump();
}


/* ---------------------------------------------------------------------- *
 * Memory domain
 * ---------------------------------------------------------------------- */

TEST_F(test_uct_core, md_open_query_close)
{
    uct_md_attr_t attr;

    open_md();
    ASSERT_EQ(UCS_OK, uct_md_query(m_md, &attr));
    EXPECT_STREQ("gtfake", attr.component_name);
    EXPECT_EQ((uint64_t)(UCT_MD_FLAG_REG | UCT_MD_FLAG_NEED_RKEY),
              attr.cap.flags);
    EXPECT_EQ(1024u * 1024u, attr.cap.max_reg);
    EXPECT_EQ(UCS_BIT(UCS_MEMORY_TYPE_HOST), attr.cap.reg_mem_types);
    EXPECT_EQ(0u, attr.cap.alloc_mem_types);
    EXPECT_EQ(sizeof(fake_packed_rkey), attr.rkey_packed_size);
    EXPECT_DOUBLE_EQ(1e-6, attr.reg_cost.c);

    uct_md_close(m_md);
    m_md = nullptr;
}

TEST_F(test_uct_core, md_open_unknown_name)
{
    uct_md_config_t         *config = read_md_config();
    uct_md_h                md      = nullptr;
    ucs::scoped_log_capture capture;

    EXPECT_EQ(UCS_ERR_NO_DEVICE, uct_md_open(fake(), "nosuchmd", config, &md));
    EXPECT_EQ(nullptr, md);
    EXPECT_EQ(1u, capture.count(UCS_LOG_LEVEL_ERROR, "nosuchmd"))
            << capture.dump();
    uct_config_release(config);
}

TEST_F(test_uct_core, tl_resources)
{
    uct_tl_resource_desc_t *resources;
    unsigned               num_resources;

    open_md();
    ASSERT_EQ(UCS_OK, uct_md_query_tl_resources(m_md, &resources,
                                                &num_resources));
    ASSERT_EQ(fake_num_devices, num_resources);
    for (unsigned i = 0; i < num_resources; ++i) {
        EXPECT_STREQ("gtfake", resources[i].tl_name);
        EXPECT_EQ("fake" + std::to_string(i), resources[i].dev_name);
        EXPECT_EQ(UCT_DEVICE_TYPE_NET, resources[i].dev_type);
        EXPECT_EQ(UCS_SYS_DEVICE_ID_UNKNOWN, resources[i].sys_device);
    }
    uct_release_tl_resource_list(resources);
    EXPECT_STREQ("network", uct_device_type_names[UCT_DEVICE_TYPE_NET]);
}

TEST_F(test_uct_core, mem_reg_mkey_pack_rkey_unpack)
{
    std::vector<char> buffer(4096);
    uct_md_attr_t     md_attr;
    uct_mem_h         memh;
    uct_rkey_bundle_t rkey_ob;

    open_md();
    ASSERT_EQ(UCS_OK, uct_md_query(m_md, &md_attr));
    ASSERT_EQ(UCS_OK, uct_md_mem_reg(m_md, buffer.data(), buffer.size(),
                                     UCT_MD_MEM_ACCESS_ALL, &memh));

    std::vector<char> packed(md_attr.rkey_packed_size);
    ASSERT_EQ(UCS_OK, uct_md_mkey_pack(m_md, memh, packed.data()));
    ASSERT_EQ(UCS_OK, uct_rkey_unpack(fake(), packed.data(), &rkey_ob));

    auto *rkey = reinterpret_cast<const fake_rkey*>(rkey_ob.rkey);
    EXPECT_EQ((uintptr_t)buffer.data(), rkey->address);
    EXPECT_EQ(buffer.size(), rkey->length);
    EXPECT_EQ(rkey_ob.handle, (void*)rkey_ob.rkey);
    EXPECT_EQ((void*)fake(), rkey_ob.type);

    EXPECT_EQ(UCS_OK, uct_rkey_release(fake(), &rkey_ob));
    EXPECT_EQ(UCS_OK, uct_md_mem_dereg(m_md, memh));
}

TEST_F(test_uct_core, mem_reg_errors)
{
    char      byte;
    uct_mem_h memh = UCT_MEM_HANDLE_NULL;

    open_md();
    {
        ucs::scoped_log_capture capture;

        EXPECT_EQ(UCS_ERR_INVALID_PARAM,
                  uct_md_mem_reg(m_md, &byte, 0, UCT_MD_MEM_ACCESS_ALL, &memh));
        EXPECT_EQ(1u, capture.count(UCS_LOG_LEVEL_ERROR, "invalid region"))
                << capture.dump();

        EXPECT_EQ(UCS_ERR_EXCEEDS_LIMIT,
                  uct_md_mem_reg(m_md, &byte, 2 * 1024 * 1024,
                                 UCT_MD_MEM_ACCESS_ALL, &memh));
        EXPECT_EQ(2u, capture.lines().size()) << capture.dump();
    }

    {
        /* Hidden errors are debug lines, so nothing is captured */
        ucs::scoped_log_capture capture(UCS_LOG_LEVEL_INFO);

        EXPECT_EQ(UCS_ERR_INVALID_PARAM,
                  uct_md_mem_reg(m_md, nullptr, 8,
                                 UCT_MD_MEM_FLAG_HIDE_ERRORS, &memh));
        EXPECT_TRUE(capture.lines().empty()) << capture.dump();
    }

    EXPECT_EQ(UCT_MEM_HANDLE_NULL, memh);
}

TEST_F(test_uct_core, rkey_unpack_foreign_buffer)
{
    fake_packed_rkey        garbage = {1, 2, 3};
    uct_rkey_bundle_t       rkey_ob = {};
    ucs::scoped_log_capture capture;

    EXPECT_EQ(UCS_ERR_INVALID_PARAM,
              uct_rkey_unpack(fake(), &garbage, &rkey_ob));
    EXPECT_EQ(1u, capture.count(UCS_LOG_LEVEL_ERROR, "gtfake")) << capture.dump();
    EXPECT_EQ(0u, rkey_ob.rkey);
}


/* ---------------------------------------------------------------------- *
 * Interfaces
 * ---------------------------------------------------------------------- */

TEST_F(test_uct_core, iface_open_query_close)
{
    uct_iface_h iface = open_iface("fake1");

    ASSERT_NE(nullptr, iface);
    uct_iface_attr_t attr = query(iface);
    EXPECT_EQ(UCT_IFACE_FLAG_CONNECT_TO_EP | UCT_IFACE_FLAG_CB_SYNC |
              UCT_IFACE_FLAG_INTER_NODE, attr.cap.flags);
    EXPECT_EQ(0u, attr.cap.event_flags);
    EXPECT_EQ(sizeof(fake_device_addr), attr.device_addr_len);
    EXPECT_EQ(sizeof(fake_iface_addr), attr.iface_addr_len);
    EXPECT_EQ(sizeof(fake_ep_addr), attr.ep_addr_len);
    EXPECT_EQ(0u, attr.max_conn_priv);
    EXPECT_DOUBLE_EQ(10e-9, attr.overhead);
    EXPECT_DOUBLE_EQ(1e9, attr.bandwidth.shared);
    EXPECT_DOUBLE_EQ(1e-6, attr.latency.c);
    EXPECT_EQ(7u, (unsigned)attr.priority);
    EXPECT_EQ(SIZE_MAX, attr.max_num_eps);
    EXPECT_EQ(1u, attr.dev_num_paths);

    uct_iface_close(iface);
    m_ifaces.clear();
}

TEST_F(test_uct_core, iface_open_param_errors)
{
    uct_iface_h iface = nullptr;

    open_md();
    create_worker();

    {
        uct_iface_params_t      params = device_params("fake0");
        ucs::scoped_log_capture capture;

        params.field_mask &= ~UCT_IFACE_PARAM_FIELD_OPEN_MODE;
        EXPECT_EQ(UCS_ERR_INVALID_PARAM, try_open_iface(params, &iface));
        EXPECT_EQ(1u, capture.count(UCS_LOG_LEVEL_ERROR, "open_mode"))
                << capture.dump();
    }

    {
        uct_iface_params_t      params = device_params("fake0");
        ucs::scoped_log_capture capture;

        params.field_mask &= ~UCT_IFACE_PARAM_FIELD_DEVICE;
        EXPECT_EQ(UCS_ERR_INVALID_PARAM, try_open_iface(params, &iface));
        EXPECT_EQ(1u, capture.count(UCS_LOG_LEVEL_ERROR,
                                    "UCT_IFACE_PARAM_FIELD_DEVICE"))
                << capture.dump();
    }

    {
        uct_iface_params_t      params = device_params(nullptr);
        ucs::scoped_log_capture capture;

        EXPECT_EQ(UCS_ERR_INVALID_PARAM, try_open_iface(params, &iface));
        EXPECT_EQ(1u, capture.lines().size()) << capture.dump();
    }

    {
        /* A capability this library lacks: not an error line */
        uct_iface_params_t params = device_params("fake0");

        params.open_mode = UCT_IFACE_OPEN_MODE_SOCKADDR_SERVER;
        EXPECT_EQ(UCS_ERR_UNSUPPORTED, try_open_iface(params, &iface));
    }

    EXPECT_EQ(nullptr, iface);
    EXPECT_TRUE(m_ifaces.empty());
}

TEST_F(test_uct_core, iface_open_unknown_tl_or_device)
{
    uct_iface_config_t *config;
    uct_iface_h        iface  = nullptr;

    open_md();
    create_worker();
    ASSERT_EQ(UCS_OK, uct_md_iface_config_read(m_md, "gtfake", nullptr,
                                               nullptr, &config));
    {
        uct_iface_params_t      params = device_params("fake0", "nosuchtl");
        ucs::scoped_log_capture capture;

        EXPECT_EQ(UCS_ERR_NO_DEVICE,
                  uct_iface_open(m_md, m_worker, &params, config, &iface));
        EXPECT_EQ(1u, capture.count(UCS_LOG_LEVEL_ERROR, "nosuchtl"))
                << capture.dump();
    }

    {
        uct_iface_params_t      params = device_params("fake9");
        ucs::scoped_log_capture capture;

        EXPECT_EQ(UCS_ERR_NO_DEVICE,
                  uct_iface_open(m_md, m_worker, &params, config, &iface));
        EXPECT_EQ(1u, capture.count(UCS_LOG_LEVEL_ERROR, "fake9"))
                << capture.dump();
    }

    EXPECT_EQ(nullptr, iface);
    uct_config_release(config);
}

TEST_F(test_uct_core, iface_with_empty_op_slot_is_refused)
{
    static uct_iface_ops_t broken_ops;
    uct_tl_t               broken_tl = {};
    uct_iface_h            iface     = nullptr;


    snprintf(broken_tl.name, sizeof(broken_tl.name), "gtbroken");
    broken_tl.query_devices = fake_query_devices;
    broken_tl.iface_open    = [](uct_md_h md, uct_worker_h worker,
                                 const uct_iface_params_t *params,
                                 const uct_iface_config_t *config,
                                 uct_iface_h *iface_p) {
        ucs_status_t status = fake_iface_open(md, worker, params, config,
                                              iface_p);
        if (status == UCS_OK) {
            (*iface_p)->ops = &broken_ops;
        }
        return status;
    };
    broken_tl.config       = fake_tl.config;
    broken_tl.config.table = nullptr; /* not listed; config read by gtfake */
    uct_tl_register(&fake_component, &broken_tl);

    struct unregister_on_exit {
        uct_tl_t *tl;
        ~unregister_on_exit() { uct_tl_unregister(&fake_component, tl); }
    } guard = {&broken_tl};

    open_md();
    create_worker();
    /* a control slot, and a data path slot */
    for (int slot = 0; slot < 2; ++slot) {
        SCOPED_TRACE(slot ? "ep_get_zcopy" : "iface_get_address");
        uct_iface_config_t      *config;
        uct_iface_params_t      params = device_params("fake0", "gtbroken");
        ucs::scoped_log_capture capture;

        broken_ops = fake_iface_ops;
        if (slot == 0) {
            broken_ops.iface_get_address = nullptr;
        } else {
            broken_ops.ep_get_zcopy = nullptr;
        }

        ASSERT_EQ(UCS_OK, uct_md_iface_config_read(m_md, "gtfake", nullptr,
                                                   nullptr, &config));
        EXPECT_EQ(UCS_ERR_INVALID_PARAM,
                  uct_iface_open(m_md, m_worker, &params, config, &iface));
        EXPECT_EQ(1u, capture.count(UCS_LOG_LEVEL_ERROR, "empty operation"))
                << capture.dump();
        uct_config_release(config);

        EXPECT_EQ(nullptr, iface);
        EXPECT_TRUE(fake_ifaces.empty()); /* the refused interface was closed */
    }
}

TEST_F(test_uct_core, iface_addresses)
{
    uct_iface_h     iface0 = open_iface("fake0");
    uct_iface_h     iface2 = open_iface("fake2");
    fake_iface_addr addr0  = {};
    fake_iface_addr addr2  = {};

    EXPECT_EQ(0u, device_address(iface0).fabric);
    EXPECT_EQ(0u, device_address(iface0).dev_index);
    EXPECT_EQ(1u, device_address(iface2).fabric);
    EXPECT_EQ(2u, device_address(iface2).dev_index);

    ASSERT_EQ(UCS_OK, uct_iface_get_address(
            iface0, reinterpret_cast<uct_iface_addr_t*>(&addr0)));
    ASSERT_EQ(UCS_OK, uct_iface_get_address(
            iface2, reinterpret_cast<uct_iface_addr_t*>(&addr2)));
    EXPECT_NE(addr0.iface_id, addr2.iface_id);
}

TEST_F(test_uct_core, is_reachable_v1_and_v2)
{
    uct_iface_h      iface0 = open_iface("fake0");
    fake_device_addr dev0   = device_address(iface0);
    fake_device_addr dev1   = device_address(open_iface("fake1"));
    fake_device_addr dev2   = device_address(open_iface("fake2"));
    char             info[64];

    /* v1: same fabric or not */
    EXPECT_TRUE(uct_iface_is_reachable(iface0, as_dev(dev0), nullptr));
    EXPECT_TRUE(uct_iface_is_reachable(iface0, as_dev(dev1), nullptr));
    EXPECT_FALSE(uct_iface_is_reachable(iface0, as_dev(dev2), nullptr));

    uct_iface_is_reachable_params_t params = {};
    params.field_mask         = UCT_IFACE_IS_REACHABLE_FIELD_DEVICE_ADDR |
                                UCT_IFACE_IS_REACHABLE_FIELD_INFO_STRING |
                                UCT_IFACE_IS_REACHABLE_FIELD_INFO_STRING_LENGTH;
    params.info_string        = info;
    params.info_string_length = sizeof(info);

    /* v2, network scope (the default) */
    strcpy(info, "stale");
    params.device_addr = as_dev(dev1);
    EXPECT_TRUE(uct_iface_is_reachable_v2(iface0, &params));
    EXPECT_STREQ("", info);

    params.device_addr = as_dev(dev2);
    EXPECT_FALSE(uct_iface_is_reachable_v2(iface0, &params));
    EXPECT_STREQ("fabric 1 is not fabric 0", info);

    /* v2, device scope */
    params.field_mask |= UCT_IFACE_IS_REACHABLE_FIELD_SCOPE;
    params.scope       = UCT_IFACE_REACHABILITY_SCOPE_DEVICE;
    params.device_addr = as_dev(dev1);
    EXPECT_FALSE(uct_iface_is_reachable_v2(iface0, &params));
    EXPECT_STREQ("fake1 is another device", info);

    params.device_addr = as_dev(dev0);
    EXPECT_TRUE(uct_iface_is_reachable_v2(iface0, &params));
}

TEST_F(test_uct_core, is_reachable_v2_bad_field_mask)
{
    uct_iface_h                     iface = open_iface("fake0");
    fake_device_addr                dev   = device_address(iface);
    char                            info[16];
    uct_iface_is_reachable_params_t params = {};

    params.device_addr = as_dev(dev);
    params.info_string = info;

    {
        ucs::scoped_log_capture capture;

        /* info_string without its length */
        params.field_mask = UCT_IFACE_IS_REACHABLE_FIELD_DEVICE_ADDR |
                            UCT_IFACE_IS_REACHABLE_FIELD_INFO_STRING;
        EXPECT_FALSE(uct_iface_is_reachable_v2(iface, &params));
        EXPECT_EQ(1u, capture.count(UCS_LOG_LEVEL_ERROR, "info_string"))
                << capture.dump();
    }

    {
        ucs::scoped_log_capture capture;

        /* the device address this transport needs */
        params.field_mask = UCT_IFACE_IS_REACHABLE_FIELD_IFACE_ADDR;
        EXPECT_FALSE(uct_iface_is_reachable_v2(iface, &params));
        EXPECT_EQ(1u, capture.count(UCS_LOG_LEVEL_ERROR, "missing"))
                << capture.dump();
    }

    {
        ucs::scoped_log_capture capture;

        params.field_mask = UCT_IFACE_IS_REACHABLE_FIELD_DEVICE_ADDR |
                            UCT_IFACE_IS_REACHABLE_FIELD_SCOPE;
        params.scope      = (uct_iface_reachability_scope_t)42;
        EXPECT_FALSE(uct_iface_is_reachable_v2(iface, &params));
        EXPECT_EQ(1u, capture.count(UCS_LOG_LEVEL_ERROR, "scope"))
                << capture.dump();
    }
}


/* ---------------------------------------------------------------------- *
 * Workers
 * ---------------------------------------------------------------------- */

TEST_F(test_uct_core, worker_progress_callbacks)
{
    counter            a, b, once;
    uct_worker_cb_id_t id_a = UCS_CALLBACKQ_ID_NULL;
    uct_worker_cb_id_t id_b = UCS_CALLBACKQ_ID_NULL;
    uct_worker_cb_id_t id_o = UCS_CALLBACKQ_ID_NULL;
    uct_worker_cb_id_t saved;

    create_worker();
    EXPECT_EQ(0u, uct_worker_progress(m_worker));

    b.work = 10;
    uct_worker_progress_register_safe(m_worker, counter::callback, &a,
                                      UCS_CALLBACKQ_FLAG_FAST, &id_a);
    uct_worker_progress_register_safe(m_worker, counter::callback, &b, 0, &id_b);
    uct_worker_progress_register_safe(m_worker, counter::callback, &once,
                                      UCS_CALLBACKQ_FLAG_ONESHOT, &id_o);
    EXPECT_NE(UCS_CALLBACKQ_ID_NULL, id_a);
    EXPECT_NE(id_a, id_b);

    /* A second registration with a live id adds nothing */
    saved = id_a;
    uct_worker_progress_register_safe(m_worker, counter::callback, &a, 0, &id_a);
    EXPECT_EQ(saved, id_a);

    EXPECT_EQ(12u, uct_worker_progress(m_worker));
    EXPECT_EQ(11u, uct_worker_progress(m_worker));
    EXPECT_EQ(2u, a.calls);
    EXPECT_EQ(2u, b.calls);
    EXPECT_EQ(1u, once.calls);

    uct_worker_progress_unregister_safe(m_worker, &id_b);
    EXPECT_EQ(UCS_CALLBACKQ_ID_NULL, id_b);
    uct_worker_progress_unregister_safe(m_worker, &id_b); /* no-op */
    EXPECT_EQ(1u, uct_worker_progress(m_worker));

    uct_worker_progress_unregister_safe(m_worker, &id_a);
    EXPECT_EQ(0u, uct_worker_progress(m_worker));
    EXPECT_EQ(3u, a.calls);
    EXPECT_EQ(2u, b.calls);
}

TEST_F(test_uct_core, worker_callback_removed_during_progress)
{
    counter            first, second;
    uct_worker_cb_id_t id_first  = UCS_CALLBACKQ_ID_NULL;
    uct_worker_cb_id_t id_second = UCS_CALLBACKQ_ID_NULL;

    create_worker();
    uct_worker_progress_register_safe(m_worker, counter::callback, &first, 0,
                                      &id_first);
    uct_worker_progress_register_safe(m_worker, counter::callback, &second, 0,
                                      &id_second);

    /* The first callback removes the second, which must then not run */
    first.worker    = m_worker;
    first.remove_id = &id_second;
    EXPECT_EQ(1u, uct_worker_progress(m_worker));
    EXPECT_EQ(0u, second.calls);
    EXPECT_EQ(UCS_CALLBACKQ_ID_NULL, id_second);

    /* And now itself */
    first.remove_id = &id_first;
    EXPECT_EQ(1u, uct_worker_progress(m_worker));
    EXPECT_EQ(0u, uct_worker_progress(m_worker));
    EXPECT_EQ(2u, first.calls);
}

/* A callback registered alone is called without a walk of the list (the
 * common case: one interface's progress); what it does to the list is seen
 * as with a walk: removed from inside its call it is not called again, a
 * second callback is called beside it, a oneshot one alone runs once, and a
 * progress call nested in a lone callback runs it again */
TEST_F(test_uct_core, worker_lone_callback)
{
    counter            lone, other, once;
    uct_worker_cb_id_t id_lone  = UCS_CALLBACKQ_ID_NULL;
    uct_worker_cb_id_t id_other = UCS_CALLBACKQ_ID_NULL;
    uct_worker_cb_id_t id_once  = UCS_CALLBACKQ_ID_NULL;

    create_worker();
    uct_worker_progress_register_safe(m_worker, counter::callback, &lone, 0,
                                      &id_lone);
    for (unsigned i = 1; i <= 5; ++i) {
        EXPECT_EQ(1u, uct_worker_progress(m_worker));
        EXPECT_EQ(i, lone.calls);
    }

    /* a second one, then alone again */
    uct_worker_progress_register_safe(m_worker, counter::callback, &other, 0,
                                      &id_other);
    EXPECT_EQ(2u, uct_worker_progress(m_worker));
    EXPECT_EQ(1u, other.calls);
    uct_worker_progress_unregister_safe(m_worker, &id_other);
    EXPECT_EQ(1u, uct_worker_progress(m_worker));
    EXPECT_EQ(1u, uct_worker_progress(m_worker));
    EXPECT_EQ(1u, other.calls);
    EXPECT_EQ(8u, lone.calls);

    /* nested: the lone callback progresses the worker once more */
    {
        struct nest {
            uct_worker_h worker;
            unsigned     depth = 0, calls = 0;

            static unsigned callback(void *arg)
            {
                auto *self = static_cast<nest*>(arg);

                ++self->calls;
                if (self->depth++ == 0) {
                    uct_worker_progress(self->worker);
                }
                --self->depth;
                return 1;
            }
        } n{m_worker};
        uct_worker_cb_id_t id_nest = UCS_CALLBACKQ_ID_NULL;

        uct_worker_progress_unregister_safe(m_worker, &id_lone);
        uct_worker_progress_register_safe(m_worker, nest::callback, &n, 0,
                                          &id_nest);
        EXPECT_EQ(1u, uct_worker_progress(m_worker)); /* the walk */
        EXPECT_EQ(1u, uct_worker_progress(m_worker)); /* alone */
        EXPECT_EQ(4u, n.calls);
        uct_worker_progress_unregister_safe(m_worker, &id_nest);
        EXPECT_EQ(0u, uct_worker_progress(m_worker));
        EXPECT_EQ(4u, n.calls);
    }

    /* removed from inside its own call, alone */
    uct_worker_progress_register_safe(m_worker, counter::callback, &lone, 0,
                                      &id_lone);
    EXPECT_EQ(1u, uct_worker_progress(m_worker));
    EXPECT_EQ(1u, uct_worker_progress(m_worker));
    lone.worker    = m_worker;
    lone.remove_id = &id_lone;
    EXPECT_EQ(1u, uct_worker_progress(m_worker));
    EXPECT_EQ(UCS_CALLBACKQ_ID_NULL, id_lone);
    EXPECT_EQ(0u, uct_worker_progress(m_worker));
    EXPECT_EQ(0u, uct_worker_progress(m_worker));
    EXPECT_EQ(11u, lone.calls);

    /* a oneshot callback alone runs once */
    uct_worker_progress_register_safe(m_worker, counter::callback, &once,
                                      UCS_CALLBACKQ_FLAG_ONESHOT, &id_once);
    EXPECT_EQ(1u, uct_worker_progress(m_worker));
    EXPECT_EQ(0u, uct_worker_progress(m_worker));
    EXPECT_EQ(0u, uct_worker_progress(m_worker));
    EXPECT_EQ(1u, once.calls);
}

/* Callbacks come and go from another thread while this one progresses the
 * worker: each registered callback runs, nothing is called after the
 * list dropped it for good, and the sanitizers see no race */
void test_uct_core::callbacks_change_under_progress(ucs_thread_mode_t mode)
{
    constexpr unsigned ROUNDS = 200;
    counter steady;
    uct_worker_cb_id_t id_steady = UCS_CALLBACKQ_ID_NULL;
    std::atomic<unsigned> calls{0};
    std::atomic<bool> done{false};
    ucs_callback_t count_call = [](void *arg) -> unsigned {
        static_cast<std::atomic<unsigned>*>(arg)->fetch_add(1);
        return 1;
    };

    create_worker(mode);
    uct_worker_progress_register_safe(m_worker, counter::callback, &steady, 0,
                                      &id_steady);

    std::thread changer([&]() {
        for (unsigned i = 0; i < ROUNDS; ++i) {
            uct_worker_cb_id_t id = UCS_CALLBACKQ_ID_NULL;

            uct_worker_progress_register_safe(m_worker, count_call, &calls,
                                              (i % 2) ?
                                              UCS_CALLBACKQ_FLAG_ONESHOT : 0,
                                              &id);
            std::this_thread::yield();
            uct_worker_progress_unregister_safe(m_worker, &id);
        }
        done = true;
    });

    auto deadline = std::chrono::steady_clock::now() +
                    std::chrono::seconds(60);
    unsigned progressed = 0;
    while (!done && (std::chrono::steady_clock::now() < deadline)) {
        uct_worker_progress(m_worker);
        ++progressed;
    }
    changer.join(); /* bounded: ROUNDS registrations */
    ASSERT_TRUE(done);

    unsigned after = calls;
    EXPECT_EQ(1u, uct_worker_progress(m_worker)) << "only the steady one";
    EXPECT_EQ(after, calls.load());
    EXPECT_EQ(progressed + 1, steady.calls);
    uct_worker_progress_unregister_safe(m_worker, &id_steady);
    EXPECT_EQ(0u, uct_worker_progress(m_worker));
}

/* A worker of one thread frees what the other thread retired itself; a
 * shared one counts its walkers */
TEST_F(test_uct_core, worker_callbacks_change_under_a_progressing_thread)
{
    callbacks_change_under_progress(UCS_THREAD_MODE_SINGLE);
}

TEST_F(test_uct_core, shared_worker_callbacks_change_under_a_progressing_thread)
{
    callbacks_change_under_progress(UCS_THREAD_MODE_MULTI);
}

TEST_F(test_uct_core, worker_create_errors)
{
    uct_worker_h            worker = nullptr;
    ucs::scoped_log_capture capture;

    EXPECT_EQ(UCS_ERR_INVALID_PARAM,
              uct_worker_create(nullptr, UCS_THREAD_MODE_LAST, &worker));
    EXPECT_EQ(nullptr, worker);
    EXPECT_EQ(1u, capture.count(UCS_LOG_LEVEL_ERROR, "thread mode"))
            << capture.dump();

    ASSERT_EQ(UCS_OK, uct_worker_create(nullptr, UCS_THREAD_MODE_MULTI, &worker));
    uct_worker_destroy(worker);
}

TEST_F(test_uct_core, iface_progress_through_worker)
{
    uct_iface_h iface = open_iface("fake0");

    /* Disabled when opened */
    EXPECT_EQ(0u, uct_worker_progress(m_worker));

    uct_iface_progress_enable(iface, UCT_PROGRESS_SEND | UCT_PROGRESS_RECV);
    EXPECT_EQ(1u, uct_worker_progress(m_worker));
    EXPECT_EQ(1u, fake_iface_of(iface)->progress_calls);

    /* Enabled while either direction is */
    uct_iface_progress_disable(iface, UCT_PROGRESS_SEND);
    EXPECT_EQ(1u, uct_worker_progress(m_worker));
    uct_iface_progress_disable(iface, UCT_PROGRESS_RECV);
    EXPECT_EQ(0u, uct_worker_progress(m_worker));
    EXPECT_EQ(2u, fake_iface_of(iface)->progress_calls);

    EXPECT_EQ(1u, uct_iface_progress(iface));
    EXPECT_EQ(3u, fake_iface_of(iface)->progress_calls);

    /* Closing an enabled interface removes its callback */
    uct_iface_progress_enable(iface, UCT_PROGRESS_RECV);
    uct_iface_close(iface);
    m_ifaces.clear();
    EXPECT_EQ(0u, uct_worker_progress(m_worker));
}


/* ---------------------------------------------------------------------- *
 * Endpoints
 * ---------------------------------------------------------------------- */

TEST_F(test_uct_core, ep_connect_to_ep_v1_and_v2)
{
    uct_iface_h                   iface0 = open_iface("fake0");
    uct_iface_h                   iface1 = open_iface("fake1");
    uct_ep_h                      ep0    = create_ep(iface0);
    uct_ep_h                      ep1    = create_ep(iface1);
    fake_device_addr              dev0   = device_address(iface0);
    fake_device_addr              dev1   = device_address(iface1);
    fake_ep_addr                  addr0  = ep_address(ep0);
    fake_ep_addr                  addr1  = ep_address(ep1);
    uct_ep_connect_to_ep_params_t params = {};

    ASSERT_NE(nullptr, ep0);
    ASSERT_NE(nullptr, ep1);
    EXPECT_FALSE(static_cast<fake_ep*>(ep0)->connected);

    ASSERT_EQ(UCS_OK, uct_ep_connect_to_ep(ep0, as_dev(dev1), as_ep(addr1)));

    params.field_mask         = UCT_EP_CONNECT_TO_EP_PARAM_FIELD_DEVICE_ADDR_LENGTH |
                                UCT_EP_CONNECT_TO_EP_PARAM_FIELD_EP_ADDR_LENGTH;
    params.device_addr_length = sizeof(dev0);
    params.ep_addr_length     = sizeof(addr0);
    ASSERT_EQ(UCS_OK, uct_ep_connect_to_ep_v2(ep1, as_dev(dev0), as_ep(addr0),
                                              &params));

    EXPECT_TRUE(static_cast<fake_ep*>(ep0)->connected);
    EXPECT_EQ(addr1.iface_id, static_cast<fake_ep*>(ep0)->peer_iface_id);
    EXPECT_EQ(addr1.ep_id, static_cast<fake_ep*>(ep0)->peer_ep_id);
    EXPECT_EQ(addr0.ep_id, static_cast<fake_ep*>(ep1)->peer_ep_id);

    destroy_ep(ep0);
    destroy_ep(ep1);
    EXPECT_TRUE(fake_iface_of(iface0)->eps.empty());
}

TEST_F(test_uct_core, ep_create_errors)
{
    uct_iface_h     iface  = open_iface("fake0");
    uct_ep_params_t params = {};
    uct_ep_h        ep     = nullptr;

    {
        ucs::scoped_log_capture capture;

        params.iface = iface; /* but not in the field mask */
        EXPECT_EQ(UCS_ERR_INVALID_PARAM, uct_ep_create(&params, &ep));
        EXPECT_EQ(1u, capture.count(UCS_LOG_LEVEL_ERROR,
                                    "UCT_EP_PARAM_FIELD_IFACE"))
                << capture.dump();
    }

    /* Client-server endpoints are a capability this library lacks */
    params.field_mask = UCT_EP_PARAM_FIELD_IFACE | UCT_EP_PARAM_FIELD_CM;
    EXPECT_EQ(UCS_ERR_UNSUPPORTED, uct_ep_create(&params, &ep));

    /* The transport's own refusal: no connect-to-iface */
    fake_iface_addr iface_addr = {fake_iface_of(iface)->id};
    fake_device_addr dev       = device_address(iface);
    params.field_mask = UCT_EP_PARAM_FIELD_IFACE | UCT_EP_PARAM_FIELD_DEV_ADDR |
                        UCT_EP_PARAM_FIELD_IFACE_ADDR;
    params.dev_addr   = as_dev(dev);
    params.iface_addr = reinterpret_cast<const uct_iface_addr_t*>(&iface_addr);
    EXPECT_EQ(UCS_ERR_UNSUPPORTED, uct_ep_create(&params, &ep));

    EXPECT_EQ(nullptr, ep);
}

TEST_F(test_uct_core, ep_connect_errors)
{
    uct_iface_h                   iface0 = open_iface("fake0");
    uct_iface_h                   iface2 = open_iface("fake2");
    uct_ep_h                      ep0    = create_ep(iface0);
    uct_ep_h                      ep2    = create_ep(iface2);
    fake_device_addr              dev0   = device_address(iface0);
    fake_device_addr              dev2   = device_address(iface2);
    fake_ep_addr                  addr0  = ep_address(ep0);
    fake_ep_addr                  addr2  = ep_address(ep2);
    uct_ep_connect_to_ep_params_t params = {};

    {
        ucs::scoped_log_capture capture;

        EXPECT_EQ(UCS_ERR_INVALID_PARAM,
                  uct_ep_connect_to_ep_v2(ep0, as_dev(dev2), as_ep(addr2),
                                          nullptr));
        EXPECT_EQ(1u, capture.lines().size()) << capture.dump();
    }

    {
        ucs::scoped_log_capture capture;

        params.field_mask     = UCT_EP_CONNECT_TO_EP_PARAM_FIELD_EP_ADDR_LENGTH;
        params.ep_addr_length = 2;
        EXPECT_EQ(UCS_ERR_INVALID_PARAM,
                  uct_ep_connect_to_ep_v2(ep0, as_dev(dev0), as_ep(addr0),
                                          &params));
        EXPECT_EQ(1u, capture.count(UCS_LOG_LEVEL_ERROR, "truncated"))
                << capture.dump();
    }

    {
        ucs::scoped_log_capture capture;

        EXPECT_EQ(UCS_ERR_UNREACHABLE,
                  uct_ep_connect_to_ep(ep0, as_dev(dev2), as_ep(addr2)));
        EXPECT_EQ(1u, capture.count(UCS_LOG_LEVEL_ERROR, "fabric 1"))
                << capture.dump();
    }

    {
        ucs::scoped_log_capture capture;
        fake_ep_addr            gone = addr0;

        gone.ep_id = 999;
        EXPECT_EQ(UCS_ERR_UNREACHABLE,
                  uct_ep_connect_to_ep(ep0, as_dev(dev0), as_ep(gone)));
        EXPECT_EQ(1u, capture.count(UCS_LOG_LEVEL_ERROR, "no endpoint 999"))
                << capture.dump();
    }

    EXPECT_FALSE(static_cast<fake_ep*>(ep0)->connected);
}

TEST_F(test_uct_core, data_path_of_a_transport_without_one_is_unsupported)
{
    uct_iface_h      iface = open_iface("fake0");
    uct_ep_h         ep    = create_ep(iface);
    uct_completion_t comp  = {nullptr, 1, UCS_OK};
    uct_iov_t        iov   = {nullptr, 0, UCT_MEM_HANDLE_NULL, 0, 1};
    uint64_t         result64;
    uint32_t         result32;
    int              fd;

    ASSERT_NE(nullptr, ep);
    EXPECT_EQ(UCS_ERR_UNSUPPORTED, uct_ep_am_short(ep, 0, 0, nullptr, 0));
    EXPECT_EQ(UCS_ERR_UNSUPPORTED, uct_ep_am_short_iov(ep, 0, &iov, 1));
    EXPECT_EQ(UCS_ERR_UNSUPPORTED,
              uct_ep_am_bcopy(ep, 0, [](void*, void*) -> size_t { return 0; },
                              nullptr, 0));
    EXPECT_EQ(UCS_ERR_UNSUPPORTED,
              uct_ep_am_zcopy(ep, 0, nullptr, 0, &iov, 1, 0, &comp));
    EXPECT_EQ(UCS_ERR_UNSUPPORTED, uct_ep_put_short(ep, nullptr, 0, 0, 0));
    EXPECT_EQ(UCS_ERR_UNSUPPORTED, uct_ep_put_zcopy(ep, &iov, 1, 0, 0, &comp));
    EXPECT_EQ(UCS_ERR_UNSUPPORTED, uct_ep_get_zcopy(ep, &iov, 1, 0, 0, &comp));
    EXPECT_EQ(UCS_ERR_UNSUPPORTED,
              uct_ep_atomic_cswap64(ep, 0, 1, 0, 0, &result64, &comp));
    EXPECT_EQ(UCS_ERR_UNSUPPORTED,
              uct_ep_atomic32_fetch(ep, UCT_ATOMIC_OP_ADD, 1, &result32, 0, 0,
                                    &comp));
    EXPECT_EQ(UCS_ERR_UNSUPPORTED,
              uct_ep_atomic64_post(ep, UCT_ATOMIC_OP_XOR, 1, 0, 0));
    EXPECT_EQ(UCS_ERR_UNSUPPORTED, uct_ep_flush(ep, UCT_FLUSH_FLAG_LOCAL, &comp));
    EXPECT_EQ(UCS_ERR_UNSUPPORTED, uct_ep_fence(ep, 0));
    EXPECT_EQ(UCS_ERR_UNSUPPORTED, uct_iface_flush(iface, 0, &comp));
    EXPECT_EQ(UCS_ERR_UNSUPPORTED, uct_iface_event_fd_get(iface, &fd));
    uct_ep_pending_purge(ep, nullptr, nullptr);
    EXPECT_EQ(1, comp.count) << "nothing completed";
}

TEST_F(test_uct_core, am_handlers)
{
    struct received {
        std::vector<std::string> messages;

        static ucs_status_t cb(void *arg, void *data, size_t length, unsigned)
        {
            static_cast<received*>(arg)->messages.emplace_back(
                    static_cast<const char*>(data), length);
            return UCS_OK;
        }
    } rx;
    uct_iface_h iface = open_iface("fake0");
    auto        *base = static_cast<uct_base_iface_t*>(iface);
    char        hello[] = "hello";

    ASSERT_EQ(UCS_OK, uct_iface_set_am_handler(iface, 3, received::cb, &rx, 0));
    EXPECT_EQ(UCS_OK, uct_iface_invoke_am(base, 3, hello, 5, 0));
    ASSERT_EQ(1u, rx.messages.size());
    EXPECT_EQ("hello", rx.messages[0]);

    /* back to the default: dropped with a warning naming the id */
    ASSERT_EQ(UCS_OK, uct_iface_set_am_handler(iface, 3, nullptr, nullptr, 0));
    {
        ucs::scoped_log_capture capture(UCS_LOG_LEVEL_WARN);
        EXPECT_EQ(UCS_OK, uct_iface_invoke_am(base, 3, hello, 5, 0));
        EXPECT_EQ(1u, capture.count(UCS_LOG_LEVEL_WARN,
                                    "active message id 3 (5 bytes) dropped"))
                << capture.dump();
    }
    EXPECT_EQ(1u, rx.messages.size());

    ucs::scoped_log_capture capture(UCS_LOG_LEVEL_ERROR);
    EXPECT_EQ(UCS_ERR_INVALID_PARAM,
              uct_iface_set_am_handler(iface, UCT_AM_ID_MAX, received::cb, &rx,
                                       0));
    EXPECT_EQ(1u, capture.count(UCS_LOG_LEVEL_ERROR, "out of range (0..31)"))
            << capture.dump();
}

TEST_F(test_uct_core, release_desc_calls_its_owner)
{
    struct owner : uct_recv_desc_t {
        void *released = nullptr;
    } o;
    struct {
        uct_recv_desc_t *desc;
        char            data[16];
    } buffer;

    o.cb        = [](uct_recv_desc_t *self, void *desc) {
        static_cast<owner*>(self)->released = desc;
    };
    buffer.desc = &o;
    uct_iface_release_desc(buffer.data);
    EXPECT_EQ(static_cast<void*>(buffer.data), o.released);
}
