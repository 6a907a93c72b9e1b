/* SPDX-License-Identifier: MIT */
/*
 * plugins/cuda/cuda_timeline.h - the timeline of asynchronous CUDA work for
 * `gbpf run --trace` and the exit summary (internal to the cuda agent).
 *
 * Every launch, copy and memset is bracketed by two CUDA events recorded
 * on its own stream (so nothing is synchronised and stream order is kept);
 * the API call goes to the controller at once (host times), the GPU work
 * once a completion thread sees the second event complete. GPU times are
 * converted to CLOCK_MONOTONIC with a reference event recorded on a private
 * stream and bracketed by host clock reads, recalibrated every second
 * (cuEventElapsedTime is a float of milliseconds: long intervals lose
 * precision). Synchronisation, allocation and module loads are host-only
 * events. Costs two cuEventRecord per operation: only enabled when the
 * controller asks (GBPF_AGENT_F_GPU_TIMELINE).
 */
#ifndef GBPF_CUDA_TIMELINE_H
#define GBPF_CUDA_TIMELINE_H

#include <gbpf/plugin.h>

#include "plugins/cuda/intercept/intercept.h"

struct ca_timeline;

/** @return 0, -ENOSYS (the driver lacks events), -ENOMEM */
int ca_timeline_create(struct ca_timeline **out, const struct gbpf_agent_services *svc);
/** Stop the completion thread after it delivered what completed; free everything. */
void ca_timeline_destroy(struct ca_timeline *t);

/**
 * Launch hooks (launch_pre stores its state in l->hook_data). Call
 * launch_pre right before the launch (after any instrumentation work), with
 * the time the application's call entered.
 */
void ca_timeline_launch_pre(struct ca_timeline *t, struct gbpf_cu_launch *l, uint64_t called_ns);
void ca_timeline_launch_post(struct ca_timeline *t, const struct gbpf_cu_launch *l);
/** Host call hooks: copies, memsets, synchronisation, allocation. */
void ca_timeline_call_pre(struct ca_timeline *t, const struct gbpf_cu_call_event *ev);
void ca_timeline_call_post(struct ca_timeline *t, const struct gbpf_cu_call_event *ev);

/** Events delivered and dropped (pending queue full), for reports and tests. */
void ca_timeline_counts(struct ca_timeline *t, uint64_t *delivered, uint64_t *dropped);

#endif /* GBPF_CUDA_TIMELINE_H */
