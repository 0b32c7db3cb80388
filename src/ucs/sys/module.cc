/*
 * Every dlerror() here takes the message where the failure happens and then
 * calls dlerror() once more, so that glibc releases its copy of the string:
 * nothing is left pending for LeakSanitizer at exit.
 */
#include <ucs/sys/module.h>
#include <ucs/sys/lib_info.h>
#include <ucs/config/global_opts.h>
#include <ucs/debug/log_def.h>

#include <algorithm>
#include <cstring>
#include <dirent.h>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace {

struct loader_state {
    std::mutex                                    lock;
    std::set<std::string>                         loaded;  /* "framework/name" */
    std::set<std::pair<std::string, std::string>> scanned; /* framework, dir */
};

loader_state &loader()
{
    static loader_state *s = new loader_state(); /* lives until exit */
    return *s;
}

std::string take_dlerror()
{
    char buf[512];

    ucs_dlerror_take(buf, sizeof(buf));
    return buf;
}

std::string module_key(const std::string &framework, const std::string &name)
{
    return framework + "/" + name;
}

typedef ucs_status_t (*module_init_func_t)(void);

/* Called with the loader lock held. */
ucs_status_t load_locked(loader_state &s, const std::string &dir,
                         const std::string &framework, const std::string &name)
{
    std::string        path = dir + "/lib" + framework + "_" + name + ".so";
    void               *handle;
    module_init_func_t init;
    ucs_status_t       status;

    if (s.loaded.count(module_key(framework, name))) {
        return UCS_OK;
    }

    handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (handle == nullptr) {
        ucs_debug("module %s not loaded: %s", path.c_str(),
                  take_dlerror().c_str());
        return UCS_ERR_NO_ELEM;
    }

    init = reinterpret_cast<module_init_func_t>(
            dlsym(handle, UCS_MODULE_INIT_SYMBOL));
    if (init == nullptr) {
        (void)take_dlerror(); /* the init function is optional */
    } else {
        status = init();
        if (status != UCS_OK) {
            ucs_debug("module %s not loaded: initialization failed: %s",
                      path.c_str(), ucs_status_string(status));
            dlclose(handle);
            return UCS_ERR_NO_ELEM;
        }
    }

    s.loaded.insert(module_key(framework, name));
    ucs_debug("loaded module %s", path.c_str());
    return UCS_OK;
}

} // namespace

void ucs_dlerror_take(char *buf, size_t max)
{
    const char *msg = dlerror();

    snprintf(buf, max, "%s", (msg == nullptr) ? "unknown error" : msg);
    (void)dlerror(); /* frees the string glibc kept for the call above */
}

ucs_status_t ucs_module_dir(char *buf, size_t max)
{
    const char *lib_path;
    const char *slash;

    if ((ucs_global_opts.module_dir != nullptr) &&
        (ucs_global_opts.module_dir[0] != '\0')) {
        snprintf(buf, max, "%s", ucs_global_opts.module_dir);
        return UCS_OK;
    }

    lib_path = ucs_sys_get_lib_path();
    if (lib_path == nullptr) {
        return UCS_ERR_NO_ELEM;
    }

    slash = strrchr(lib_path, '/');
    if (slash == nullptr) {
        snprintf(buf, max, "ucx");
    } else {
        snprintf(buf, max, "%.*s/ucx", (int)(slash - lib_path), lib_path);
    }
    return UCS_OK;
}

ucs_status_t ucs_module_load(const char *framework, const char *name)
{
    char         dir[4096];
    loader_state &s = loader();

    if (ucs_module_dir(dir, sizeof(dir)) != UCS_OK) {
        ucs_debug("cannot locate the module directory: libucs path unknown");
        return UCS_ERR_NO_ELEM;
    }

    std::lock_guard<std::mutex> guard(s.lock);
    return load_locked(s, dir, framework, name);
}

unsigned ucs_modules_load(const char *framework)
{
    const std::string   prefix = std::string("lib") + framework + "_";
    const std::string   suffix = ".so";
    char                dir[4096];
    std::vector<std::string> names;
    loader_state        &s     = loader();
    unsigned            count  = 0;
    DIR                 *d;
    struct dirent       *entry;

    if (ucs_module_dir(dir, sizeof(dir)) != UCS_OK) {
        ucs_debug("cannot locate the module directory: libucs path unknown");
        return 0;
    }

    /* Each directory once per framework: later calls (every
     * uct_query_components()) cost a lookup, and a module directory set
     * since the last call is still scanned */
    std::lock_guard<std::mutex> guard(s.lock);
    if (!s.scanned.emplace(framework, dir).second) {
        return 0;
    }

    d = opendir(dir);
    if (d == nullptr) {
        /* the default directory may well be absent; a chosen one may not */
        if ((ucs_global_opts.module_dir != nullptr) &&
            (ucs_global_opts.module_dir[0] != '\0')) {
            ucs_warn("UCX_MODULE_DIR=%s: cannot open it: %m; no %s modules "
                     "loaded", dir, framework);
        } else {
            ucs_debug("no %s modules: cannot open %s: %m", framework, dir);
        }
        return 0;
    }

    while ((entry = readdir(d)) != nullptr) {
        std::string file = entry->d_name;

        if ((file.size() > prefix.size() + suffix.size()) &&
            (file.compare(0, prefix.size(), prefix) == 0) &&
            (file.compare(file.size() - suffix.size(), suffix.size(),
                          suffix) == 0)) {
            names.push_back(file.substr(prefix.size(), file.size() -
                                        prefix.size() - suffix.size()));
        }
    }
    closedir(d);

    std::sort(names.begin(), names.end()); /* a reproducible order */
    for (const std::string &name : names) {
        if (load_locked(s, dir, framework, name) == UCS_OK) {
            ++count;
        }
    }
    return count;
}

int ucs_module_is_loaded(const char *framework, const char *name)
{
    loader_state               &s = loader();
    std::lock_guard<std::mutex> guard(s.lock);

    return s.loaded.count(module_key(framework, name)) != 0;
}
