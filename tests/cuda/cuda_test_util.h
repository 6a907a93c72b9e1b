/* SPDX-License-Identifier: MIT */
/* tests/cuda/cuda_test_util.h - conformance table reader and ptxas runner for the cuda tests. */
#ifndef GBPF_TESTS_CUDA_UTIL_H
#define GBPF_TESTS_CUDA_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include <gbpf/prog.h>

/** One row of assembled_tests.tsv. */
struct conf_case {
	char name[128];
	struct gbpf_insn *insns;
	size_t insn_cnt;
	uint8_t *mem;
	size_t mem_size;
	uint64_t expected;
	int has_expected;
	char error[64];
	struct gbpf_prog_desc desc;
};

/** Path of the conformance table, or NULL (with a reason printed) if absent. */
const char *conf_tsv_path(void);
/** Read all rows; returns the count (0 on error). Free with conf_free. */
size_t conf_load(const char *path, struct conf_case **out);
void conf_free(struct conf_case *cases, size_t n);

/** Path of ptxas or NULL. */
const char *ptxas_path(void);
/**
 * Assemble @p ptx for @p arch with ptxas; 0 on success, else non-zero with
 * ptxas' first lines of output in @p log.
 */
int ptxas_check(const char *ptx, const char *arch, char *log, size_t log_size);
/** The lowest -arch the installed ptxas accepts for sm_70 PTX ("sm_70" or "sm_75"). */
const char *ptxas_arch_for_sm70(void);

/**
 * A small application kernel for injection tests: app(a, b, n) loops n
 * times over two global loads, a store and a barrier, then stores once
 * more (memory and barrier sites inside a loop, a memory site after it,
 * one entry, one exit).
 */
extern const char loop_app_ptx[];

#endif
