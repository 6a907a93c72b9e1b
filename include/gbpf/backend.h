/* SPDX-License-Identifier: MIT */
/*
 * gbpf/backend.h - finding backend plugins and running programs on them.
 *
 * A registry scans for plugins once, in this order (the first plugin of a
 * given name wins, later duplicates are reported and skipped):
 *   1. every directory or file in GBPF_PLUGIN_PATH (colon-separated);
 *   2. the plugins/ folder of the build tree this libgbpf was built in,
 *      when it still exists (running from the build tree);
 *   3. the install directory (<libdir>/gbpf/plugins).
 * A candidate is a file named libgbpf-<name>.so. Each is dlopen'ed, its
 * entry symbol resolved and called with GBPF_PLUGIN_ABI_VERSION. A plugin
 * that fails any step stays listed with the reason, and is never used.
 *
 * Selection: a name given by the caller, else the environment variable
 * GBPF_BACKEND, else the loaded plugin of highest priority that reports at
 * least one usable device.
 */
#ifndef GBPF_BACKEND_H
#define GBPF_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include <gbpf/gbpf.h>

#ifdef __cplusplus
extern "C" {
#endif

struct gbpf_registry;
struct gbpf_plugin;

/** Options of gbpf_registry_new(). */
struct gbpf_registry_opts {
	size_t sz;
	/** Search path used instead of GBPF_PLUGIN_PATH (NULL: the environment). */
	const char *plugin_path;
	/** Do not search the build tree and install directory (tests). */
	int no_default_dirs;
};

/** Scan for plugins. Never fails because a plugin is bad; -ENOMEM only. */
GBPF_API int gbpf_registry_new(const struct gbpf_registry_opts *opts, struct gbpf_registry **out);
/** Close every backend opened through the registry and unload plugins. */
GBPF_API void gbpf_registry_free(struct gbpf_registry *reg);

/** Plugins found, loaded or not, sorted by name. */
GBPF_API size_t gbpf_registry_plugin_count(const struct gbpf_registry *reg);
GBPF_API struct gbpf_plugin *gbpf_registry_plugin(const struct gbpf_registry *reg, size_t index);
/** Loaded or failed plugin of this name, or NULL (errno = ENOENT). */
GBPF_API struct gbpf_plugin *gbpf_registry_find(const struct gbpf_registry *reg, const char *name);

/**
 * Choose a backend: @p name if non-NULL, else $GBPF_BACKEND, else the best
 * usable one. Returns -GBPF_ERRNO__NOBACKEND with the reason in @p why.
 */
GBPF_API int gbpf_registry_select(struct gbpf_registry *reg, const char *name,
				  struct gbpf_plugin **out, char *why, size_t why_size);

/** Backend name ("cpu", "cuda", ...), or the file name if it never loaded. */
GBPF_API const char *gbpf_plugin__name(const struct gbpf_plugin *plugin);
GBPF_API const char *gbpf_plugin__path(const struct gbpf_plugin *plugin);
GBPF_API const char *gbpf_plugin__description(const struct gbpf_plugin *plugin);
/** Plugin's own version (GBPF_MAKE_VERSION), 0 if not loaded. */
GBPF_API uint32_t gbpf_plugin__version(const struct gbpf_plugin *plugin);
/** Why the plugin could not be loaded, or NULL when it is loaded. */
GBPF_API const char *gbpf_plugin__load_error(const struct gbpf_plugin *plugin);
/** Capabilities; NULL if not loaded. */
GBPF_API const struct gbpf_backend_caps *gbpf_plugin__caps(const struct gbpf_plugin *plugin);
/** Dispatch table; NULL if not loaded. */
GBPF_API const struct gbpf_backend_ops *gbpf_plugin__ops(const struct gbpf_plugin *plugin);

/**
 * Devices of a loaded plugin (queried once, then cached). On -ENODEV,
 * *why says what is missing ("libcuda.so.1 not found").
 */
GBPF_API int gbpf_plugin__devices(struct gbpf_plugin *plugin, const struct gbpf_device_info **devs,
				  uint32_t *count, const char **why);

/** Options of gbpf_plugin__run(). */
struct gbpf_prog_run_opts {
	size_t sz;
	uint64_t threads;      /**< instances (GPU threads); 0 = 1 */
	void *data;            /**< memory given in r1 (length in r2), may be NULL */
	size_t data_size;
	uint32_t run_flags;    /**< GBPF_RUN_* of gbpf/plugin.h */
	uint32_t block_size;   /**< GPU threads per block, 0 = backend's choice */
	uint64_t *r0;          /**< optional: `threads` return values */
	void *data_out;        /**< optional: thread 0's memory after the run */
	/**
	 * Maps to run against, prog->map_cnt entries (NULL: fresh maps are
	 * created for this run and freed after it).
	 */
	struct gbpf_map_instance *maps;
	/** Skip the verifier; allowed only on sandboxed backends (GBPF_CAP_SANDBOXED). */
	int unverified;
	char *log;             /**< receives the reason of a failure */
	size_t log_size;
};

/** What a run produced. */
struct gbpf_prog_run_result {
	size_t sz;
	uint64_t r0;           /**< r0 of thread 0 */
	int r0_uniform;        /**< every thread returned r0 */
	uint64_t elapsed_ns;   /**< time of the run on the backend */
};

/**
 * Verify @p prog (unless opts->unverified on a sandboxed backend), load it
 * on the plugin's default device and run it. Errors: -GBPF_ERRNO__VERIFY,
 * -GBPF_ERRNO__JIT, -GBPF_ERRNO__FAULT, -GBPF_ERRNO__BUDGET, -ENODEV, with
 * the reason in opts->log.
 */
GBPF_API int gbpf_plugin__run(struct gbpf_plugin *plugin, const struct gbpf_prog_desc *prog,
			      const struct gbpf_prog_run_opts *opts,
			      struct gbpf_prog_run_result *result);

#ifdef __cplusplus
}
#endif

#endif /* GBPF_BACKEND_H */
