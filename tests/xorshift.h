/* SPDX-License-Identifier: MIT */
/*
 * tests/xorshift.h - the randomised tests' number stream: xorshift64, so a
 * seed gives the same cases on every machine and a failure can be replayed.
 */
#ifndef GBPF_TESTS_XORSHIFT_H
#define GBPF_TESTS_XORSHIFT_H

#include <stdint.h>

/** The next number of the stream @p state (never 0 when the seed is not 0). */
static inline uint64_t test_xorshift64(uint64_t *state)
{
	*state ^= *state << 13;
	*state ^= *state >> 7;
	*state ^= *state << 17;
	return *state;
}

#endif
