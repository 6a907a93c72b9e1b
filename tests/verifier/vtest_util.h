/* SPDX-License-Identifier: MIT */
/*
 * tests/verifier/vtest_util.h - small helpers shared by the verifier tests:
 * hex decoding and a one-call "verify these instructions" wrapper.
 */
#ifndef GBPF_TESTS_VERIFIER_UTIL_H
#define GBPF_TESTS_VERIFIER_UTIL_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <gbpf/verifier.h>

static inline int vt_hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Decode a hex string into a malloc'ed buffer; returns bytes or -1. */
static inline long vt_unhex(const char *s, size_t len, uint8_t **out)
{
	uint8_t *b;
	size_t n = 0;

	if (len % 2)
		return -1;
	b = malloc(len / 2 + 1);
	if (!b)
		return -1;
	for (size_t i = 0; i < len; i += 2) {
		int hi = vt_hexval(s[i]), lo = vt_hexval(s[i + 1]);

		if (hi < 0 || lo < 0) {
			free(b);
			return -1;
		}
		b[n++] = (uint8_t)(hi << 4 | lo);
	}
	*out = b;
	return (long)n;
}

/* Verify @p insns as a program of @p kind; fills res, returns gbpf_verify's code. */
static inline int vt_verify(const struct gbpf_insn *insns, size_t cnt, uint32_t kind,
			    const struct gbpf_map_desc *maps, size_t map_cnt, uint64_t mem_size,
			    struct gbpf_verify_result *res, char *log, size_t log_size)
{
	struct gbpf_prog_desc p;

	memset(&p, 0, sizeof(p));
	p.sz = sizeof(p);
	p.name = "test";
	p.insns = insns;
	p.insn_cnt = cnt;
	p.maps = maps;
	p.map_cnt = map_cnt;
	p.attach.kind = kind;
	memset(res, 0, sizeof(*res));
	res->sz = sizeof(*res);
	GBPF_OPTS(gbpf_verify_opts, o, .log_buf = log, .log_size = log_size, .mem_size = mem_size,
		  .log_level = GBPF_VERIFY_LOG_STATE, .complexity_limit = 200000);
	return gbpf_verify(&p, &o, res);
}

#endif
