/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <gbpf/gbpf.h>

static const char *const gbpf_error_text[GBPF_ERRNO__END - GBPF_ERRNO__START] = {
	[GBPF_ERRNO__LIBELF - GBPF_ERRNO__START] = "Something wrong in libelf",
	[GBPF_ERRNO__FORMAT - GBPF_ERRNO__START] = "Malformed or unsupported BPF object",
	[GBPF_ERRNO__RELOC - GBPF_ERRNO__START] = "Relocation failed",
	[GBPF_ERRNO__VERIFY - GBPF_ERRNO__START] = "Program rejected by the verifier",
	[GBPF_ERRNO__ASM - GBPF_ERRNO__START] = "Assembler syntax error",
	[GBPF_ERRNO__ABI - GBPF_ERRNO__START] = "Plugin ABI version mismatch",
	[GBPF_ERRNO__NOBACKEND - GBPF_ERRNO__START] = "No usable backend",
	[GBPF_ERRNO__JIT - GBPF_ERRNO__START] = "Code generation or device JIT failed",
	[GBPF_ERRNO__INJECT - GBPF_ERRNO__START] = "Injection into an application kernel failed",
	[GBPF_ERRNO__FAULT - GBPF_ERRNO__START] = "Program faulted at run time",
	[GBPF_ERRNO__BUDGET - GBPF_ERRNO__START] = "Program exhausted its instruction budget",
};

int gbpf_strerror(int err, char *buf, size_t size)
{
	if (!buf || !size)
		return -EINVAL;
	if (err < 0)
		err = -err;
	if (err >= GBPF_ERRNO__START && err < GBPF_ERRNO__END) {
		snprintf(buf, size, "%s", gbpf_error_text[err - GBPF_ERRNO__START]);
		return 0;
	}
	if (err >= GBPF_ERRNO__END) {
		snprintf(buf, size, "Unknown gbpf error %d", err);
		return -EINVAL;
	}
	/* strerror_r is the GNU variant under _GNU_SOURCE. */
	snprintf(buf, size, "%s", strerror_r(err, (char[128]){0}, 128));
	return 0;
}
