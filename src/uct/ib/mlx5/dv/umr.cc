#include "umr.h"

#include <uct/ib/base/ib_gid.h>
#include <ucs/debug/log_def.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <new>
#include <thread>

namespace {

/* Polls between two naps while waiting for a completion */
constexpr unsigned UMR_WAIT_SPINS = 64;
constexpr auto     UMR_WAIT_NAP   = std::chrono::microseconds(20);

constexpr int      PROBE_ACCESS   = IBV_ACCESS_LOCAL_WRITE |
                                    IBV_ACCESS_REMOTE_WRITE |
                                    IBV_ACCESS_REMOTE_READ;

std::string strf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

std::string strf(const char *fmt, ...)
{
    char    buf[256];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    return buf;
}

/* "<call> failed: <errno text>" */
std::string call_failed(const char *call, int err)
{
    char buf[128];

    return strf("%s failed: %s", call, strerror_r(err, buf, sizeof(buf)));
}

} // namespace


uct_ib_mlx5_umr::uct_ib_mlx5_umr(const uct_ib_device &dev, struct ibv_pd *pd,
                                 const uct_ib_mlx5_umr_config_t *config) :
    m_dev(dev),
    m_pd(pd),
    m_timeout(config->timeout),
    m_cfg_gid_index(config->gid_index),
    m_roce_subnets(config->roce_subnets),
    m_hca_force_loopback(config->hca_force_loopback)
{
}

ucs_status_t uct_ib_mlx5_umr::create(const uct_ib_device &dev,
                                     struct ibv_pd *pd,
                                     const uct_ib_mlx5_umr_config_t *config,
                                     uct_ib_mlx5_umr **umr_p)
{
    uct_ib_mlx5_umr *umr = new (std::nothrow) uct_ib_mlx5_umr(dev, pd, config);

    if (umr == nullptr) {
        return UCS_ERR_NO_MEMORY;
    }

    ucs_debug("%s: memory export through UMR enabled, timeout %.3f s",
              dev.name(), config->timeout);
    *umr_p = umr;
    return UCS_OK;
}

uct_ib_mlx5_umr::~uct_ib_mlx5_umr()
{
    std::set<struct mlx5dv_mkey*> mkeys;

    if (m_pending) {
        ucs_debug("%s: destroying the UMR qp with an operation that never "
                  "completed", m_dev.port_name(m_port_num).c_str());
    }

    /* No wait: the QP goes first, whatever it still has queued */
    destroy_qp();
    mkeys = m_mkeys;
    for (struct mlx5dv_mkey *mkey : mkeys) {
        destroy_mkey(mkey);
    }
}

ucs_status_t uct_ib_mlx5_umr::export_mr(struct ibv_mr *mr, int access,
                                        uint32_t *rkey_p, void **handle_p)
{
    std::lock_guard<std::mutex> guard(m_lock);
    struct mlx5dv_mkey          *mkey;
    ucs_time_t                  deadline;
    std::string                 why;
    ucs_status_t                status;

    if (m_state == state::unprobed) {
        (void)probe();
    }

    if (m_state != state::ready) {
        return UCS_ERR_UNSUPPORTED;
    }

    if (mr->length > MKEY_ENTRIES * KLM_MAX_BYTES) {
        ucs_debug("%s: registration of %zu bytes is too large to export, it "
                  "keeps its MR's key", m_dev.port_name(m_port_num).c_str(), mr->length);
        return UCS_ERR_UNSUPPORTED;
    }

    status = get_mkey(&mkey, &why);
    if (status != UCS_OK) {
        disable("mkey allocation", why, UCS_LOG_LEVEL_ERROR);
        return status;
    }

    deadline = ucs_deadline_after(ucs_time_from_sec(m_timeout));
    status   = bind(mkey, mr, access, deadline, &why);
    if (status != UCS_OK) {
        disable("MR-list bind", why, UCS_LOG_LEVEL_ERROR);
        destroy_mkey(mkey); /* the QP is gone: nothing can bind it now */
        return status;
    }

    *rkey_p   = mkey->rkey;
    *handle_p = mkey;
    return UCS_OK;
}

void uct_ib_mlx5_umr::release(void *handle)
{
    std::lock_guard<std::mutex> guard(m_lock);
    auto                        *mkey = static_cast<struct mlx5dv_mkey*>(handle);
    std::string                 why;
    ucs_status_t                status;

    if (m_state != state::ready) {
        destroy_mkey(mkey); /* no UMR QP any more: revoke by destroying */
        return;
    }

    status = invalidate(mkey, ucs_deadline_after(ucs_time_from_sec(m_timeout)),
                        &why);
    if (status != UCS_OK) {
        disable("local invalidate", why, UCS_LOG_LEVEL_ERROR);
        destroy_mkey(mkey);
        return;
    }

    put_mkey(mkey);
}

/*
 * First use: bring the QP up and run one bind and one invalidate of a
 * private buffer, all within one timeout. Called with the lock held.
 */
ucs_status_t uct_ib_mlx5_umr::probe()
{
    ucs_time_t         deadline = ucs_deadline_after(ucs_time_from_sec(m_timeout));
    struct ibv_mr      *mr      = nullptr;
    struct mlx5dv_mkey *mkey    = nullptr;
    const char         *step;
    std::string        why;
    ucs_status_t       status;

    for (const uct_ib_port &port : m_dev.ports()) {
        if (port.attr.state == IBV_PORT_ACTIVE) {
            m_port_num = port.port_num;
            break;
        }
    }

    if (m_port_num == 0) {
        disable("probe", "the device has no active port", UCS_LOG_LEVEL_WARN);
        return UCS_ERR_UNSUPPORTED;
    }

    /* The same selection, with the same knobs, as the interfaces */
    status = uct_ib_device_select_gid(m_dev, m_port_num, m_pd, m_cfg_gid_index,
                                      m_roce_subnets, &m_gid_info);
    if (status != UCS_OK) {
        disable("probe", std::string("no usable GID: ") +
                ucs_status_string(status), UCS_LOG_LEVEL_WARN);
        return UCS_ERR_UNSUPPORTED;
    }
    m_have_gid = true;

    if (m_hca_force_loopback) {
        ucs_debug("%s: the HCA supports force-loopback, which a verbs UMR qp "
                  "cannot request; connecting it through %s",
                  m_dev.port_name(m_port_num).c_str(), path_str().c_str());
    }

    step   = "queue pair setup";
    status = create_qp(&why);
    if (status == UCS_OK) {
        status = connect_qp(&why);
    }

    if (status == UCS_OK) {
        step = "probe registration";
        mr   = uct_ib_glue->reg_mr(m_pd, m_probe_buf, sizeof(m_probe_buf),
                                   PROBE_ACCESS);
        if (mr == nullptr) {
            const int err = errno; /* before a string is built */
            why    = call_failed("reg_mr", err);
            status = UCS_ERR_IO_ERROR;
        }
    }

    if (status == UCS_OK) {
        step   = "probe";
        status = get_mkey(&mkey, &why);
    }

    if (status == UCS_OK) {
        status = bind(mkey, mr, PROBE_ACCESS, deadline, &why);
    }

    if (status == UCS_OK) {
        status = invalidate(mkey, deadline, &why);
    }

    if (status != UCS_OK) {
        /* tears the QP down first, so nothing can still bind the mkey */
        disable(step, why, UCS_LOG_LEVEL_WARN);
        if (mkey != nullptr) {
            destroy_mkey(mkey);
        }
    } else {
        put_mkey(mkey);
        m_state = state::ready;
        ucs_debug("%s: UMR qp 0x%x connected to itself through %s, memory "
                  "export ready", m_dev.port_name(m_port_num).c_str(),
                  m_qp->qp_num, path_str().c_str());
    }

    if (mr != nullptr) {
        int ret = uct_ib_glue->dereg_mr(mr);
        if (ret != 0) {
            errno = ret;
            ucs_warn("dereg_mr(%s, lkey 0x%x) failed: %m", m_dev.port_name(m_port_num).c_str(),
                     mr->lkey);
        }
    }

    return (status == UCS_OK) ? UCS_OK : UCS_ERR_UNSUPPORTED;
}

ucs_status_t uct_ib_mlx5_umr::create_qp(std::string *why)
{
    struct ibv_qp_init_attr_ex attr    = {};
    struct mlx5dv_qp_init_attr dv_attr = {};

    m_cq = uct_ib_glue->create_cq(m_dev.context(), 2 * QP_LEN, nullptr,
                                  nullptr, 0);
    if (m_cq == nullptr) {
        const int err = errno; /* before a string is built */
        *why = call_failed("create_cq", err);
        return UCS_ERR_IO_ERROR;
    }

    attr.qp_type             = IBV_QPT_RC;
    attr.send_cq             = m_cq;
    attr.recv_cq             = m_cq;
    attr.cap.max_send_wr     = QP_LEN;
    attr.cap.max_recv_wr     = 1;
    attr.cap.max_send_sge    = 1;
    attr.cap.max_recv_sge    = 1;
    /* room for the MR list of a pooled mkey in the UMR WQE */
    attr.cap.max_inline_data = MKEY_ENTRIES * sizeof(struct ibv_sge);
    attr.pd                  = m_pd;
    attr.comp_mask           = IBV_QP_INIT_ATTR_PD |
                               IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
    attr.send_ops_flags      = IBV_QP_EX_WITH_LOCAL_INV;
    dv_attr.comp_mask        = MLX5DV_QP_INIT_ATTR_MASK_SEND_OPS_FLAGS;
    dv_attr.send_ops_flags   = MLX5DV_QP_EX_WITH_MR_LIST;

    m_qp = uct_ib_glue->mlx5dv_create_qp(m_dev.context(), &attr, &dv_attr);
    if (m_qp == nullptr) {
        const int err = errno; /* before a string is built */
        *why = call_failed("mlx5dv_create_qp(RC, MR list and local "
                           "invalidate)", err);
        return UCS_ERR_IO_ERROR;
    }

    m_qpx = uct_ib_glue->qp_to_qp_ex(m_qp);
    if (m_qpx == nullptr) {
        *why = strf("qp 0x%x has no extended verbs view", m_qp->qp_num);
        return UCS_ERR_IO_ERROR;
    }

    m_mqpx = uct_ib_glue->mlx5dv_qp_ex_from_ibv_qp_ex(m_qpx);
    if (m_mqpx == nullptr) {
        *why = strf("qp 0x%x has no mlx5 extended view", m_qp->qp_num);
        return UCS_ERR_IO_ERROR;
    }

    return UCS_OK;
}

ucs_status_t uct_ib_mlx5_umr::modify_qp(struct ibv_qp_attr *attr, int mask,
                                        const char *to, std::string *why)
{
    int ret = uct_ib_glue->modify_qp(m_qp, attr, mask);

    if (ret != 0) {
        *why = call_failed(strf("modify_qp(qp 0x%x) to %s", m_qp->qp_num,
                                to).c_str(), ret);
        return UCS_ERR_IO_ERROR;
    }

    return UCS_OK;
}

/* RESET -> INIT -> RTR -> RTS, connected to itself */
ucs_status_t uct_ib_mlx5_umr::connect_qp(std::string *why)
{
    const uct_ib_port  *port = m_dev.port(m_port_num);
    struct ibv_qp_attr attr  = {};
    ucs_status_t       status;

    attr.qp_state        = IBV_QPS_INIT;
    attr.pkey_index      = 0;
    attr.port_num        = m_port_num;
    attr.qp_access_flags = 0;
    status = modify_qp(&attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
                              IBV_QP_ACCESS_FLAGS, "INIT", why);
    if (status != UCS_OK) {
        return status;
    }

    attr                    = {};
    attr.qp_state           = IBV_QPS_RTR;
    attr.path_mtu           = port->attr.active_mtu;
    attr.dest_qp_num        = m_qp->qp_num;
    attr.rq_psn             = 0;
    attr.max_dest_rd_atomic = 1;
    attr.min_rnr_timer      = 12;
    attr.ah_attr.port_num   = m_port_num;
    if (m_dev.is_port_roce(m_port_num)) {
        /* RoCE: through the selected GID, whose type sets the version */
        attr.ah_attr.is_global      = 1;
        attr.ah_attr.grh.dgid       = m_gid_info.gid;
        attr.ah_attr.grh.sgid_index = m_gid_info.gid_index;
        attr.ah_attr.grh.hop_limit  = 1;
    } else {
        /* InfiniBand: to its own LID */
        attr.ah_attr.dlid           = port->attr.lid;
        if (port->attr.flags & IBV_QPF_GRH_REQUIRED) {
            attr.ah_attr.is_global      = 1;
            attr.ah_attr.grh.dgid       = m_gid_info.gid;
            attr.ah_attr.grh.sgid_index = m_gid_info.gid_index;
            attr.ah_attr.grh.hop_limit  = 1;
        }
    }
    status = modify_qp(&attr, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
                              IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                              IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER,
                       "RTR", why);
    if (status != UCS_OK) {
        return status;
    }

    attr               = {};
    attr.qp_state      = IBV_QPS_RTS;
    attr.sq_psn        = 0;
    attr.max_rd_atomic = 1;
    attr.timeout       = 14;
    attr.retry_cnt     = 7;
    attr.rnr_retry     = 7;
    return modify_qp(&attr, IBV_QP_STATE | IBV_QP_SQ_PSN |
                            IBV_QP_MAX_QP_RD_ATOMIC | IBV_QP_TIMEOUT |
                            IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY,
                     "RTS", why);
}

ucs_status_t uct_ib_mlx5_umr::get_mkey(struct mlx5dv_mkey **mkey_p,
                                       std::string *why)
{
    struct mlx5dv_mkey_init_attr attr = {};
    struct mlx5dv_mkey           *mkey;

    if (!m_free.empty()) {
        *mkey_p = m_free.back();
        m_free.pop_back();
        return UCS_OK;
    }

    attr.pd           = m_pd;
    attr.create_flags = MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT;
    attr.max_entries  = MKEY_ENTRIES;
    mkey              = uct_ib_glue->mlx5dv_create_mkey(&attr);
    if (mkey == nullptr) {
        int err = errno;

        *why = call_failed("mlx5dv_create_mkey(indirect)", err);
        return (err == ENOMEM) ? UCS_ERR_NO_MEMORY : UCS_ERR_IO_ERROR;
    }

    m_mkeys.insert(mkey);
    *mkey_p = mkey;
    return UCS_OK;
}

void uct_ib_mlx5_umr::put_mkey(struct mlx5dv_mkey *mkey)
{
    m_free.push_back(mkey);
}

void uct_ib_mlx5_umr::destroy_mkey(struct mlx5dv_mkey *mkey)
{
    uint32_t key = mkey->lkey;
    int      ret;

    m_mkeys.erase(mkey);
    m_free.erase(std::remove(m_free.begin(), m_free.end(), mkey),
                 m_free.end());

    ret = uct_ib_glue->mlx5dv_destroy_mkey(mkey);
    if (ret != 0) {
        errno = ret;
        ucs_warn("mlx5dv_destroy_mkey(%s, mkey 0x%x) failed: %m",
                 m_dev.port_name(m_port_num).c_str(), key);
    }
}

ucs_status_t uct_ib_mlx5_umr::bind(struct mlx5dv_mkey *mkey,
                                   struct ibv_mr *mr, int access,
                                   ucs_time_t deadline, std::string *why)
{
    struct ibv_sge sges[MKEY_ENTRIES];
    uint64_t       addr   = reinterpret_cast<uintptr_t>(mr->addr);
    uint64_t       left   = mr->length;
    uint16_t       count  = 0;
    uint64_t       wr_id  = m_next_wr_id++;
    int            ret;

    /* The MR as a list of entries, zero-based in the mkey */
    while ((left > 0) && (count < MKEY_ENTRIES)) {
        uint64_t length = std::min(left, KLM_MAX_BYTES);

        sges[count].addr   = addr;
        sges[count].length = static_cast<uint32_t>(length);
        sges[count].lkey   = mr->lkey;
        addr              += length;
        left              -= length;
        ++count;
    }

    uct_ib_glue->wr_start(m_qpx);
    m_qpx->wr_id    = wr_id;
    m_qpx->wr_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE;
    uct_ib_glue->wr_mr_list(m_mqpx, mkey, access, count, sges);
    ret = uct_ib_glue->wr_complete(m_qpx);
    if (ret != 0) {
        *why = call_failed("ibv_wr_complete(MR list)", ret);
        return UCS_ERR_IO_ERROR;
    }

    return wait(wr_id, "MR-list bind", deadline, why);
}

ucs_status_t uct_ib_mlx5_umr::invalidate(struct mlx5dv_mkey *mkey,
                                         ucs_time_t deadline, std::string *why)
{
    uint64_t wr_id = m_next_wr_id++;
    int      ret;

    uct_ib_glue->wr_start(m_qpx);
    m_qpx->wr_id    = wr_id;
    m_qpx->wr_flags = IBV_SEND_SIGNALED;
    uct_ib_glue->wr_local_inv(m_qpx, mkey->rkey);
    ret = uct_ib_glue->wr_complete(m_qpx);
    if (ret != 0) {
        *why = call_failed("ibv_wr_complete(local invalidate)", ret);
        return UCS_ERR_IO_ERROR;
    }

    return wait(wr_id, "local invalidate", deadline, why);
}

/* Poll for the completion of wr_id until deadline; one operation at a time
 * is in flight, so anything else completing is an error of this QP */
ucs_status_t uct_ib_mlx5_umr::wait(uint64_t wr_id, const char *what,
                                   ucs_time_t deadline, std::string *why)
{
    struct ibv_wc wc[4];
    unsigned      polls = 0;
    bool          done  = false;
    int           count;

    for (;;) {
        count = uct_ib_glue->poll_cq(m_cq, 4, wc);
        if (count < 0) {
            *why = strf("poll_cq failed: returned %d", count);
            return UCS_ERR_IO_ERROR;
        }

        for (int i = 0; i < count; ++i) {
            if (wc[i].status != IBV_WC_SUCCESS) {
                *why = strf("%s completed with error: %s (status %d, vendor "
                            "syndrome 0x%x)", what,
                            uct_ib_wc_status_name(wc[i].status), wc[i].status,
                            wc[i].vendor_err);
                return UCS_ERR_IO_ERROR;
            }
            done = done || (wc[i].wr_id == wr_id);
        }

        if (done) {
            return UCS_OK;
        }

        if (ucs_deadline_expired(deadline)) {
            m_pending = true;
            *why      = strf("%s did not complete within %.3f s", what,
                             m_timeout);
            return UCS_ERR_TIMED_OUT;
        }

        if (++polls % UMR_WAIT_SPINS == 0) {
            std::this_thread::sleep_for(UMR_WAIT_NAP);
        }
    }
}

/* Log once, tear the QP down and keep export off. Lock held. */
void uct_ib_mlx5_umr::disable(const char *what, const std::string &why,
                              ucs_log_level_t level)
{
    std::vector<struct mlx5dv_mkey*> free_mkeys;

    ucs_log(level, "%s: UMR %s failed: %s (%s); memory export disabled, "
            "registrations keep their own keys",
            (m_port_num != 0) ? m_dev.port_name(m_port_num).c_str() :
                                m_dev.port_name(m_port_num).c_str(),
            what, why.c_str(), path_str().c_str());

    m_state = state::disabled;
    destroy_qp();

    free_mkeys.swap(m_free);
    for (struct mlx5dv_mkey *mkey : free_mkeys) {
        destroy_mkey(mkey);
    }
}

void uct_ib_mlx5_umr::destroy_qp()
{
    int ret;

    if (m_qp != nullptr) {
        ret = uct_ib_glue->destroy_qp(m_qp);
        if (ret != 0) {
            errno = ret;
            ucs_warn("destroy_qp(%s, qp 0x%x) failed: %m, its CQ is left too",
                     m_dev.port_name(m_port_num).c_str(), m_qp->qp_num);
            m_cq = nullptr; /* never destroy a CQ under a live QP */
        }
    }

    if (m_cq != nullptr) {
        ret = uct_ib_glue->destroy_cq(m_cq);
        if (ret != 0) {
            errno = ret;
            ucs_warn("destroy_cq(%s) failed: %m",
                     m_dev.port_name(m_port_num).c_str());
        }
    }

    m_qp   = nullptr;
    m_qpx  = nullptr;
    m_mqpx = nullptr;
    m_cq   = nullptr;
}

std::string uct_ib_mlx5_umr::path_str() const
{
    if (!m_have_gid) {
        return "no GID selected";
    }

    if (m_dev.is_port_roce(m_port_num)) {
        return strf("GID index %u, %s %s", m_gid_info.gid_index,
                    uct_ib_roce_version_str(m_gid_info.roce_info.ver),
                    uct_ib_gid_str(&m_gid_info.gid).c_str());
    }

    return strf("GID index %u, InfiniBand LID 0x%x", m_gid_info.gid_index,
                m_dev.port(m_port_num)->attr.lid);
}
