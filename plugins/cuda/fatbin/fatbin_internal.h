/* SPDX-License-Identifier: MIT */
/* Helpers shared by the fatbin sources (little-endian readers, logging). */
#ifndef GBPF_CUDA_FATBIN_INTERNAL_H
#define GBPF_CUDA_FATBIN_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

void gbpf_fb_log(char *log, size_t log_size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
uint16_t gbpf_fb_rd16(const uint8_t *p);
uint32_t gbpf_fb_rd32(const uint8_t *p);
uint64_t gbpf_fb_rd64(const uint8_t *p);

#endif
