/* SPDX-License-Identifier: MIT */
/* libFuzzer target: the agent's decoders must reject, never crash or leak. */
#include <stddef.h>
#include <stdint.h>

#include <gbpf/plugin.h>

#include "core/agent/proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gbpf_agent_setup s;
	struct gbpf_agent_hello h;
	struct gbpf_agent_report r;
	char why[256];

	if (gbpf_agent_decode_setup(data, size, &s, why, sizeof(why)) == 0)
		gbpf_agent_setup_free(&s);
	gbpf_agent_decode_hello(data, size, &h, why, sizeof(why));
	gbpf_agent_decode_report(GBPF_AGENT_MSG_REPORT, data, size, &r, why, sizeof(why));
	gbpf_agent_decode_report(GBPF_AGENT_MSG_PRINT, data, size, &r, why, sizeof(why));
	{
		static struct gbpf_timeline_event ev[GBPF_AGENT_MAX_TL_BATCH];
		uint64_t dropped;
		size_t n;

		gbpf_agent_decode_timeline(data, size, &dropped, ev, &n, why, sizeof(why));
	}
	{
		char path[GBPF_AGENT_MAX_STR + 1];

		gbpf_agent_decode_job(data, size, path, sizeof(path), why, sizeof(why));
	}
	if (size >= sizeof(struct gbpf_agent_frame))
		gbpf_agent_frame_check((const void *)data, why, sizeof(why));
	return 0;
}
