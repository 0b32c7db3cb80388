/*
 * An opened IB device: its context, attributes, ports and their GID tables,
 * all read once through the glue table when the device is opened.
 */
#ifndef UCT_IB_DEVICE_H_
#define UCT_IB_DEVICE_H_

#include <uct/api/tools/ib_glue.h>
#include <ucs/type/status.h>

#include <netinet/in.h>
#include <string>
#include <vector>

typedef enum {
    UCT_IB_DEVICE_ROCE_V1,
    UCT_IB_DEVICE_ROCE_V2,
    UCT_IB_DEVICE_ROCE_ANY
} uct_ib_roce_version_t;

typedef struct uct_ib_roce_version_info {
    uct_ib_roce_version_t ver;
    sa_family_t           addr_family; /* AF_INET for IPv4-mapped GIDs */
} uct_ib_roce_version_info_t;

/* A GID table entry, as the transport uses it. */
typedef struct uct_ib_device_gid_info {
    union ibv_gid              gid;
    uint8_t                    gid_index;
    uct_ib_roce_version_info_t roce_info;
} uct_ib_device_gid_info_t;

struct uct_ib_port {
    uint8_t                           port_num;
    struct ibv_port_attr              attr;
    std::vector<struct ibv_gid_entry> gids; /* non-empty entries only */
};

class uct_ib_device {
public:
    /** Open @a ibv_dev through the glue and read its ports and GIDs. */
    static ucs_status_t open(struct ibv_device *ibv_dev, bool want_devx,
                             uct_ib_device **dev_p);
    ~uct_ib_device();

    uct_ib_device(const uct_ib_device&)            = delete;
    uct_ib_device &operator=(const uct_ib_device&) = delete;

    const char             *name() const { return m_name.c_str(); }
    struct ibv_context     *context() const { return m_context; }
    const ibv_device_attr  &attr() const { return m_attr; }
    bool                   devx() const { return m_devx; }
    const std::vector<uct_ib_port> &ports() const { return m_ports; }

    /** The port numbered @a port_num (1-based), or NULL. */
    const uct_ib_port *port(uint8_t port_num) const;

    /** The entry at @a gid_index of a port, or NULL if empty. */
    const struct ibv_gid_entry *gid_entry(uint8_t port_num,
                                          unsigned gid_index) const;

    bool is_port_ib(uint8_t port_num) const;
    bool is_port_roce(uint8_t port_num) const;

    /** "mlx5_0:1" */
    std::string port_name(uint8_t port_num) const;

private:
    uct_ib_device() = default;
    ucs_status_t query_ports();

    std::string              m_name;
    struct ibv_context       *m_context = nullptr;
    ibv_device_attr          m_attr     = {};
    bool                     m_devx     = false;
    std::vector<uct_ib_port> m_ports;
};

/** The RoCE version and address family of a GID table entry. */
uct_ib_roce_version_info_t uct_ib_gid_roce_info(const struct ibv_gid_entry *entry);

/** Whether @a gid is an IPv4-mapped IPv6 address (::ffff:a.b.c.d). */
bool uct_ib_gid_is_ipv4_mapped(const union ibv_gid *gid);

/** Whether @a gid is an IPv6 link-local address (fe80::/10). */
bool uct_ib_gid_is_link_local(const union ibv_gid *gid);

/** Printable GID: the IPv4 address for IPv4-mapped GIDs, IPv6 otherwise. */
std::string uct_ib_gid_str(const union ibv_gid *gid);

const char *uct_ib_roce_version_str(uct_ib_roce_version_t ver);

/** The name of a work completion status, as verbs.h spells it. */
const char *uct_ib_wc_status_name(enum ibv_wc_status status);

/** The devices the glue lists; released with the object. */
class uct_ib_device_list {
public:
    uct_ib_device_list();
    ~uct_ib_device_list();

    uct_ib_device_list(const uct_ib_device_list&)            = delete;
    uct_ib_device_list &operator=(const uct_ib_device_list&) = delete;

    int               size() const { return m_count; }
    struct ibv_device *operator[](int i) const { return m_list[i]; }
    /** The device named @a name, or NULL. */
    struct ibv_device *find(const char *name) const;
    /** errno of a failed listing (e.g. ENOSYS: no kernel support), or 0. */
    int               error() const { return m_error; }

private:
    struct ibv_device **m_list  = nullptr;
    int               m_count   = 0;
    int               m_error   = 0;
};

#endif
