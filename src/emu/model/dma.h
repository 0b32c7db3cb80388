/*
 * Memory the emulated device shares with its user, and the ordering of its
 * accesses to it, as a NIC's DMA has it. Includes nothing of the emulator.
 */
#ifndef UCT_IB_EMU_MODEL_DMA_H_
#define UCT_IB_EMU_MODEL_DMA_H_

#include <endian.h>
#include <signal.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>


namespace uct_ib_emu {

constexpr size_t HW_PAGE_SIZE = 4096;

/* Memory the emulated device shares with its user (rings, doorbells, UAR
 * pages): zeroed, aligned, freed with the object */
class dma_buffer {
public:
    dma_buffer() = default;
    [[nodiscard]] bool alloc(size_t size, size_t align = HW_PAGE_SIZE);

    void *get() const
    {
        return m_ptr.get();
    }

    uint8_t *bytes() const
    {
        return static_cast<uint8_t*>(m_ptr.get());
    }

    size_t size() const
    {
        return m_size;
    }

private:
    struct deleter {
        void operator()(void *ptr) const
        {
            free(ptr);
        }
    };

    std::unique_ptr<void, deleter> m_ptr;
    size_t                         m_size = 0;
};


/* A ring the device writes and its user polls in memory (a CQ's): one
 * shared-memory file mapped twice, the user's view (what the provider
 * hands out) and the device's own, so that a page of the user's view can be
 * taken away while the device goes on writing through its own
 * (model/poll_wait.h). Where no such file can be made, under valgrind and
 * in a ThreadSanitizer build, one private mapping is both views. Zeroed,
 * page aligned. */
class dma_ring {
public:
    dma_ring() = default;
    ~dma_ring();
    dma_ring(dma_ring &&other) noexcept;
    dma_ring &operator=(dma_ring &&other) noexcept;
    dma_ring(const dma_ring&)            = delete;
    dma_ring &operator=(const dma_ring&) = delete;

    [[nodiscard]] bool alloc(size_t size);

    /* the device's view */
    uint8_t *bytes() const
    {
        return m_dev;
    }

    /* the user's view */
    uint8_t *user() const
    {
        return m_user;
    }

    size_t size() const
    {
        return m_size;
    }

    /* what is mapped of each view: size() rounded up to pages */
    size_t mapped() const
    {
        return m_mapped;
    }

    bool two_views() const
    {
        return m_user != m_dev;
    }

private:
    void release();

    uint8_t *m_dev    = nullptr;
    uint8_t *m_user   = nullptr;
    size_t   m_size   = 0;
    size_t   m_mapped = 0;
};


/* Device memory ordering: the user writes a WQE, then the doorbell record
 * with release; the device loads the record with acquire before reading the
 * WQE. The device writes a CQE body, then its ownership byte with release.
 */
inline uint32_t dma_load_be32(const void *addr)
{
    return be32toh(__atomic_load_n(static_cast<const uint32_t*>(addr),
                                   __ATOMIC_ACQUIRE));
}

inline void dma_store_be32(void *addr, uint32_t value)
{
    __atomic_store_n(static_cast<uint32_t*>(addr), htobe32(value),
                     __ATOMIC_RELEASE);
}

inline void dma_store_u8(uint8_t *addr, uint8_t value)
{
    __atomic_store_n(addr, value, __ATOMIC_RELEASE);
}


/* Memory a user registered, accessed as a NIC's DMA does (dma_fault.cc).
 * Registration pins the pages: a page the user unmapped while its MR stays
 * registered (a registration cache deregisters lazily, after the free) is
 * a page nobody sees anymore, and the device's access to it goes nowhere.
 * What is written to it is lost, what is read from it reads as zeros; both
 * return false then, and the process does not fault. */
[[nodiscard]] bool dma_user_write(void *user, const void *src, size_t len);
[[nodiscard]] bool dma_user_read(void *dst, const void *user, size_t len);

/* While the model lives, the faults of those accesses are caught: SIGSEGV
 * and SIGBUS are the model's, and what the program asks for them
 * (dma_fault_program_sigaction) runs for every other fault */
void dma_fault_install();
void dma_fault_uninstall();

/* The faults caught for as long as it lives (the emulator's state holds
 * one, destroyed after everything that copies) */
struct dma_fault_scope {
    dma_fault_scope()
    {
        dma_fault_install();
    }

    ~dma_fault_scope()
    {
        dma_fault_uninstall();
    }

    dma_fault_scope(const dma_fault_scope&)            = delete;
    dma_fault_scope &operator=(const dma_fault_scope&) = delete;
};

/* The accesses that went nowhere since the last reset */
uint64_t dma_user_unmapped();
void     dma_user_unmapped_reset();

/* The program's sigaction() of SIGSEGV or SIGBUS while the model catches
 * them: recorded as the program's, the old one answered; ENOENT when the
 * model keeps no disposition of @a sig (the C library's is the one) */
int dma_fault_program_sigaction(int sig, const struct sigaction *act,
                                struct sigaction *old);

} // namespace uct_ib_emu

#endif
