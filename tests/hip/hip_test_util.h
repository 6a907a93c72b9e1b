/* SPDX-License-Identifier: MIT */
/* tests/hip/hip_test_util.h - conformance reader, temp files and LLVM tool runs for the hip tests. */
#ifndef GBPF_TESTS_HIP_UTIL_H
#define GBPF_TESTS_HIP_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include <gbpf/prog.h>

/** One program of assembled_tests.tsv. */
struct hconf_case {
	char name[128];
	struct gbpf_insn *insns;
	size_t insn_cnt;
	int has_mem;       /* the program reads input memory (-- mem) */
	int has_expected;  /* expected r0 given (-- result) */
	uint64_t expected;
	struct gbpf_prog_desc desc;
};

/** Path of the conformance table under ../shared, or NULL when absent. */
const char *hconf_path(void);
/** Read every row; returns the count, *out malloc'ed (free with hconf_free). */
size_t hconf_load(const char *path, struct hconf_case **out);
void hconf_free(struct hconf_case *c, size_t n);

/** A fresh private temporary directory (mkdtemp), or NULL. Remove with rm_tree. */
char *tmp_dir(const char *tag);
void rm_tree(const char *dir);
/** Write bytes to dir/name; returns 0 or -errno. path gets the full name. */
int write_file(const char *dir, const char *name, const void *data, size_t len, char *path, size_t psize);
/** Read a whole file (malloc'ed, NUL-terminated); NULL on failure. */
char *read_file(const char *path, size_t *len);
/**
 * Run argv (no shell), capturing stdout+stderr into a malloc'ed string
 * (*out, may be NULL to discard). Returns the exit status, or -1.
 */
int run_cmd(char *const argv[], char **out);

/** Link obj into a shared code object with ld.lld and check `llvm-readelf --notes`:
 *  returns 0 when the notes hold amdhsa metadata (and the kernel @p kernel if not NULL). */
int check_code_object(const char *dir, const char *name, const void *obj, size_t len, const char *kernel,
		      char *why, size_t why_size);

#endif
