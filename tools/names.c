/* SPDX-License-Identifier: MIT */
#include "names.h"

#include <gbpf/prog.h>

const char *map_type_name(uint32_t type)
{
	switch (type) {
	case GBPF_MAP_TYPE_HASH: return "hash";
	case GBPF_MAP_TYPE_ARRAY: return "array";
	case GBPF_MAP_TYPE_PERF_EVENT_ARRAY: return "perf_event_array";
	case GBPF_MAP_TYPE_PERCPU_HASH: return "percpu_hash";
	case GBPF_MAP_TYPE_PERCPU_ARRAY: return "percpu_array";
	case GBPF_MAP_TYPE_LRU_HASH: return "lru_hash";
	case GBPF_MAP_TYPE_RINGBUF: return "ringbuf";
	case GBPF_MAP_TYPE_GPU_HASH: return "gpu_hash";
	case GBPF_MAP_TYPE_PERGPUTHREAD_ARRAY: return "per_gpu_thread_array";
	case GBPF_MAP_TYPE_GPU_ARRAY: return "gpu_array";
	case GBPF_MAP_TYPE_GPU_THREAD_LOCAL: return "gpu_thread_local";
	case GBPF_MAP_TYPE_GPU_RINGBUF: return "gpu_ringbuf";
	default: return "unknown";
	}
}

const char *attach_kind_name(uint32_t kind)
{
	switch (kind) {
	case GBPF_ATTACH_NONE: return "none";
	case GBPF_ATTACH_GPU_ENTRY: return "gpu_entry";
	case GBPF_ATTACH_GPU_EXIT: return "gpu_exit";
	case GBPF_ATTACH_GPU_MEM: return "gpu_mem";
	case GBPF_ATTACH_GPU_BARRIER: return "gpu_barrier";
	case GBPF_ATTACH_GPU_BLOCK: return "gpu_block";
	case GBPF_ATTACH_HOST_LAUNCH: return "host_launch";
	case GBPF_ATTACH_HOST_MEMCPY: return "host_memcpy";
	case GBPF_ATTACH_HOST_MALLOC: return "host_malloc";
	case GBPF_ATTACH_HOST_SYNC: return "host_sync";
	case GBPF_ATTACH_HOST_MODULE_LOAD: return "host_module_load";
	case GBPF_ATTACH_UPROBE: return "uprobe";
	case GBPF_ATTACH_URETPROBE: return "uretprobe";
	default: return "unknown";
	}
}

const char *map_origin_name(uint32_t origin)
{
	switch (origin) {
	case GBPF_MAP_ORIGIN_USER: return "user";
	case GBPF_MAP_ORIGIN_DATA: return "data";
	case GBPF_MAP_ORIGIN_RODATA: return "rodata";
	case GBPF_MAP_ORIGIN_BSS: return "bss";
	default: return "unknown";
	}
}
