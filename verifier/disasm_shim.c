/* SPDX-License-Identifier: MIT */
#include <errno.h>

#include <gbpf/asm.h>

#include "verifier/disasm_shim.h"

int vdisasm(const struct gbpf_insn *insns, uint32_t cnt, uint32_t idx, char *buf, size_t size)
{
	int n;

	if (idx >= cnt)
		return -EINVAL;
	n = gbpf_disasm_insn(&insns[idx], cnt - idx, buf, size);
	return n < 0 ? n : 0;
}
