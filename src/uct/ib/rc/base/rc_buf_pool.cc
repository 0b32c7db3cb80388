/*
 * The buffer pool (rc_buf_pool.h): one slab, one memory region through the
 * glue, a free list.
 *
 * Layer rc/base: may include ib/base/, uct/base/ and ucs/; never mlx5/ nor
 * rc/verbs/.
 */
#include "rc_buf_pool.h"

#include <ucs/debug/log_def.h>
#include <ucs/sys/math.h>

#include <cerrno>
#include <endian.h>
#include <cstdlib>
#include <memory>
#include <new>

ucs_status_t uct_rc_buf_pool::create(const uct_ib_device &dev, uint8_t port_num,
                                     struct ibv_pd *pd, size_t buf_size,
                                     unsigned count, uct_rc_buf_pool **pool_p)
{
    constexpr size_t          page = 4096;
    std::unique_ptr<uct_rc_buf_pool> pool(new (std::nothrow) uct_rc_buf_pool());
    void                      *mem;

    if (pool == nullptr) {
        return UCS_ERR_NO_MEMORY;
    }

    pool->m_dev_name = dev.port_name(port_num);
    pool->m_buf_size = ucs_align_up(buf_size, 64);
    pool->m_count    = count;
    if (posix_memalign(&mem, page,
                       ucs_align_up(pool->m_buf_size * count, page)) != 0) {
        return UCS_ERR_NO_MEMORY;
    }
    pool->m_mem = static_cast<uint8_t*>(mem);

    pool->m_mr = uct_ib_glue->reg_mr(pd, pool->m_mem, pool->m_buf_size * count,
                                     IBV_ACCESS_LOCAL_WRITE);
    if (pool->m_mr == nullptr) {
        const int err = errno;

        ucs_error("reg_mr(%s, %u buffers of %zu bytes) failed: %m",
                  pool->m_dev_name.c_str(), count, pool->m_buf_size);
        return (err == ENOMEM) ? UCS_ERR_NO_MEMORY : UCS_ERR_IO_ERROR;
    }

    pool->m_lkey_be = htobe32(pool->m_mr->lkey);

    try {
        pool->m_free.reserve(count);
    } catch (const std::bad_alloc&) {
        return UCS_ERR_NO_MEMORY;
    }
    for (unsigned i = count; i > 0; --i) {
        pool->m_free.push_back(pool->buf(i - 1));
    }

    *pool_p = pool.release();
    return UCS_OK;
}

uct_rc_buf_pool::~uct_rc_buf_pool()
{
    int ret;

    if (m_mr != nullptr) {
        ret = uct_ib_glue->dereg_mr(m_mr);
        if (ret != 0) {
            errno = ret;
            ucs_warn("dereg_mr(%s, lkey 0x%x) failed: %m", m_dev_name.c_str(),
                     m_mr->lkey);
            return; /* the device may still write the buffers: keep them */
        }
    }
    free(m_mem);
}
