/*
 * A ring the device writes and its user polls (model/dma.h): one memfd,
 * mapped twice.
 */
#include <emu/model/model.h>

#include <sys/mman.h>
#include <unistd.h>


namespace uct_ib_emu {

dma_ring::~dma_ring()
{
    release();
}

dma_ring::dma_ring(dma_ring &&other) noexcept :
    m_dev(other.m_dev), m_user(other.m_user), m_size(other.m_size),
    m_mapped(other.m_mapped)
{
    other.m_dev    = nullptr;
    other.m_user   = nullptr;
    other.m_size   = 0;
    other.m_mapped = 0;
}

dma_ring &dma_ring::operator=(dma_ring &&other) noexcept
{
    if (this != &other) {
        release();
        std::swap(m_dev, other.m_dev);
        std::swap(m_user, other.m_user);
        std::swap(m_size, other.m_size);
        std::swap(m_mapped, other.m_mapped);
    }
    return *this;
}

void dma_ring::release()
{
    if (m_user != m_dev) {
        munmap(m_user, m_mapped);
    }
    if (m_dev != nullptr) {
        munmap(m_dev, m_mapped);
    }
    m_dev    = nullptr;
    m_user   = nullptr;
    m_size   = 0;
    m_mapped = 0;
}

bool dma_ring::alloc(size_t size)
{
    const size_t mapped = (std::max<size_t>(size, 1) + HW_PAGE_SIZE - 1) &
                          ~(HW_PAGE_SIZE - 1);
    void *dev, *user;
    int fd;

    release();
    /* valgrind and ThreadSanitizer would see two addresses for every byte
     * of the ring (TSan would lose the order a CQE's owner byte gives to
     * what the CQE announces), and the user's view is never taken away
     * there */
#ifdef UCS_ENABLE_TSAN
    fd = -1;
#else
    fd = running_on_valgrind() ? -1 :
         memfd_create("uct-ib-emu-cq", MFD_CLOEXEC);
#endif
    if ((fd >= 0) && (ftruncate(fd, static_cast<off_t>(mapped)) == 0)) {
        dev  = mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
                    0);
        /* every page of the user's view mapped now: a page it has not
         * touched yet would fault to the poll waiter once the ring is
         * watched */
        user = (dev == MAP_FAILED) ? MAP_FAILED :
               mmap(nullptr, mapped, PROT_READ | PROT_WRITE,
                    MAP_SHARED | MAP_POPULATE, fd, 0);
        close(fd); /* the mappings keep the file */
        if (user == MAP_FAILED) {
            if (dev != MAP_FAILED) {
                munmap(dev, mapped);
            }
            return false;
        }
    } else {
        if (fd >= 0) {
            close(fd);
        }
        dev  = mmap(nullptr, mapped, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (dev == MAP_FAILED) {
            return false;
        }
        user = dev;
    }

    m_dev    = static_cast<uint8_t*>(dev);
    m_user   = static_cast<uint8_t*>(user);
    m_size   = size;
    m_mapped = mapped;
    return true;
}

} // namespace uct_ib_emu
