/* SPDX-License-Identifier: MIT */
/* tests/cuda_sanitizer/san_decls.h - the real headers' values, from san_decls_real.c. */
#ifndef GBPF_TESTS_SAN_DECLS_H
#define GBPF_TESTS_SAN_DECLS_H

#include <stddef.h>

/** Fill @p v with up to @p n values of NVIDIA's headers; returns the table's length. */
size_t san_decls_real(long long *v, size_t n);

#endif
