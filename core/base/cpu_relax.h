/* SPDX-License-Identifier: MIT */
/*
 * core/base/cpu_relax.h - the pause of a busy-wait loop. The controller's
 * print spin (tools/run_loop.c) and the CUDA print drain thread
 * (plugins/cuda/cuda_printq.c) poll without sleeping for a bounded time;
 * between polls this hint lets the sibling hyper-thread run and saves power.
 */
#ifndef GBPF_CORE_BASE_CPU_RELAX_H
#define GBPF_CORE_BASE_CPU_RELAX_H

static inline void gbpf_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#else
	__asm__ __volatile__("" ::: "memory");
#endif
}

#endif
