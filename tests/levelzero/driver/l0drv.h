/* SPDX-License-Identifier: MIT */
/*
 * tests/levelzero/driver/l0drv.h - internals of the test-only Level Zero
 * driver (libgbpf-l0-testdrv.so).
 *
 * The real loader (libze_loader.so.1) loads this driver through
 * ZE_ENABLE_ALT_DRIVERS. It executes the SPIR-V modules it receives on the
 * first OpenCL platform (PoCL on CI machines): SPIR-V is turned into LLVM
 * bitcode with llvm-spirv-15 -r, then clCreateProgramWithBinary. There is
 * one device; every USM allocation is fine-grained OpenCL SVM, so host code
 * reads and writes it directly. Commands execute in order and synchronously
 * (immediate lists at append time, regular lists when a queue executes
 * them), which is all the test applications need. Anything else answers
 * ZE_RESULT_ERROR_UNSUPPORTED_FEATURE.
 */
#ifndef GBPF_L0DRV_H
#define GBPF_L0DRV_H

#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <level_zero/ze_api.h>
#include <level_zero/ze_ddi.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

/** Fixed limits: the driver is test code, it refuses what goes beyond. */
#define L0DRV_MAX_ARGS 64
#define L0DRV_MAX_ARG_SIZE 256

/** The one OpenCL context every Level Zero object of the process uses. */
struct l0drv_cl {
	cl_platform_id platform;
	cl_device_id device;
	cl_context context;
	cl_command_queue queue;
	char device_name[128];
	cl_uint compute_units;
	size_t max_group_size;
	/* clSetKernelArgSVMPointer and friends are OpenCL 2.0: resolved once. */
};

struct _ze_driver_handle_t {
	int magic;
};
struct _ze_device_handle_t {
	int magic;
};
struct _ze_context_handle_t {
	int magic;
};

/** A USM allocation (or an imported host range) the driver knows. */
struct l0drv_alloc {
	void *ptr;
	size_t size;
	ze_memory_type_t type;
	int svm; /* 1: clSVMAlloc'ed; 0: imported host memory */
	struct l0drv_alloc *next;
};

struct _ze_module_handle_t {
	cl_program program;
	char *kernel_names; /* CL_PROGRAM_KERNEL_NAMES, split in place */
	const char **names;
	uint32_t nnames;
};

struct _ze_module_build_log_handle_t {
	char *text;
};

/** One argument value as set by zeKernelSetArgumentValue. */
struct l0drv_arg {
	int set;
	size_t size;
	int is_null; /* pArgValue NULL: local memory of `size` bytes */
	unsigned char value[L0DRV_MAX_ARG_SIZE];
};

struct _ze_kernel_handle_t {
	cl_kernel kernel;
	char *name;
	uint32_t nargs;
	cl_kernel_arg_address_qualifier qual[L0DRV_MAX_ARGS];
	int qual_known;
	uint32_t group[3];
	struct l0drv_arg args[L0DRV_MAX_ARGS];
};

struct _ze_event_pool_handle_t {
	uint32_t count;
};

struct _ze_event_handle_t {
	atomic_int signaled;
};

struct _ze_fence_handle_t {
	atomic_int signaled;
};

enum l0drv_cmd_kind {
	L0DRV_CMD_LAUNCH,
	L0DRV_CMD_COPY,
	L0DRV_CMD_FILL,
	L0DRV_CMD_SIGNAL,
	L0DRV_CMD_RESET,
	L0DRV_CMD_WAIT,
	L0DRV_CMD_BARRIER,
};

/** A recorded command; a launch keeps the arguments of its append time. */
struct l0drv_cmd {
	enum l0drv_cmd_kind kind;
	ze_event_handle_t signal;
	uint32_t nwait;
	ze_event_handle_t *wait;
	/* launch */
	ze_kernel_handle_t kernel;
	uint32_t group[3];
	ze_group_count_t count;
	struct l0drv_arg *args;
	uint32_t nargs;
	/* copy / fill */
	void *dst;
	const void *src;
	size_t size;
	unsigned char pattern[128];
	size_t pattern_size;
	struct l0drv_cmd *next;
};

struct _ze_command_list_handle_t {
	int immediate;
	int closed;
	struct l0drv_cmd *head, *tail;
};

struct _ze_command_queue_handle_t {
	int magic;
};

extern struct l0drv_cl l0drv_cl_state;

/* l0drv_core.c */
struct l0drv_alloc *l0drv_alloc_find(const void *ptr);
ze_result_t l0drv_cl_result(cl_int err);

/* l0drv_exec.c: the function tables of modules, kernels, lists, queues, events, fences */
ze_result_t l0drv_run_cmd(struct l0drv_cmd *cmd);
void l0drv_fill_module_table(ze_module_dditable_t *t);
void l0drv_fill_build_log_table(ze_module_build_log_dditable_t *t);
void l0drv_fill_kernel_table(ze_kernel_dditable_t *t);
void l0drv_fill_command_list_table(ze_command_list_dditable_t *t);
void l0drv_fill_command_queue_table(ze_command_queue_dditable_t *t);
void l0drv_fill_event_pool_table(ze_event_pool_dditable_t *t);
void l0drv_fill_event_table(ze_event_dditable_t *t);
void l0drv_fill_fence_table(ze_fence_dditable_t *t);

#endif /* GBPF_L0DRV_H */
