/* The baseline's AH cache; see baseline_ah_cache.h. */
#include "baseline_ah_cache.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <utility>

namespace bench {

constexpr size_t baseline_initial_slots = 16;

baseline_ah_cache::baseline_ah_cache(struct ibv_pd *pd, std::string name) :
    m_pd(pd), m_name(std::move(name)), m_slots(baseline_initial_slots)
{
}

baseline_ah_cache::~baseline_ah_cache()
{
    for (slot &s : m_slots) {
        if (s.ah == nullptr) {
            continue;
        }
        int ret = uct_ib_glue->destroy_ah(s.ah);
        if (ret != 0) {
            fprintf(stderr, "destroy_ah(%s) failed: %s\n", m_name.c_str(),
                    strerror(ret));
        }
    }
}

bool baseline_ah_cache::is_own_function(const std::string &name)
{
    /* its members, and what the compiler made of std:: code for its types */
    return name.find("bench::baseline_ah_cache") != std::string::npos;
}

/* The destination GID and LID folded, then mixed (a 64-bit finaliser) */
uint64_t baseline_ah_cache::hash(const struct ibv_ah_attr &attr)
{
    uint64_t h = attr.grh.dgid.global.subnet_prefix ^
                 attr.grh.dgid.global.interface_id ^ attr.dlid;

    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    return h;
}

/* Every field, so that padding never decides */
bool baseline_ah_cache::equal(const struct ibv_ah_attr &a,
                              const struct ibv_ah_attr &b)
{
    return (a.grh.dgid.global.subnet_prefix ==
            b.grh.dgid.global.subnet_prefix) &&
           (a.grh.dgid.global.interface_id == b.grh.dgid.global.interface_id) &&
           (a.grh.flow_label == b.grh.flow_label) &&
           (a.grh.sgid_index == b.grh.sgid_index) &&
           (a.grh.hop_limit == b.grh.hop_limit) &&
           (a.grh.traffic_class == b.grh.traffic_class) &&
           (a.dlid == b.dlid) && (a.sl == b.sl) &&
           (a.src_path_bits == b.src_path_bits) &&
           (a.static_rate == b.static_rate) && (a.is_global == b.is_global) &&
           (a.port_num == b.port_num);
}

baseline_ah_cache::slot *baseline_ah_cache::find(const struct ibv_ah_attr &attr)
{
    const size_t mask = m_slots.size() - 1;

    for (size_t i = hash(attr) & mask;; i = (i + 1) & mask) {
        slot &s = m_slots[i];
        if ((s.ah == nullptr) || equal(s.attr, attr)) {
            return &s; /* the table is never full: see insert() */
        }
    }
}

void baseline_ah_cache::grow()
{
    std::vector<slot> old(m_slots.size() * 2);

    old.swap(m_slots);
    m_count = 0;
    for (const slot &s : old) {
        if (s.ah != nullptr) {
            *find(s.attr) = s;
            ++m_count;
        }
    }
}

void baseline_ah_cache::insert(const struct ibv_ah_attr &attr, struct ibv_ah *ah)
{
    if (2 * (m_count + 1) > m_slots.size()) {
        grow(); /* keep at most half of the slots used */
    }
    *find(attr) = {attr, ah};
    ++m_count;
}

bool baseline_ah_cache::get_av(const struct ibv_ah_attr &attr,
                               struct mlx5_wqe_av *av)
{
    struct mlx5dv_obj obj; /* the provider reads only the member asked for */
    struct mlx5dv_ah  dv_ah = {};
    struct ibv_ah     *ah;
    int               ret;

    slot *s = find(attr);
    if (s->ah != nullptr) {
        ah = s->ah;
    } else {
        struct ibv_ah_attr create_attr = attr;

        ah = uct_ib_glue->create_ah(m_pd, &create_attr);
        if (ah == nullptr) {
            fprintf(stderr, "create_ah(%s) failed: %s\n", m_name.c_str(),
                    strerror(errno));
            return false;
        }
        insert(attr, ah);
    }

    obj.ah.in  = ah;
    obj.ah.out = &dv_ah;
    ret        = uct_ib_glue->mlx5dv_init_obj(&obj, MLX5DV_OBJ_AH);
    if (ret != 0) {
        fprintf(stderr, "mlx5dv_init_obj(%s, AH) failed: %s\n",
                m_name.c_str(), strerror(ret));
        return false;
    }
    *av = *dv_ah.av;
    return true;
}

} // namespace bench
