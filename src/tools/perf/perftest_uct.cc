/*
 * One side's UCT objects; see perftest_uct.h.
 */
#include "perftest_uct.h"
#include "bench_probe.h"

#include <ucs/config/global_opts.h>
#include <ucs/config/parser.h>
#include <ucs/sys/module.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>

namespace perftest {

namespace {

std::string hex(const void *p, size_t len)
{
    static const char digits[] = "0123456789abcdef";
    const uint8_t     *b       = static_cast<const uint8_t*>(p);
    std::string       s;

    for (size_t i = 0; i < len; ++i) {
        s += digits[b[i] >> 4];
        s += digits[b[i] & 15];
    }
    return s.empty() ? "-" : s;
}

bool unhex(const std::string &s, std::vector<uint8_t> *out)
{
    out->clear();
    if (s == "-") {
        return true;
    }
    if (s.size() % 2) {
        return false;
    }
    for (size_t i = 0; i < s.size(); i += 2) {
        char *end;
        std::string byte = s.substr(i, 2);
        unsigned long v  = strtoul(byte.c_str(), &end, 16);
        if (*end != '\0') {
            return false;
        }
        out->push_back(uint8_t(v));
    }
    return true;
}

ucs_status_t count_am(void *arg, void*, size_t, unsigned)
{
    uct_side *s = static_cast<uct_side*>(arg);

    s->am_received = s->am_received + 1;
    return UCS_OK;
}

ucs_status_t on_ep_error(void *arg, uct_ep_h, ucs_status_t status)
{
    uct_side *s = static_cast<uct_side*>(arg);

    if (s->ep_error == UCS_OK) {
        error("the endpoint on %s/%s failed: %s", s->tl.c_str(),
              s->dev.c_str(), ucs_status_string(status));
        s->ep_error = status;
    }
    return UCS_OK;
}

} // namespace

uct_side::~uct_side()
{
    ucs_status_t status;

    if (have_rkey) {
        (void)uct_rkey_release(ib, &rkey);
    }
    if (ep != nullptr) {
        uct_ep_destroy(ep);
    }
    if (memh != nullptr) {
        status = uct_md_mem_dereg(md, memh);
        if (status != UCS_OK) {
            error("uct_md_mem_dereg(%s) failed: %s", dev.c_str(),
                  ucs_status_string(status));
        }
    }
    free(buf);
    if (iface != nullptr) {
        uct_iface_close(iface);
    }
    if (md != nullptr) {
        uct_md_close(md);
    }
    if (worker != nullptr) {
        uct_worker_destroy(worker);
    }
}

ucs_status_t uct_side::prepare()
{
    uct_component_h *components;
    unsigned        num;
    ucs_status_t    status;
    char            dir[4096];

    if (ib != nullptr) {
        return UCS_OK;
    }

    status = uct_query_components(&components, &num);
    if (status != UCS_OK) {
        error("uct_query_components() failed: %s", ucs_status_string(status));
        return status;
    }
    for (unsigned i = 0; i < num; ++i) {
        uct_component_attr_t cattr = {};
        /* the md resources: the ib component selects its glue table
         * (UCX_IB_GLUE) then, before the counting one goes in front */
        cattr.field_mask = UCT_COMPONENT_ATTR_FIELD_NAME |
                           UCT_COMPONENT_ATTR_FIELD_MD_RESOURCE_COUNT;
        if ((uct_component_query(components[i], &cattr) == UCS_OK) &&
            (strcmp(cattr.name, "ib") == 0)) {
            ib = components[i];
        }
    }
    uct_release_component_list(components);
    if (ib == nullptr) {
        if (ucs_module_dir(dir, sizeof(dir)) != UCS_OK) {
            snprintf(dir, sizeof(dir), "(unknown)");
        }
        error("no ib component: the module directory %s%s has no "
              "libuct_ib.so", (getenv("UCX_MODULE_DIR") != nullptr) ?
              "UCX_MODULE_DIR=" : "", dir);
        return UCS_ERR_NO_DEVICE;
    }

    if (ucs_global_opts.warn_unused_env_vars) {
        ucs_config_parser_warn_unused_env_vars(UCS_DEFAULT_ENV_PREFIX);
    }
    return UCS_OK;
}

bool uct_side::emulated() const
{
    const uct_ib_glue_ops_t *ops = bench::glue_inner();

    return (ops != nullptr) && ops->emulated;
}

ucs_status_t uct_side::open(const std::string &tl_name,
                            const std::string &dev_name, size_t size)
{
    uct_md_config_t    *md_config;
    uct_iface_config_t *config;
    uct_iface_params_t params  = {};
    const std::string  md_name = dev_name.substr(0, dev_name.find(':'));
    ucs_status_t       status;

    tl  = tl_name;
    dev = dev_name;
    status = prepare();
    if (status != UCS_OK) {
        return status;
    }

    /* In front of the glue the library chose, before any device is open:
     * the instruction probe leaves out what it forwards to the device */
    status = bench::glue_install_counting();
    if (status != UCS_OK) {
        error("cannot install the counting glue table: %s",
              ucs_status_string(status));
        return status;
    }

    status = uct_worker_create(nullptr, UCS_THREAD_MODE_SINGLE, &worker);
    if (status != UCS_OK) {
        error("uct_worker_create() failed: %s", ucs_status_string(status));
        return status;
    }

    status = uct_md_config_read(ib, nullptr, nullptr, &md_config);
    if (status != UCS_OK) {
        error("uct_md_config_read(ib) failed: %s", ucs_status_string(status));
        return status;
    }
    status = uct_md_open(ib, md_name.c_str(), md_config, &md);
    uct_config_release(md_config);
    if (status != UCS_OK) {
        error("uct_md_open(%s) failed: %s", md_name.c_str(),
              ucs_status_string(status));
        md = nullptr;
        return status;
    }

    status = uct_md_iface_config_read(md, tl.c_str(), nullptr, nullptr,
                                      &config);
    if (status != UCS_OK) {
        error("uct_md_iface_config_read(%s) on %s failed: %s", tl.c_str(),
              md_name.c_str(), ucs_status_string(status));
        return status;
    }
    params.field_mask           = UCT_IFACE_PARAM_FIELD_OPEN_MODE |
                                  UCT_IFACE_PARAM_FIELD_DEVICE |
                                  UCT_IFACE_PARAM_FIELD_ERR_HANDLER |
                                  UCT_IFACE_PARAM_FIELD_ERR_HANDLER_ARG |
                                  UCT_IFACE_PARAM_FIELD_ERR_HANDLER_FLAGS;
    params.open_mode            = UCT_IFACE_OPEN_MODE_DEVICE;
    params.mode.device.tl_name  = tl.c_str();
    params.mode.device.dev_name = dev.c_str();
    params.err_handler          = on_ep_error;
    params.err_handler_arg      = this;
    params.err_handler_flags    = 0;
    status = uct_iface_open(md, worker, &params, config, &iface);
    uct_config_release(config);
    if (status != UCS_OK) {
        error("uct_iface_open(%s) on %s failed: %s", tl.c_str(), dev.c_str(),
              ucs_status_string(status));
        iface = nullptr;
        return status;
    }
    uct_iface_progress_enable(iface, UCT_PROGRESS_SEND | UCT_PROGRESS_RECV);

    status = uct_iface_query(iface, &attr);
    if (status != UCS_OK) {
        error("uct_iface_query(%s) on %s failed: %s", tl.c_str(), dev.c_str(),
              ucs_status_string(status));
        return status;
    }
    status = uct_iface_set_am_handler(iface, AM_ID, count_am, this, 0);
    if (status != UCS_OK) {
        error("uct_iface_set_am_handler(%s) on %s failed: %s", tl.c_str(),
              dev.c_str(), ucs_status_string(status));
        return status;
    }

    buf_size = (size + 63) & ~size_t(63);
    if (posix_memalign(reinterpret_cast<void**>(&buf), 64, buf_size) != 0) {
        error("cannot allocate a buffer of %zu bytes", buf_size);
        buf = nullptr;
        return UCS_ERR_NO_MEMORY;
    }
    memset(buf, 0, buf_size);
    status = uct_md_mem_reg(md, buf, buf_size, UCT_MD_MEM_ACCESS_ALL, &memh);
    if (status != UCS_OK) {
        error("uct_md_mem_reg(%zu bytes) on %s failed: %s", buf_size,
              md_name.c_str(), ucs_status_string(status));
        memh = nullptr;
        return status;
    }

    uct_ep_params_t ep_params = {};
    ep_params.field_mask = UCT_EP_PARAM_FIELD_IFACE;
    ep_params.iface      = iface;
    status = uct_ep_create(&ep_params, &ep);
    if (status != UCS_OK) {
        error("uct_ep_create(%s) on %s failed: %s", tl.c_str(), dev.c_str(),
              ucs_status_string(status));
        ep = nullptr;
    }
    return status;
}

ucs_status_t uct_side::local_address(std::string *line_p) const
{
    std::vector<uint8_t> dev_addr(attr.device_addr_len),
                         ep_addr(attr.ep_addr_len);
    uct_md_attr_t        md_attr;
    ucs_status_t         status;

    status = uct_md_query(md, &md_attr);
    if (status != UCS_OK) {
        error("uct_md_query(%s) failed: %s", dev.c_str(),
              ucs_status_string(status));
        return status;
    }
    std::vector<uint8_t> rkey_buf(md_attr.rkey_packed_size);

    if (((status = uct_iface_get_device_address(
                  iface, reinterpret_cast<uct_device_addr_t*>(
                                 dev_addr.data()))) != UCS_OK) ||
        ((status = uct_ep_get_address(ep, reinterpret_cast<uct_ep_addr_t*>(
                                              ep_addr.data()))) != UCS_OK) ||
        ((status = uct_md_mkey_pack(md, memh, rkey_buf.data())) != UCS_OK)) {
        error("the addresses of %s on %s: %s", tl.c_str(), dev.c_str(),
              ucs_status_string(status));
        return status;
    }

    *line_p = "ADDR " + hex(dev_addr.data(), dev_addr.size()) + " " +
              hex(ep_addr.data(), ep_addr.size()) + " " +
              std::to_string(reinterpret_cast<uintptr_t>(buf)) + " " +
              hex(rkey_buf.data(), rkey_buf.size());
    return UCS_OK;
}

ucs_status_t uct_side::connect(const std::string &line)
{
    std::istringstream   words(line);
    std::string          tag, dev_hex, ep_hex, rkey_hex;
    std::vector<uint8_t> dev_addr, ep_addr, rkey_buf;
    ucs_status_t         status;

    if (!(words >> tag >> dev_hex >> ep_hex >> remote_addr >> rkey_hex) ||
        (tag != "ADDR") || !unhex(dev_hex, &dev_addr) ||
        !unhex(ep_hex, &ep_addr) || !unhex(rkey_hex, &rkey_buf) ||
        (dev_addr.size() != attr.device_addr_len) ||
        (ep_addr.size() != attr.ep_addr_len)) {
        error("the peer's addresses do not fit %s (a peer of another "
              "transport?): '%.60s'", tl.c_str(), line.c_str());
        return UCS_ERR_INVALID_ADDR;
    }

    status = uct_rkey_unpack(ib, rkey_buf.data(), &rkey);
    if (status != UCS_OK) {
        error("uct_rkey_unpack(the peer's key) failed: %s",
              ucs_status_string(status));
        return status;
    }
    have_rkey = true;

    status = uct_ep_connect_to_ep(ep,
                                  reinterpret_cast<uct_device_addr_t*>(
                                          dev_addr.data()),
                                  reinterpret_cast<uct_ep_addr_t*>(
                                          ep_addr.data()));
    if (status != UCS_OK) {
        error("uct_ep_connect_to_ep(%s) on %s failed: %s", tl.c_str(),
              dev.c_str(), ucs_status_string(status));
    }
    return status;
}

ucs_status_t uct_side::flush(unsigned timeout_s)
{
    const auto deadline = std::chrono::steady_clock::now() +
                          std::chrono::seconds(timeout_s);
    uct_completion_t comp = {[](uct_completion_t*) {}, 1, UCS_OK};
    ucs_status_t     status;

    while ((status = uct_ep_flush(ep, 0, &comp)) == UCS_ERR_NO_RESOURCE) {
        progress();
        if ((ep_error != UCS_OK) ||
            (std::chrono::steady_clock::now() > deadline)) {
            break;
        }
    }
    while ((status == UCS_INPROGRESS) && (comp.count > 0) &&
           (ep_error == UCS_OK) &&
           (std::chrono::steady_clock::now() < deadline)) {
        progress();
    }
    if (ep_error != UCS_OK) {
        return ep_error; /* reported by the error handler */
    }
    if ((status == UCS_ERR_NO_RESOURCE) ||
        ((status == UCS_INPROGRESS) && (comp.count > 0))) {
        error("flush of %s on %s did not complete within %u s", tl.c_str(),
              dev.c_str(), timeout_s);
        return UCS_ERR_TIMED_OUT;
    }
    if (status == UCS_INPROGRESS) {
        status = comp.status;
    }
    if (status != UCS_OK) {
        error("flush of %s on %s failed: %s", tl.c_str(), dev.c_str(),
              ucs_status_string(status));
    }
    return status;
}

} // namespace perftest
