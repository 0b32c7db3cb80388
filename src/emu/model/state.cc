/*
 * The emulator's state and its shared plumbing: the one emu_state (created
 * on first use with the default topology, then joined to its fabric), the
 * handle registry, the memory it shares with its user, UAR pages, and the
 * QP state encodings.
 */
#include <emu/fabric/member.h>

#ifdef HAVE_VALGRIND_H
#  include <valgrind/valgrind.h>
#endif

#include <algorithm>


namespace uct_ib_emu {

namespace {

constexpr int MR_ACCESS_KNOWN     = IBV_ACCESS_LOCAL_WRITE |
                                    IBV_ACCESS_REMOTE_WRITE |
                                    IBV_ACCESS_REMOTE_READ |
                                    IBV_ACCESS_REMOTE_ATOMIC |
                                    IBV_ACCESS_MW_BIND |
                                    IBV_ACCESS_ZERO_BASED |
                                    IBV_ACCESS_ON_DEMAND |
                                    IBV_ACCESS_HUGETLB;
constexpr int MR_ACCESS_MODELLED  = ACCESS_RDMA | IBV_ACCESS_MW_BIND;

} // namespace

bool dma_buffer::alloc(size_t size, size_t align)
{
    void *ptr;

    if (posix_memalign(&ptr, align, std::max(size, align)) != 0) {
        return false;
    }

    memset(ptr, 0, std::max(size, align));
    m_ptr.reset(ptr);
    m_size = size;
    return true;
}


bool running_on_valgrind()
{
#ifdef HAVE_VALGRIND_H
    return RUNNING_ON_VALGRIND;
#else
    return false;
#endif
}


void register_handle(emu_state &s, const void *ptr, kind k, void *obj)
{
    s.handles[ptr] = handle{k, obj};
}

void unregister_handle(emu_state &s, const void *ptr)
{
    s.handles.erase(ptr);
}

void *find_handle(const emu_state &s, const void *ptr, kind k)
{
    auto it = s.handles.find(ptr);

    if ((ptr == nullptr) || (it == s.handles.end()) || (it->second.type != k)) {
        return nullptr;
    }

    return it->second.obj;
}

void remove_object(context *ctx, object *obj)
{
    ctx->objects.erase(obj);
}


unsigned ilog2_ceil(uint64_t value)
{
    unsigned log = 0;

    while ((1ull << log) < value) {
        ++log;
    }
    return log;
}

uint8_t prm_qp_state(enum ibv_qp_state state)
{
    switch (state) {
    case IBV_QPS_RESET:
        return UCT_MLX5_QP_STATE_RST;
    case IBV_QPS_INIT:
        return UCT_MLX5_QP_STATE_INIT;
    case IBV_QPS_RTR:
        return UCT_MLX5_QP_STATE_RTR;
    case IBV_QPS_RTS:
        return UCT_MLX5_QP_STATE_RTS;
    case IBV_QPS_SQD:
        return UCT_MLX5_QP_STATE_SQD;
    case IBV_QPS_SQE:
        return UCT_MLX5_QP_STATE_SQER;
    default:
        return UCT_MLX5_QP_STATE_ERR;
    }
}

enum ibv_qp_state verbs_qp_state(uint8_t prm_state)
{
    switch (prm_state) {
    case UCT_MLX5_QP_STATE_RST:
        return IBV_QPS_RESET;
    case UCT_MLX5_QP_STATE_INIT:
        return IBV_QPS_INIT;
    case UCT_MLX5_QP_STATE_RTR:
        return IBV_QPS_RTR;
    case UCT_MLX5_QP_STATE_RTS:
        return IBV_QPS_RTS;
    case UCT_MLX5_QP_STATE_SQD:
        return IBV_QPS_SQD;
    case UCT_MLX5_QP_STATE_SQER:
        return IBV_QPS_SQE;
    default:
        return IBV_QPS_ERR;
    }
}


uar_page *uar_page_alloc(context *ctx, bool nc)
{
    auto page = std::make_unique<uar_page>(ctx);

    if (!page->mem.alloc(HW_PAGE_SIZE)) {
        return nullptr;
    }

    page->page_id = ctx->dev->next_uar_page++;
    page->nc      = nc;
    ctx->dev->uar_pages[page->page_id] = page.get();
    return add_object(ctx, std::move(page));
}

void uar_page_put(uar_page *page)
{
    if (--page->refs > 0) {
        return;
    }

    page->ctx->dev->uar_pages.erase(page->page_id);
    remove_object(page->ctx, page);
}


emu_state::emu_state()
{
    if (apply_topology(*this, uct_ib_emu_default_topology()) != UCS_OK) {
        ucs_error("emu: the default topology is invalid");
    }

    /* joined, the fabric's host replaces it (or nothing, on an error) */
    member::join(*this, &fabric);

    arm_faults_from_env(*this);
}

emu_state &state()
{
    static emu_state s;
    return s;
}

int check_access_flags(int access)
{
    /* Optional flags are hints the device may ignore */
    access &= ~IBV_ACCESS_OPTIONAL_RANGE;

    if (access & ~MR_ACCESS_KNOWN) {
        return EINVAL;
    }

    if ((access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) &&
        !(access & IBV_ACCESS_LOCAL_WRITE)) {
        return EINVAL;
    }

    if (access & ~MR_ACCESS_MODELLED) {
        return EOPNOTSUPP; /* zero-based, on-demand paging, huge pages */
    }

    return 0;
}

mr *find_mr_by_key(const device *dev, uint32_t key)
{
    auto it = dev->mrs.find(key >> 8);

    return ((it != dev->mrs.end()) && (it->second->ibv.lkey == key)) ?
           it->second : nullptr;
}

mkey *find_mkey_by_key(const device *dev, uint32_t key)
{
    auto it = dev->mkeys.find(key >> 8);

    return ((it != dev->mkeys.end()) && (it->second->dv.lkey == key)) ?
           it->second : nullptr;
}

void counters_reset_locked(emu_state &s)
{
    s.ah_created        = 0;
    s.ah_destroyed      = 0;
    s.ah_reclaimed      = 0;
    s.objects_reclaimed = 0;
    s.cmds.clear();
    s.cmds_failed.clear();
    s.drops.clear();
    s.engine = engine_counters();
    dma_user_unmapped_reset();
    s.poll_wait.counters_reset();
    for (const auto &dev : s.devices) {
        dev->doorbell_errors_reported = 0;
        for (port &p : dev->ports) {
            p.counters = port_counters();
        }
    }
}

} // namespace uct_ib_emu
