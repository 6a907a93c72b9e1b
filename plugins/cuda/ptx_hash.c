/* SPDX-License-Identifier: MIT */
/*
 * Hash maps on the device (maps/map_layout.h, docs/MAPS.md).
 */
#include "ptx_maps.h"

static const char hash_stub_ptx[] =
	".func (.param .b64 r) __gbpf_m_hash_lookup(.param .b64 m, .param .b64 k)\n{\n"
	"st.param.b64 [r], 0;\nret;\n}\n"
	".func (.param .b64 r) __gbpf_m_hash_update(.param .b64 m, .param .b64 k, .param .b64 v, .param .b64 f)\n{\n"
	"st.param.b64 [r], -95;\nret;\n}\n"
	".func (.param .b64 r) __gbpf_m_hash_delete(.param .b64 m, .param .b64 k)\n{\n"
	"st.param.b64 [r], -2;\nret;\n}\n";

void ptx_hash_emit(struct ptx_buf *b)
{
	ptx_buf_puts(b, hash_stub_ptx);
}
