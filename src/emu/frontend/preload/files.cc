/*
 * The file calls a program makes about RDMA devices outside the verbs API,
 * answered for the emulated devices (docs/architecture.md, section 9). UCX,
 * for one, stat()s and access()es /dev/infiniband/<uverbs> and reads sysfs
 * attributes (/sys/class/infiniband/<dev>/device/vendor, .../local_cpus,
 * ports/<n>/gid_attrs/...) with open() and fopen() before it uses a device.
 *
 * Only three trees are looked at: /dev/infiniband/, /sys/class/infiniband/
 * and /sys/class/infiniband_verbs/. A path there that names an emulated
 * device is answered from the model's records (the same answers
 * ibv_read_sysfs_file gives): an attribute reads as a read-only regular
 * file, the uverbs node as a read/write character device with the kernel's
 * numbers, and anything else under an emulated device does not exist.
 * Every other path, and every path of a device the model does not know, is
 * passed to the C library unchanged (dlsym(RTLD_NEXT)), without loading the
 * model. The links of a device's class entry, its "device" and that
 * function's "driver" (mlx5_core) read back with readlink. Directories of
 * emulated devices are not modelled (not listed, not stat()ed): no program
 * we run lists them, so there is no device/net.
 */
#undef _FORTIFY_SOURCE /* the fortified inlines of open() would clash */

#include <emu/frontend/preload/preload.h>

#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <string>


#define PRELOAD_EXPORT extern "C" __attribute__((visibility("default")))

/* Not declared by glibc's headers since 2.33, still exported (and called
 * by programs built before) */
extern "C" int __xstat(int ver, const char *path, struct stat *buf);
extern "C" int __xstat64(int ver, const char *path, struct stat64 *buf);
extern "C" int __open_2(const char *path, int flags);
extern "C" int __open64_2(const char *path, int flags);
extern "C" char *__realpath_chk(const char *path, char *resolved,
                                size_t resolved_len);
extern "C" ssize_t __readlink_chk(const char *path, char *buf, size_t size,
                                  size_t buf_size);

namespace {

constexpr const char *DEV_DIR        = "/dev/infiniband/";
constexpr const char *SYSFS_IB_DIR   = "/sys/class/infiniband/";
constexpr const char *SYSFS_UV_DIR   = "/sys/class/infiniband_verbs/";
/* The PCI bus of the emulated devices' functions (emu/dropin.cc) */
constexpr const char *SYSFS_PCI_DIR  = "/sys/devices/pci0000:e0/";
constexpr const char *PCI_SLOT_KEY   = "PCI_SLOT_NAME=";

/* What sysfs reports for an attribute file: a page, whatever it holds */
constexpr off_t  SYSFS_FILE_SIZE     = 4096;
constexpr size_t SYSFS_MAX_CONTENT   = 8192;

enum class entry_type {
    ABSENT,      /* under an emulated device, but no such file */
    ATTRIBUTE,   /* a sysfs attribute: content */
    CHAR_DEVICE  /* the uverbs node: rdev */
};

struct entry {
    entry_type  type = entry_type::ABSENT;
    std::string content;
    dev_t       rdev = 0;
};

bool has_prefix(const char *path, const char *prefix)
{
    return strncmp(path, prefix, strlen(prefix)) == 0;
}

/* The model's attribute <dir>/<file>; false when dir is no emulated
 * device's */
bool model_attr(const uct_ib_emu_dropin_ops_t *dropin, const std::string &dir,
                const std::string &file, entry *e)
{
    char buf[SYSFS_MAX_CONTENT];
    int handled = 0;
    ssize_t len;

    len = dropin->sysfs_read(dir.c_str(), file.c_str(), buf, sizeof(buf),
                             &handled);
    if (!handled) {
        return false;
    }

    if (len < 0) {
        e->type = entry_type::ABSENT;
    } else {
        e->type    = entry_type::ATTRIBUTE;
        e->content = std::string(buf, len) + "\n"; /* as the kernel prints */
    }
    return true;
}

/* The uverbs node /dev/infiniband/<name>: its numbers from the model's
 * /sys/class/infiniband_verbs/<name>/dev */
bool model_char_device(const uct_ib_emu_dropin_ops_t *dropin,
                       const std::string &name, entry *e)
{
    unsigned major_num, minor_num;

    if (!model_attr(dropin, SYSFS_UV_DIR + name, "dev", e)) {
        return false;
    }

    if ((e->type == entry_type::ATTRIBUTE) &&
        (sscanf(e->content.c_str(), "%u:%u", &major_num, &minor_num) == 2)) {
        e->type = entry_type::CHAR_DEVICE;
        e->rdev = makedev(major_num, minor_num);
    } else {
        e->type = entry_type::ABSENT;
    }
    return true;
}

/* The model's answer for path; false: not the model's, ask the C library */
bool lookup(const char *path, entry *e)
{
    const uct_ib_emu_dropin_ops_t *dropin;
    const char *class_dir, *rest, *slash;
    int saved_errno;
    bool found;

    if (path == nullptr) {
        return false;
    }

    if (has_prefix(path, DEV_DIR)) {
        class_dir = DEV_DIR;
    } else if (has_prefix(path, SYSFS_IB_DIR)) {
        class_dir = SYSFS_IB_DIR;
    } else if (has_prefix(path, SYSFS_UV_DIR)) {
        class_dir = SYSFS_UV_DIR;
    } else if (has_prefix(path, SYSFS_PCI_DIR)) {
        class_dir = SYSFS_PCI_DIR;
    } else {
        return false;
    }

    rest  = path + strlen(class_dir);
    slash = strchr(rest, '/');
    if (class_dir == DEV_DIR) {
        if ((slash != nullptr) || (*rest == '\0')) {
            return false;
        }
    } else if ((slash == nullptr) || (slash == rest) || (slash[1] == '\0')) {
        return false; /* a class or device directory */
    }

    /* A failed lookup leaves errno as it was: the call is then the C
     * library's */
    saved_errno = errno;
    dropin      = preload_dropin_ops();
    if (dropin == nullptr) {
        found = false;
    } else if (class_dir == DEV_DIR) {
        found = model_char_device(dropin, rest, e);
    } else {
        found = model_attr(dropin, std::string(path, slash - path), slash + 1,
                           e);
    }
    errno = saved_errno;
    return found;
}

/* The C library's definition of a function this file interposes */
template<typename Func> Func next_func(const char *name)
{
    return reinterpret_cast<Func>(dlsym(RTLD_NEXT, name));
}

#define NEXT(_name) \
    ({ \
        static const auto _next = next_func<decltype(&::_name)>(#_name); \
        _next; \
    })

#define CALL_NEXT(_name, ...) \
    do { \
        auto _func = NEXT(_name); \
        if (_func == nullptr) { \
            errno = ENOSYS; \
            return -1; \
        } \
        return _func(__VA_ARGS__); \
    } while (0)

int fail(int err)
{
    errno = err;
    return -1;
}

template<typename Stat> int entry_stat(const entry &e, Stat *buf)
{
    if (e.type == entry_type::ABSENT) {
        return fail(ENOENT);
    }

    memset(buf, 0, sizeof(*buf));
    buf->st_nlink   = 1;
    buf->st_blksize = SYSFS_FILE_SIZE;
    if (e.type == entry_type::CHAR_DEVICE) {
        buf->st_mode = S_IFCHR | 0666;
        buf->st_rdev = e.rdev;
    } else {
        buf->st_mode = S_IFREG | 0444;
        buf->st_size = SYSFS_FILE_SIZE;
    }
    return 0;
}

int entry_access(const entry &e, int mode)
{
    if (e.type == entry_type::ABSENT) {
        return fail(ENOENT);
    }
    if ((mode & X_OK) ||
        ((mode & W_OK) && (e.type == entry_type::ATTRIBUTE))) {
        return fail(EACCES);
    }
    return 0;
}

/* An open file description holding an attribute's content, positioned at
 * its start */
int entry_open(const entry &e, int flags)
{
    size_t done = 0;
    ssize_t ret;
    int fd;

    if (e.type == entry_type::ABSENT) {
        return fail(ENOENT);
    } else if (e.type == entry_type::CHAR_DEVICE) {
        /* There is no kernel driver behind the node: the verbs calls are
         * the only way to the emulated device */
        return fail(ENXIO);
    } else if ((flags & O_ACCMODE) != O_RDONLY) {
        return fail(EACCES);
    } else if (flags & O_DIRECTORY) {
        return fail(ENOTDIR);
    }

    fd = memfd_create("ucx-emu-sysfs",
                      (flags & O_CLOEXEC) ? MFD_CLOEXEC : 0);
    if (fd < 0) {
        return -1;
    }

    // bounded: each write to the memfd advances done or fails
    while (done < e.content.size()) {
        ret = write(fd, e.content.data() + done, e.content.size() - done);
        if (ret < 0) {
            if (errno == EINTR) {
                continue;
            }
            goto err_close;
        }
        done += ret;
    }

    if ((lseek(fd, 0, SEEK_SET) != 0) ||
        ((flags & O_NONBLOCK) &&
         (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) != 0))) {
        goto err_close;
    }
    return fd;

err_close:
    {
        int err = errno;
        close(fd);
        return fail(err);
    }
}

FILE *entry_fopen(const entry &e, const char *mode)
{
    FILE *file;
    int fd;

    if ((mode[0] != 'r') || (strchr(mode, '+') != nullptr)) {
        errno = (e.type == entry_type::ABSENT) ? ENOENT : EACCES;
        return nullptr;
    }

    fd = entry_open(e, O_RDONLY | (strchr(mode, 'e') ? O_CLOEXEC : 0));
    if (fd < 0) {
        return nullptr;
    }

    file = fdopen(fd, mode);
    if (file == nullptr) {
        int err = errno;
        close(fd);
        errno = err;
    }
    return file;
}

/* The PCI function (its slot, "0000:e0:00.0") of the emulated device whose
 * sysfs directory is @a dev_dir; false: not one */
bool model_pci_slot(const std::string &dev_dir, std::string *slot)
{
    const uct_ib_emu_dropin_ops_t *dropin;
    const char *at;
    entry e;

    int saved_errno = errno;
    dropin          = preload_dropin_ops();
    errno           = saved_errno;
    if ((dropin == nullptr) ||
        !model_attr(dropin, dev_dir, "device/uevent", &e) ||
        (e.type != entry_type::ATTRIBUTE) ||
        ((at = strstr(e.content.c_str(), PCI_SLOT_KEY)) == nullptr)) {
        return false;
    }

    at   += strlen(PCI_SLOT_KEY);
    *slot = std::string(at, strcspn(at, "\n"));
    return true;
}

/* The emulated device @a path names, directly under /sys/class/infiniband/,
 * with what follows it ("" or "/device/..."); false: not such a path */
bool split_device_path(const char *path, std::string *dev, std::string *rest)
{
    const char *name, *slash;

    if ((path == nullptr) || !has_prefix(path, SYSFS_IB_DIR)) {
        return false;
    }

    name  = path + strlen(SYSFS_IB_DIR);
    slash = strchr(name, '/');
    *dev  = (slash == nullptr) ? std::string(name) :
                                 std::string(name, slash - name);
    *rest = (slash == nullptr) ? std::string() : std::string(slash);
    return !dev->empty();
}

/* The target of an emulated device's /sys/class/infiniband/<dev> link:
 * <its PCI function's directory>/infiniband/<dev>; false: not one */
bool model_device_realpath(const char *path, std::string *target)
{
    std::string dev, rest, slot;

    if (!split_device_path(path, &dev, &rest) || !rest.empty() ||
        !model_pci_slot(SYSFS_IB_DIR + dev, &slot)) {
        return false;
    }

    *target = SYSFS_PCI_DIR + slot + "/infiniband/" + dev;
    return true;
}

/*
 * The symbolic links of an emulated device's sysfs entries, as readlink
 * gives them (relative, as the kernel makes them): the class entry, its
 * "device" (the PCI function) and the function's "driver", mlx5_core,
 * which Open MPI and UCX read to know the device's kind; false: not one
 */
bool model_link(const char *path, std::string *target)
{
    std::string dev, rest, slot;

    if (split_device_path(path, &dev, &rest)) {
        if (!model_pci_slot(SYSFS_IB_DIR + dev, &slot)) {
            return false;
        }
        if (rest.empty()) {
            *target = "../../devices/pci0000:e0/" + slot + "/infiniband/" +
                      dev;
        } else if (rest == "/device") {
            *target = "../../../" + slot;
        } else if (rest == "/device/driver") {
            *target = "../../../bus/pci/drivers/mlx5_core";
        } else {
            return false;
        }
        return true;
    }
    return false;
}

char *copy_realpath(const std::string &target, char *resolved,
                    size_t resolved_len)
{
    if (resolved == nullptr) {
        return strdup(target.c_str());
    }
    if (target.size() >= resolved_len) {
        errno = ENAMETOOLONG;
        return nullptr;
    }
    memcpy(resolved, target.c_str(), target.size() + 1);
    return resolved;
}

mode_t open_mode(int flags, va_list ap)
{
    return ((flags & O_CREAT) || ((flags & O_TMPFILE) == O_TMPFILE)) ?
           va_arg(ap, mode_t) : 0;
}

} // namespace


PRELOAD_EXPORT int stat(const char *path, struct stat *buf)
{
    entry e;

    if (lookup(path, &e)) {
        return entry_stat(e, buf);
    }
    CALL_NEXT(stat, path, buf);
}

PRELOAD_EXPORT int stat64(const char *path, struct stat64 *buf)
{
    entry e;

    if (lookup(path, &e)) {
        return entry_stat(e, buf);
    }
    CALL_NEXT(stat64, path, buf);
}

PRELOAD_EXPORT int __xstat(int ver, const char *path, struct stat *buf)
{
    entry e;

    if (lookup(path, &e)) {
        return entry_stat(e, buf);
    }
    CALL_NEXT(__xstat, ver, path, buf);
}

PRELOAD_EXPORT int __xstat64(int ver, const char *path, struct stat64 *buf)
{
    entry e;

    if (lookup(path, &e)) {
        return entry_stat(e, buf);
    }
    CALL_NEXT(__xstat64, ver, path, buf);
}

PRELOAD_EXPORT int access(const char *path, int mode)
{
    entry e;

    if (lookup(path, &e)) {
        return entry_access(e, mode);
    }
    CALL_NEXT(access, path, mode);
}

PRELOAD_EXPORT int open(const char *path, int flags, ...)
{
    va_list ap;
    mode_t mode;
    entry e;

    va_start(ap, flags);
    mode = open_mode(flags, ap);
    va_end(ap);

    if (lookup(path, &e)) {
        return entry_open(e, flags);
    }
    CALL_NEXT(open, path, flags, mode);
}

PRELOAD_EXPORT int open64(const char *path, int flags, ...)
{
    va_list ap;
    mode_t mode;
    entry e;

    va_start(ap, flags);
    mode = open_mode(flags, ap);
    va_end(ap);

    if (lookup(path, &e)) {
        return entry_open(e, flags);
    }
    CALL_NEXT(open64, path, flags, mode);
}

PRELOAD_EXPORT int __open_2(const char *path, int flags)
{
    entry e;

    if (lookup(path, &e)) {
        return entry_open(e, flags);
    }
    CALL_NEXT(__open_2, path, flags);
}

PRELOAD_EXPORT int __open64_2(const char *path, int flags)
{
    entry e;

    if (lookup(path, &e)) {
        return entry_open(e, flags);
    }
    CALL_NEXT(__open64_2, path, flags);
}

/* Only absolute paths can name the model's files */
PRELOAD_EXPORT int openat(int dirfd, const char *path, int flags, ...)
{
    va_list ap;
    mode_t mode;
    entry e;

    va_start(ap, flags);
    mode = open_mode(flags, ap);
    va_end(ap);

    if (lookup(path, &e)) {
        return entry_open(e, flags);
    }
    CALL_NEXT(openat, dirfd, path, flags, mode);
}

PRELOAD_EXPORT int openat64(int dirfd, const char *path, int flags, ...)
{
    va_list ap;
    mode_t mode;
    entry e;

    va_start(ap, flags);
    mode = open_mode(flags, ap);
    va_end(ap);

    if (lookup(path, &e)) {
        return entry_open(e, flags);
    }
    CALL_NEXT(openat64, dirfd, path, flags, mode);
}

PRELOAD_EXPORT FILE *fopen(const char *path, const char *mode)
{
    static const auto next = next_func<decltype(&::fopen)>("fopen");
    entry e;

    if (lookup(path, &e)) {
        return entry_fopen(e, mode);
    }
    if (next == nullptr) {
        errno = ENOSYS;
        return nullptr;
    }
    return next(path, mode);
}

PRELOAD_EXPORT FILE *fopen64(const char *path, const char *mode)
{
    static const auto next = next_func<decltype(&::fopen64)>("fopen64");
    entry e;

    if (lookup(path, &e)) {
        return entry_fopen(e, mode);
    }
    if (next == nullptr) {
        errno = ENOSYS;
        return nullptr;
    }
    return next(path, mode);
}

/* The links of an emulated device's sysfs entries */
PRELOAD_EXPORT ssize_t readlink(const char *path, char *buf, size_t size)
{
    static const auto next = next_func<decltype(&::readlink)>("readlink");
    std::string target;

    if (model_link(path, &target)) {
        /* as the system call: truncated, not terminated */
        const size_t len = (target.size() < size) ? target.size() : size;
        memcpy(buf, target.data(), len);
        return static_cast<ssize_t>(len);
    }
    if (next == nullptr) {
        errno = ENOSYS;
        return -1;
    }
    return next(path, buf, size);
}

PRELOAD_EXPORT ssize_t __readlink_chk(const char *path, char *buf,
                                      size_t size, size_t buf_size)
{
    static const auto next = next_func<ssize_t (*)(const char*, char*, size_t,
                                                   size_t)>("__readlink_chk");
    std::string target;

    if (model_link(path, &target)) {
        return readlink(path, buf, (size < buf_size) ? size : buf_size);
    }
    if (next == nullptr) {
        errno = ENOSYS;
        return -1;
    }
    return next(path, buf, size, buf_size);
}

/* A device's sysfs directory links to its place under its PCI function */
PRELOAD_EXPORT char *realpath(const char *path, char *resolved)
{
    static const auto next = next_func<decltype(&::realpath)>("realpath");
    std::string target;

    if (model_device_realpath(path, &target)) {
        return copy_realpath(target, resolved, PATH_MAX);
    }
    if (next == nullptr) {
        errno = ENOSYS;
        return nullptr;
    }
    return next(path, resolved);
}

PRELOAD_EXPORT char *__realpath_chk(const char *path, char *resolved,
                                    size_t resolved_len)
{
    static const auto next = next_func<char *(*)(const char*, char*, size_t)>(
            "__realpath_chk");
    std::string target;

    if (model_device_realpath(path, &target)) {
        return copy_realpath(target, resolved,
                             (resolved_len < PATH_MAX) ? resolved_len :
                                                         PATH_MAX);
    }
    if (next == nullptr) {
        errno = ENOSYS;
        return nullptr;
    }
    return next(path, resolved, resolved_len);
}
