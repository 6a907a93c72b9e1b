/* SPDX-License-Identifier: MIT */
/*
 * gbpf/gbpf.h - libgbpf: run eBPF programs inside GPU kernels.
 *
 * Umbrella header of the public API. Conventions (as libbpf):
 *  - functions returning int return 0 or a negative errno, and set errno;
 *  - functions returning a pointer return NULL and set errno on failure;
 *  - gbpf's own error codes lie in [GBPF_ERRNO__START, GBPF_ERRNO__END)
 *    and are described by gbpf_strerror();
 *  - options structs start with `size_t sz`; fill them with GBPF_OPTS().
 *  - diagnostics (what went wrong, in which file, section and instruction)
 *    go through the print callback set with gbpf_set_print().
 */
#ifndef GBPF_GBPF_H
#define GBPF_GBPF_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <gbpf/insn.h>
#include <gbpf/plugin.h>
#include <gbpf/prog.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define GBPF_API __attribute__((visibility("default")))
#else
#define GBPF_API
#endif

/** Version of libgbpf (not of the plugin ABI). */
#define GBPF_VERSION_STRING "0.1.0"
GBPF_API const char *gbpf_version(void);

/**
 * Declare and zero an options struct, setting its sz:
 *   GBPF_OPTS(gbpf_object_open_opts, opts, .name = "x");
 */
#define GBPF_OPTS(TYPE, NAME, ...)                                                                 \
	struct TYPE NAME = ({                                                                      \
		struct TYPE __gbpf_opts;                                                           \
		__builtin_memset(&__gbpf_opts, 0, sizeof(__gbpf_opts));                            \
		__gbpf_opts = (struct TYPE){.sz = sizeof(struct TYPE), __VA_ARGS__};               \
		__gbpf_opts;                                                                       \
	})

/** gbpf's own error codes (returned negated). */
enum gbpf_errno {
	GBPF_ERRNO__START = 4000,
	GBPF_ERRNO__LIBELF = GBPF_ERRNO__START, /**< libelf failed to read the file */
	GBPF_ERRNO__FORMAT,                     /**< malformed or unsupported object */
	GBPF_ERRNO__RELOC,                      /**< relocation cannot be applied */
	GBPF_ERRNO__VERIFY,                     /**< program rejected by the verifier */
	GBPF_ERRNO__ASM,                        /**< assembler syntax error */
	GBPF_ERRNO__ABI,                        /**< plugin ABI mismatch */
	GBPF_ERRNO__NOBACKEND,                  /**< no usable backend */
	GBPF_ERRNO__JIT,                        /**< code generation or device JIT failed */
	GBPF_ERRNO__INJECT,                     /**< injection into an app kernel failed */
	GBPF_ERRNO__FAULT,                      /**< program faulted at run time */
	GBPF_ERRNO__BUDGET,                     /**< instruction budget exhausted */
	GBPF_ERRNO__END,
};

/**
 * Describe an error code (negative or positive errno, or GBPF_ERRNO__*)
 * into buf. Returns 0, or -EINVAL for an unknown code (buf still filled).
 */
GBPF_API int gbpf_strerror(int err, char *buf, size_t size);

/** Print callback: returns what vfprintf would. */
typedef int (*gbpf_print_fn_t)(enum gbpf_log_level level, const char *fmt, va_list ap);
/**
 * Set the print callback for all diagnostics of libgbpf; NULL silences
 * them. The default prints WARN and INFO to stderr, DEBUG when the
 * environment variable GBPF_LOG_LEVEL is "debug". Returns the previous one.
 */
GBPF_API gbpf_print_fn_t gbpf_set_print(gbpf_print_fn_t fn);

#ifdef __cplusplus
}
#endif

#endif /* GBPF_GBPF_H */
