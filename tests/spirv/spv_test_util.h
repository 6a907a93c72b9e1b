/* SPDX-License-Identifier: MIT */
/* tests/spirv/spv_test_util.h - conformance table reader and OpenCL helpers of the spirv tests. */
#ifndef GBPF_TESTS_SPV_UTIL_H
#define GBPF_TESTS_SPV_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include <gbpf/prog.h>

/** One row of assembled_tests.tsv (name, program hex, memory hex, r0 hex). */
struct spv_case {
	char name[128];
	struct gbpf_insn *insns;
	size_t insn_cnt;
	uint8_t *mem;
	size_t mem_size;
	uint64_t expected;
	struct gbpf_prog_desc desc;
};

/** Path of the conformance table or NULL when ../shared/conformance is absent. */
const char *spv_conf_path(void);
/** Read every row with an expected r0; returns the count (0 on error). */
size_t spv_conf_load(const char *path, struct spv_case **out);
void spv_conf_free(struct spv_case *cases, size_t n);
/** Read a whole file (malloc'ed); returns 0 or -errno. */
int spv_read_file(const char *path, void **buf, size_t *size);

#endif
