/*
 * The baseline's AH cache; see baseline_ah_cache.h. Nothing else may be
 * defined in this file: the instruction probe counts what runs in it.
 */
#include "baseline_ah_cache.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace bench {

namespace {

constexpr size_t initial_slots = 16;

/* Destination GID and LID folded, then mixed (a 64-bit finaliser) */
uint64_t attr_hash(const struct ibv_ah_attr &attr)
{
    uint64_t h = attr.grh.dgid.global.subnet_prefix ^
                 attr.grh.dgid.global.interface_id ^ attr.dlid;

    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    return h;
}

bool attr_equal(const struct ibv_ah_attr &a, const struct ibv_ah_attr &b)
{
    return memcmp(&a, &b, sizeof(a)) == 0;
}

} // namespace

baseline_ah_cache::baseline_ah_cache(struct ibv_pd *pd, std::string name) :
    m_pd(pd), m_name(std::move(name)), m_slots(initial_slots)
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

std::string baseline_ah_cache::source_file()
{
    const char *slash = strrchr(__FILE__, '/');

    return (slash == nullptr) ? __FILE__ : slash + 1;
}

baseline_ah_cache::slot *baseline_ah_cache::find(const struct ibv_ah_attr &attr)
{
    const size_t mask = m_slots.size() - 1;

    for (size_t i = attr_hash(attr) & mask;; i = (i + 1) & mask) {
        slot &s = m_slots[i];
        if ((s.ah == nullptr) || attr_equal(s.attr, attr)) {
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
    struct mlx5dv_obj obj;
    struct mlx5dv_ah  dv_ah;
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
