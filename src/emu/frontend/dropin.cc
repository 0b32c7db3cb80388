/*
 * The model's answers to the rdma-core calls only the drop-in front-end
 * makes (dropin.h): device GUID and index, P_Keys, and the sysfs
 * attributes of the emulated devices, served from the same device and port
 * records the queries read.
 */
#include <emu/api/dropin.h>
#include <emu/firmware/devx.h>
#include <emu/frontend/frontend.h>
#include <emu/model/model.h>

#include <endian.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <string>


namespace uct_ib_emu {

namespace {

constexpr uint16_t DEFAULT_PKEY = 0xffff;

/* The character device numbers of the uverbs nodes (the kernel's
 * IB_UVERBS_MAJOR and its first minor) */
constexpr unsigned UVERBS_MAJOR      = 231;
constexpr unsigned UVERBS_BASE_MINOR = 192;

/* The PCI vendor of Mellanox devices (their IEEE OUI, VENDOR_ID, is what
 * ibv_query_device reports) */
constexpr unsigned PCI_VENDOR_ID = 0x15b3;

__be64 dropin_get_device_guid(struct ibv_device *ibdev)
{
    emu_state &s = state();
    guard g(s.lock);
    const device *dev = find<device>(s, ibdev);

    if (dev == nullptr) {
        errno = ENODEV;
        return 0;
    }
    return htobe64(dev->node_guid);
}

int dropin_get_device_index(struct ibv_device *ibdev)
{
    emu_state &s = state();
    guard g(s.lock);
    const device *dev = find<device>(s, ibdev);

    if (dev == nullptr) {
        errno = ENODEV;
        return -1;
    }
    return static_cast<int>(dev->index);
}

int dropin_query_pkey(struct ibv_context *ibctx, uint8_t port_num, int index,
                      __be16 *pkey)
{
    emu_state &s = state();
    guard g(s.lock);
    context *ctx = find_context(s, ibctx);
    const port *p;

    p = (ctx != nullptr) ? ctx->dev->get_port(port_num) : nullptr;
    if ((p == nullptr) || (index < 0) || (index >= p->pkey_tbl_len)) {
        errno = EINVAL;
        return -1;
    }

    /* Only the default full-membership P_Key is configured */
    *pkey = htobe16((index == 0) ? DEFAULT_PKEY : 0);
    return 0;
}

std::string hex_str(unsigned value)
{
    char buf[16];

    snprintf(buf, sizeof(buf), "0x%x", value);
    return buf;
}

std::string guid_str(uint64_t guid)
{
    char buf[32];

    snprintf(buf, sizeof(buf), "%04x:%04x:%04x:%04x",
             unsigned(guid >> 48) & 0xffff, unsigned(guid >> 32) & 0xffff,
             unsigned(guid >> 16) & 0xffff, unsigned(guid) & 0xffff);
    return buf;
}

const char *port_state_str(enum ibv_port_state state)
{
    switch (state) {
    case IBV_PORT_DOWN:
        return "1: DOWN";
    case IBV_PORT_INIT:
        return "2: INIT";
    case IBV_PORT_ARMED:
        return "3: ARMED";
    case IBV_PORT_ACTIVE:
        return "4: ACTIVE";
    default:
        return "0: NOP";
    }
}

/* ports/<n>/<attr> of a device; false when there is no such file */
bool port_attr(const device &dev, const std::string &rel, std::string *value)
{
    unsigned num, index;
    const gid_slot *slot;
    const port *p;
    char attr[64];
    int len = 0;

    if ((sscanf(rel.c_str(), "ports/%u/%63[a-z_/]%n", &num, attr, &len) < 2) ||
        ((p = dev.get_port(num)) == nullptr)) {
        return false;
    }

    std::string name(attr);
    if (static_cast<size_t>(len) == rel.size()) {
        if (name == "link_layer") {
            *value = p->is_eth() ? "Ethernet" : "InfiniBand";
        } else if (name == "state") {
            *value = port_state_str(p->state);
        } else if (name == "lid") {
            *value = hex_str(p->lid);
        } else if (name == "sm_lid") {
            *value = hex_str(p->sm_lid);
        } else {
            return false;
        }
        return true;
    }

    if (((name != "gid_attrs/types/") && (name != "gid_attrs/ndevs/")) ||
        (sscanf(rel.c_str() + len, "%u", &index) != 1) ||
        (rel.compare(len, std::string::npos, std::to_string(index)) != 0) ||
        (index >= p->gids.size())) {
        return false;
    }

    /* As the kernel: an empty slot or a port without netdevs has no
     * readable attribute */
    slot = p->gid(index);
    if ((slot == nullptr) || !p->is_eth()) {
        return false;
    }

    if (name == "gid_attrs/types/") {
        *value = (slot->type == IBV_GID_TYPE_ROCE_V2) ? "RoCE v2" :
                                                         "IB/RoCE v1";
    } else {
        *value = "emu" + std::to_string(p->ifindex);
    }
    return true;
}

/* The CPUs "near" the device, as the kernel prints a cpumask: 32-bit hex
 * groups, most significant first, separated by commas. The emulated device
 * has no PCI locality: every configured CPU is near. */
std::string local_cpus_str()
{
    long ncpus = std::max(1L, sysconf(_SC_NPROCESSORS_CONF));
    std::string mask;
    char group[16];

    for (long base = ((ncpus - 1) / 32) * 32; base >= 0; base -= 32) {
        long bits = std::min(32L, ncpus - base);
        uint32_t value = (bits == 32) ? 0xffffffffu : ((1u << bits) - 1);

        snprintf(group, sizeof(group), "%08x", value);
        mask += (mask.empty() ? "" : ",") + std::string(group);
    }
    return mask;
}

/* The PCI function of a device: bus 0xe0 of domain 0, one slot per device
 * (where real machines have none), and its sysfs directory, which
 * /sys/class/infiniband/<dev>/device links to */
std::string pci_slot(const device &dev)
{
    char buf[32];

    snprintf(buf, sizeof(buf), "0000:e0:%02x.0", dev.index & 0x1f);
    return buf;
}

std::string pci_dir(const device &dev)
{
    return "/sys/devices/pci0000:e0/" + pci_slot(dev);
}

/* device/<attr>: the PCI function behind the device */
bool pci_attr(const device &dev, const std::string &name, std::string *value)
{
    char buf[128];

    if (name == "uevent") {
        snprintf(buf, sizeof(buf),
                 "DRIVER=mlx5_core\nPCI_ID=%04X:%04X\nPCI_SLOT_NAME=%s",
                 PCI_VENDOR_ID, dev.vendor_part_id, pci_slot(dev).c_str());
        *value = buf;
    } else if (name == "vendor") {
        *value = hex_str(PCI_VENDOR_ID);
    } else if (name == "device") {
        *value = hex_str(dev.vendor_part_id);
    } else if (name == "numa_node") {
        *value = "-1"; /* as a device on a machine without NUMA */
    } else if (name == "local_cpus") {
        *value = local_cpus_str();
    } else {
        return false;
    }
    return true;
}

bool device_attr(const device &dev, const std::string &rel, std::string *value)
{
    static const std::string pci_dir = "device/";

    if (rel == "board_id") {
        *value = "MT_" + std::to_string(10000000000ull + dev.vendor_part_id)
                                 .substr(1);
    } else if (rel == "fw_ver") {
        *value = dev.fw_ver;
    } else if (rel == "hca_type") {
        *value = "MT" + std::to_string(dev.vendor_part_id);
    } else if (rel == "hw_rev") {
        *value = hex_str(dev.hw_ver);
    } else if ((rel == "node_guid") || (rel == "sys_image_guid")) {
        *value = guid_str(dev.node_guid);
    } else if (rel == "node_type") {
        *value = "1: CA";
    } else if (rel == "node_desc") {
        *value = "emulated " + dev.name;
    } else if (rel.compare(0, pci_dir.size(), pci_dir) == 0) {
        return pci_attr(dev, rel.substr(pci_dir.size()), value);
    } else {
        return port_attr(dev, rel, value);
    }
    return true;
}

bool verbs_attr(const device &dev, const std::string &rel, std::string *value)
{
    if (rel == "ibdev") {
        *value = dev.name;
    } else if (rel == "abi_version") {
        *value = "1";
    } else if (rel == "dev") {
        *value = std::to_string(UVERBS_MAJOR) + ":" +
                 std::to_string(UVERBS_BASE_MINOR + dev.index);
    } else {
        return false;
    }
    return true;
}

struct ibv_cq_ex *dropin_create_cq(struct ibv_context *ibctx,
                                   struct ibv_cq_init_attr_ex *attr,
                                   struct mlx5dv_cq_init_attr *mlx5_attr)
{
    static constexpr uint64_t known_mlx5_mask =
            MLX5DV_CQ_INIT_ATTR_MASK_COMPRESSED_CQE |
            MLX5DV_CQ_INIT_ATTR_MASK_FLAGS |
            MLX5DV_CQ_INIT_ATTR_MASK_CQE_SIZE;
    uint32_t cqe_size = CQE_SIZE;
    bool ignore_overrun;
    struct ibv_cq_ex *cq_ex;
    struct ibv_cq *ibcq;

    if ((attr == nullptr) || (attr->comp_mask & ~uint32_t(
                                      IBV_CQ_INIT_ATTR_MASK_FLAGS))) {
        return fail_ptr<struct ibv_cq_ex>(EINVAL);
    }
    if (attr->wc_flags & ~uint64_t(IBV_WC_STANDARD_FLAGS |
                                   IBV_WC_EX_WITH_COMPLETION_TIMESTAMP)) {
        /* no real-time clock, flow tags, VLANs or tag matching */
        return fail_ptr<struct ibv_cq_ex>(EOPNOTSUPP);
    }
    if ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) &&
        (attr->flags & ~uint32_t(IBV_CREATE_CQ_ATTR_SINGLE_THREADED |
                                 IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN))) {
        return fail_ptr<struct ibv_cq_ex>(EOPNOTSUPP);
    }
    ignore_overrun = (attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) &&
                     (attr->flags & IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN);

    if (mlx5_attr != nullptr) {
        if (mlx5_attr->comp_mask & ~known_mlx5_mask) {
            return fail_ptr<struct ibv_cq_ex>(EINVAL);
        }
        if ((mlx5_attr->comp_mask & MLX5DV_CQ_INIT_ATTR_MASK_COMPRESSED_CQE) ||
            ((mlx5_attr->comp_mask & MLX5DV_CQ_INIT_ATTR_MASK_FLAGS) &&
             (mlx5_attr->flags != 0))) {
            /* the device reports no CQE compression and no padding */
            return fail_ptr<struct ibv_cq_ex>(EOPNOTSUPP);
        }
        if (mlx5_attr->comp_mask & MLX5DV_CQ_INIT_ATTR_MASK_CQE_SIZE) {
            cqe_size = mlx5_attr->cqe_size;
            if ((cqe_size != 64) && (cqe_size != 128)) {
                return fail_ptr<struct ibv_cq_ex>(EINVAL);
            }
        }
    }

    ibcq = cq_create(ibctx, static_cast<int>(attr->cqe), attr->cq_context,
                     attr->channel, static_cast<int>(attr->comp_vector),
                     cqe_size, ignore_overrun);
    if (ibcq == nullptr) {
        return nullptr;
    }

    /* The model's CQ begins with the ibv_cq_ex (model.h) */
    cq_ex = reinterpret_cast<struct ibv_cq_ex*>(ibcq);
    with_object<cq>(ibcq, [&](emu_state &, cq *c) {
        c->wc_flags = attr->wc_flags;
        return 0;
    });
    cq_ex_init_ops(cq_ex);
    return cq_ex;
}

ssize_t dropin_sysfs_read(const char *dir, const char *file, char *buf,
                          size_t size, int *handled)
{
    emu_state &s = state();
    guard g(s.lock);
    std::string value;
    bool found = false;
    size_t len = 0;

    *handled = 0;
    for (const auto &dev : s.devices) {
        if (strcmp(dir, dev->ibdev.ibdev_path) == 0) {
            found = device_attr(*dev, file, &value);
        } else if (strcmp(dir, dev->ibdev.dev_path) == 0) {
            found = verbs_attr(*dev, file, &value);
        } else if (pci_dir(*dev) == dir) {
            found = pci_attr(*dev, file, &value);
        } else {
            continue;
        }

        *handled = 1;
        break;
    }

    if (!found) {
        errno = ENOENT;
        return -1;
    }

    if (size > 0) {
        len = std::min(value.size(), size - 1);
        memcpy(buf, value.data(), len);
        buf[len] = '\0';
    }
    return static_cast<ssize_t>(len); /* what was read, as read(2) */
}

} // namespace
} // namespace uct_ib_emu


extern "C" const uct_ib_emu_dropin_ops_t uct_ib_emu_dropin_ops = {
    .version          = UCT_IB_EMU_DROPIN_VERSION,
    .get_device_guid  = uct_ib_emu::dropin_get_device_guid,
    .get_device_index = uct_ib_emu::dropin_get_device_index,
    .query_pkey       = uct_ib_emu::dropin_query_pkey,
    .sysfs_read       = uct_ib_emu::dropin_sysfs_read,
    .create_cq        = uct_ib_emu::dropin_create_cq,
    .devx_create_event_channel  = uct_ib_emu::devx_create_event_channel,
    .devx_destroy_event_channel = uct_ib_emu::devx_destroy_event_channel,
    .devx_subscribe_devx_event  = uct_ib_emu::devx_subscribe_devx_event,
    .devx_get_event             = uct_ib_emu::devx_get_event,
    .devx_qp_modify             = uct_ib_emu::emu_devx_qp_modify,
    .devx_qp_query              = uct_ib_emu::emu_devx_qp_query,
    .modify_srq                 = uct_ib_emu::emu_modify_srq,
    .query_srq                  = uct_ib_emu::emu_query_srq,
    .resize_cq                  = uct_ib_emu::emu_resize_cq,
    .rereg_mr                   = uct_ib_emu::emu_rereg_mr
};

extern "C" int uct_ib_emu_dropin_sigaction(int sig, const struct sigaction *act,
                                           struct sigaction *old)
{
    return uct_ib_emu::dma_fault_program_sigaction(sig, act, old);
}
