/*
 * Registered buffers of one size: the bounce buffers of bcopy operations
 * and the receive buffers of an RC interface.
 *
 * Layer rc/base: may include ib/base/, uct/base/ and ucs/; never mlx5/ nor
 * rc/verbs/.
 */
#ifndef UCT_RC_BUF_POOL_H_
#define UCT_RC_BUF_POOL_H_

#include <uct/ib/base/ib_device.h>

#include <cstdint>
#include <string>
#include <vector>

/* In one slab with one memory region */
class uct_rc_buf_pool {
public:
    [[nodiscard]] static ucs_status_t
    create(const uct_ib_device &dev, uint8_t port_num, struct ibv_pd *pd,
           size_t buf_size, unsigned count, uct_rc_buf_pool **pool_p);
    ~uct_rc_buf_pool();

    uct_rc_buf_pool(const uct_rc_buf_pool&)            = delete;
    uct_rc_buf_pool &operator=(const uct_rc_buf_pool&) = delete;

    /** A free buffer, or NULL when every one is in use */
    void *get()
    {
        if (m_free.empty()) {
            return nullptr;
        }
        void *buf = m_free.back();
        m_free.pop_back();
        return buf;
    }

    void     put(void *buf) { m_free.push_back(buf); }
    uint8_t  *buf(unsigned index) const { return m_mem + index * m_buf_size; }
    /** The buffer @a ptr points into */
    unsigned index(const void *ptr) const
    {
        return (static_cast<const uint8_t*>(ptr) - m_mem) / m_buf_size;
    }
    uint32_t lkey() const { return m_mr->lkey; }
    uint32_t lkey_be() const { return m_lkey_be; }
    size_t   buf_size() const { return m_buf_size; }
    unsigned count() const { return m_count; }
    unsigned num_free() const { return m_free.size(); }

private:
    uct_rc_buf_pool() = default;

    std::string        m_dev_name;
    size_t             m_buf_size = 0;
    unsigned           m_count    = 0;
    uint8_t            *m_mem     = nullptr;
    struct ibv_mr      *m_mr      = nullptr;
    uint32_t           m_lkey_be  = 0;     /* for a WQE's data segment */
    std::vector<void*> m_free;
};

#endif
