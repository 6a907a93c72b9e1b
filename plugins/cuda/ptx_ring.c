/* SPDX-License-Identifier: MIT */
/*
 * Ring buffers and perf event arrays on the device (maps/map_layout.h).
 */
#include <gbpf/helper_ids.h>

#include "ptx_maps.h"

static const char ring_stub_ptx[] =
	".func (.param .b64 r) __gbpf_h_ringbuf_reserve(.param .b64 m, .param .b64 n, .param .b64 f)\n{\n"
	"st.param.b64 [r], 0;\nret;\n}\n"
	".func (.param .b64 r) __gbpf_h_ringbuf_submit(.param .b64 p, .param .b64 f)\n{\n"
	"st.param.b64 [r], 0;\nret;\n}\n"
	".func (.param .b64 r) __gbpf_h_ringbuf_discard(.param .b64 p, .param .b64 f)\n{\n"
	"st.param.b64 [r], 0;\nret;\n}\n"
	".func (.param .b64 r) __gbpf_h_ringbuf_output(.param .b64 m, .param .b64 d, .param .b64 n, .param .b64 f)\n{\n"
	"st.param.b64 [r], -95;\nret;\n}\n"
	".func (.param .b64 r) __gbpf_h_perf_event_output(.param .b64 c, .param .b64 m, .param .b64 f, .param .b64 d, .param .b64 n)\n{\n"
	"st.param.b64 [r], -95;\nret;\n}\n";

void ptx_ring_emit(struct ptx_buf *b, const uint8_t *used)
{
	if (used[GBPF_HELPER_RINGBUF_OUTPUT] || used[GBPF_HELPER_RINGBUF_RESERVE] ||
	    used[GBPF_HELPER_RINGBUF_SUBMIT] || used[GBPF_HELPER_RINGBUF_DISCARD] ||
	    used[GBPF_HELPER_PERF_EVENT_OUTPUT])
		ptx_buf_puts(b, ring_stub_ptx);
}
