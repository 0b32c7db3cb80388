/**
 * See file LICENSE for terms.
 */

#include <common/test.h>
#include <uct/uct_test.h>

#include <uct/ib/base/ib_iface.h>
#include <uct/ib/rc/accel/rc_mlx5.h>

#include <dlfcn.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>


/*
 * The address vector of a RoCE DEVX RC QP connect comes from an address
 * handle created for that connect, not from the md's AH cache: a connect
 * after the peer's MAC moved carries the new MAC, and a failed destroy of
 * that AH is a warning, not a failed connect.
 *
 * These tests need an emulated mlx5 device whose fabric can be operated from
 * outside the process (the MAC moved, the address each QP's INIT2RTR
 * programmed read back) and whose verbs calls can be made to fail. They are
 * skipped elsewhere:
 *   UCX_IB_EMU_FABRIC, UCX_IB_EMU_HOST  the fabric and the host this process is
 *   UCX_EMU_TOOL                        the program that operates the fabric
 *                                       ("ucx_emu -f FABRIC mac|qps ...")
 * and, for the destroy test, the emulated device's library loaded in this
 * process, whose uct_ib_emu_fail_ops_c("OP:COUNT:ERRNO") makes its next
 * verbs calls fail.
 */
class test_rc_mlx5_transient_ah : public uct_test {
public:
    void init()
    {
        uct_test::init();

        m_sender = uct_test::create_entity(0);
        m_entities.push_back(m_sender);
        m_receiver = uct_test::create_entity(0);
        m_entities.push_back(m_receiver);

        uct_ib_iface_t *iface = ucs_derived_of(m_sender->iface(),
                                               uct_ib_iface_t);
        if (uct_ib_iface_port_attr(iface)->link_layer !=
            IBV_LINK_LAYER_ETHERNET) {
            UCS_TEST_SKIP_R("not RoCE: an InfiniBand connect creates no "
                            "address handle");
        }
    }

protected:
    static const char *env(const char *name)
    {
        const char *value = getenv(name);
        return ((value == NULL) || (value[0] == '\0')) ? NULL : value;
    }

    void check_emulated_fabric()
    {
        if ((env("UCX_IB_EMU_FABRIC") == NULL) ||
            (env("UCX_IB_EMU_HOST") == NULL) || (env("UCX_EMU_TOOL") == NULL)) {
            UCS_TEST_SKIP_R("needs an emulated fabric operated by "
                            "UCX_EMU_TOOL (UCX_IB_EMU_FABRIC, "
                            "UCX_IB_EMU_HOST, UCX_EMU_TOOL)");
        }
    }

    /* The device of the tested resource, without the port: "mlx5_0" */
    std::string device() const
    {
        const std::string &dev_name = GetParam()->dev_name;
        return dev_name.substr(0, dev_name.find(':'));
    }

    uint8_t port() const
    {
        return ucs_derived_of(m_sender->iface(),
                              uct_ib_iface_t)->config.port_num;
    }

    /* Run the fabric tool with the arguments, bounded in time; its output */
    std::string emu_tool(const std::string &args)
    {
        std::string cmd = std::string("timeout 30 ") + env("UCX_EMU_TOOL") +
                          " -f " + env("UCX_IB_EMU_FABRIC") + " " + args +
                          " 2>&1";
        std::string output;
        char buf[256];
        FILE *f;
        int ret;

        f = popen(cmd.c_str(), "r");
        EXPECT_TRUE(f != NULL) << cmd << ": " << strerror(errno);
        if (f == NULL) {
            return "";
        }

        while (fgets(buf, sizeof(buf), f) != NULL) {
            output += buf;
        }

        ret = pclose(f);
        EXPECT_EQ(0, ret) << cmd << " failed: " << output;
        return output;
    }

    static uint32_t qp_num(entity *e, unsigned index)
    {
        uct_rc_mlx5_ep_t *ep = ucs_derived_of(e->ep(index), uct_rc_mlx5_ep_t);
        return ep->tx.wq.super.qp_num;
    }

    static bool is_devx_qp(entity *e, unsigned index)
    {
        uct_rc_mlx5_ep_t *ep = ucs_derived_of(e->ep(index), uct_rc_mlx5_ep_t);
        return ep->tx.wq.super.type == UCT_IB_MLX5_OBJ_TYPE_DEVX;
    }

    /* The destination MAC the QP's INIT2RTR programmed, as the emulated
     * fabric recorded it ("ucx_emu qps HOST": HOST QP DEVICE VIA PEER-QP
     * DESTINATION PEER-HOST PEER-PORT MAC ...) */
    std::string init2rtr_mac(uint32_t qpn)
    {
        std::istringstream lines(emu_tool(std::string("qps ") +
                                          env("UCX_IB_EMU_HOST")));
        std::string line, host, qp, dev, via, peer_qp, dest, peer_host,
                    peer_port, mac;
        char qp_str[16];

        snprintf(qp_str, sizeof(qp_str), "0x%x", qpn);
        while (std::getline(lines, line)) {
            std::istringstream fields(line);
            if ((fields >> host >> qp >> dev >> via >> peer_qp >> dest >>
                 peer_host >> peer_port >> mac) && (qp == qp_str)) {
                return mac;
            }
        }

        ADD_FAILURE() << "the fabric recorded no INIT2RTR of QP " << qp_str
                      << " on " << env("UCX_IB_EMU_HOST");
        return "";
    }

    void move_mac(const std::string &mac)
    {
        std::ostringstream args;
        args << "mac " << env("UCX_IB_EMU_HOST") << " " << device() << ":"
             << static_cast<int>(port()) << " " << mac;
        emu_tool(args.str());
    }

    /* A put over the endpoint completes and lands, within a few seconds */
    void check_put(entity *e, unsigned index, entity *target)
    {
        mapped_buffer sendbuf(sizeof(uint64_t), 0x1234ul, *e);
        mapped_buffer recvbuf(sizeof(uint64_t), 0ul, *target);
        ucs_time_t deadline = ucs_get_time() + ucs_time_from_sec(10.0);
        ucs_status_t status;

        status = uct_ep_put_short(e->ep(index), sendbuf.ptr(), sendbuf.length(),
                                  recvbuf.addr(), recvbuf.rkey());
        ASSERT_UCS_OK(status);

        do {
            e->progress();
            target->progress();
            status = uct_ep_flush(e->ep(index), 0, NULL);
        } while (((status == UCS_INPROGRESS) || (status == UCS_ERR_NO_RESOURCE)) &&
                 (ucs_get_time() < deadline));
        ASSERT_EQ(UCS_OK, status) << "flush of the endpoint: "
                                  << ucs_status_string(status);
        recvbuf.pattern_check(0x1234ul);
    }

    /* The emulated device's next verbs calls fail as SPEC says
     * ("OP:COUNT:ERRNO"), through its library loaded in this process */
    void arm_fault(const char *spec)
    {
        typedef ucs_status_t (*fail_ops_func_t)(const char *spec);
        fail_ops_func_t fail_ops;
        void *emu;

        emu = dlopen("libucx_mlx5_emu.so", RTLD_NOW | RTLD_NOLOAD);
        if (emu == NULL) {
            UCS_TEST_SKIP_R("needs the emulated mlx5 device to fail verbs "
                            "calls (libucx_mlx5_emu.so is not loaded)");
        }

        fail_ops = (fail_ops_func_t)dlsym(emu, "uct_ib_emu_fail_ops_c");
        dlclose(emu);
        if (fail_ops == NULL) {
            UCS_TEST_SKIP_R("the emulated device cannot fail verbs calls "
                            "(no uct_ib_emu_fail_ops_c)");
        }

        ASSERT_EQ(UCS_OK, fail_ops(spec)) << spec;
    }

    entity *m_sender;
    entity *m_receiver;
};


/* Two connects to the same peer, the peer's MAC moved between them: the
 * second QP's INIT2RTR carries the new MAC, read back from the device */
UCS_TEST_P(test_rc_mlx5_transient_ah, peer_mac_moved_between_connects)
{
    check_emulated_fabric();

    m_sender->connect(0, *m_receiver, 0);
    if (!is_devx_qp(m_sender, 0)) {
        UCS_TEST_SKIP_R("the RC QP is not a DEVX object");
    }

    std::string old_mac = init2rtr_mac(qp_num(m_sender, 0));
    ASSERT_FALSE(old_mac.empty());

    /* Another locally administered MAC, of this port only */
    std::string new_mac = "02:5e" + old_mac.substr(5);
    ASSERT_NE(old_mac, new_mac);
    move_mac(new_mac);

    m_sender->connect(1, *m_receiver, 1);
    std::string mac = init2rtr_mac(qp_num(m_sender, 1));

    /* the port keeps its MAC for the tests after this one */
    move_mac(old_mac);

    EXPECT_EQ(new_mac, mac)
        << "the second connect's INIT2RTR carries " << mac << ", the peer's "
        << "MAC was " << old_mac << " and moved to " << new_mac;
}

/* The connect's AH cannot be destroyed: one warning naming the device, and
 * the endpoint works */
UCS_TEST_P(test_rc_mlx5_transient_ah, ah_destroy_failure)
{
    /* the next ibv_destroy_ah() of the process fails */
    arm_fault("destroy_ah:1:EIO");

    {
        scoped_log_handler wrap_warns(wrap_warns_logger);
        m_warnings.clear();
        m_sender->connect(0, *m_receiver, 0);
    }

    if (!is_devx_qp(m_sender, 0)) {
        UCS_TEST_SKIP_R("the RC QP is not a DEVX object");
    }

    ASSERT_EQ(1u, m_warnings.size())
        << "warnings of the connect of two endpoints, one of whose address "
        << "handles cannot be destroyed";
    EXPECT_NE(std::string::npos, m_warnings[0].find("ibv_destroy_ah"))
        << m_warnings[0];
    EXPECT_NE(std::string::npos, m_warnings[0].find(device()))
        << m_warnings[0];
    EXPECT_NE(std::string::npos, m_warnings[0].find(strerror(EIO)))
        << m_warnings[0];

    check_put(m_sender, 0, m_receiver);
}

/* The connect's AH cannot be created: the connect fails, with one error
 * naming the device, the port and the errno */
UCS_TEST_P(test_rc_mlx5_transient_ah, ah_create_failure)
{
    const uct_iface_attr_t &attr = m_receiver->iface_attr();
    std::vector<uint8_t> dev_addr(attr.device_addr_len);
    std::vector<uint8_t> ep_addr(attr.ep_addr_len);
    std::ostringstream port_name;
    ucs_status_t status;

    m_sender->create_ep(0);
    m_receiver->create_ep(0);
    if (!is_devx_qp(m_sender, 0)) {
        UCS_TEST_SKIP_R("the RC QP is not a DEVX object");
    }

    ASSERT_UCS_OK(uct_iface_get_device_address(
            m_receiver->iface(), (uct_device_addr_t*)dev_addr.data()));
    ASSERT_UCS_OK(uct_ep_get_address(m_receiver->ep(0),
                                     (uct_ep_addr_t*)ep_addr.data()));

    /* the next ibv_create_ah() of the process fails */
    arm_fault("create_ah:1:ENOMEM");
    {
        scoped_log_handler wrap_errors(wrap_errors_logger);
        m_errors.clear();
        status = uct_ep_connect_to_ep(m_sender->ep(0),
                                      (uct_device_addr_t*)dev_addr.data(),
                                      (uct_ep_addr_t*)ep_addr.data());
    }

    EXPECT_NE(UCS_OK, status) << "a connect without an address handle";
    ASSERT_EQ(1u, m_errors.size())
        << "errors of a connect whose address handle cannot be created";
    port_name << device() << ":" << static_cast<int>(port());
    EXPECT_NE(std::string::npos, m_errors[0].find(port_name.str()))
        << m_errors[0];
    EXPECT_NE(std::string::npos, m_errors[0].find(strerror(ENOMEM)))
        << m_errors[0];
}

_UCT_INSTANTIATE_TEST_CASE(test_rc_mlx5_transient_ah, rc_mlx5)
