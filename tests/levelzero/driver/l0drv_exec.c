/* SPDX-License-Identifier: MIT */
/*
 * Test-only Level Zero driver: modules (SPIR-V -> LLVM bitcode -> OpenCL
 * program), kernels, command lists and queues, events and fences.
 * Execution is in order and synchronous: see l0drv.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "l0drv.h"

#ifndef L0DRV_LLVM_SPIRV
#define L0DRV_LLVM_SPIRV "llvm-spirv-15"
#endif
#define L0DRV_MAX_MODULE (64u << 20) /* SPIR-V bytes accepted */
#define L0DRV_WAIT_NS (10ull * 1000000000ull)

extern char **environ;

/* One launch at a time: a cl_kernel's arguments are per-kernel state. */
static pthread_mutex_t l0drv_launch_lock = PTHREAD_MUTEX_INITIALIZER;

/* --- modules -------------------------------------------------------------- */

static ze_module_build_log_handle_t l0drv_log_new(const char *text)
{
	ze_module_build_log_handle_t l = calloc(1, sizeof(*l));

	if (l)
		l->text = strdup(text ? text : "");
	return l;
}

static int l0drv_write_file(const char *path, const void *data, size_t size)
{
	int fd = open(path, O_WRONLY | O_TRUNC | O_CREAT, 0600);
	const char *p = data;
	ssize_t n;

	if (fd < 0)
		return -errno;
	while (size) {
		n = write(fd, p, size);
		if (n <= 0) {
			close(fd);
			return -EIO;
		}
		p += n;
		size -= (size_t)n;
	}
	return close(fd) ? -errno : 0;
}

static void *l0drv_read_file(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	long len;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (len = ftell(f)) > 0 && len < (long)L0DRV_MAX_MODULE * 4 &&
	    fseek(f, 0, SEEK_SET) == 0) {
		buf = malloc((size_t)len);
		if (buf && fread(buf, 1, (size_t)len, f) != (size_t)len) {
			free(buf);
			buf = NULL;
		}
		*size = (size_t)len;
	}
	fclose(f);
	return buf;
}

/*
 * PoCL 3.1 takes no SPIR-V IL (clCreateProgramWithIL answers -30), so the
 * module goes through llvm-spirv -r. The child gets the environment
 * without LD_PRELOAD: an interposer preloaded into the application (gbpf's
 * agent) must not run inside the translator.
 */
static int l0drv_spirv_to_bc(const void *spv, size_t size, void **bc, size_t *bc_size, char *why,
			     size_t why_size)
{
	const char *tool = getenv("GBPF_L0DRV_LLVM_SPIRV");
	const char *tmp = getenv("TMPDIR");
	char dir[256], in[300], out[300];
	char **env = NULL;
	size_t n = 0, i, k = 0;
	pid_t pid;
	int status = 0, err;

	if (!tool || !*tool)
		tool = L0DRV_LLVM_SPIRV;
	snprintf(dir, sizeof(dir), "%s/l0drv-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		snprintf(why, why_size, "mkdtemp %s: %s", dir, strerror(errno));
		return -errno;
	}
	snprintf(in, sizeof(in), "%s/m.spv", dir);
	snprintf(out, sizeof(out), "%s/m.bc", dir);
	err = l0drv_write_file(in, spv, size);
	if (err) {
		snprintf(why, why_size, "write %s: %s", in, strerror(-err));
		goto out;
	}
	while (environ && environ[n])
		n++;
	env = calloc(n + 1, sizeof(*env));
	if (!env) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < n; i++)
		if (strncmp(environ[i], "LD_PRELOAD=", 11))
			env[k++] = environ[i];
	{
		char *argv[] = {(char *)tool, "-r", in, "-o", out, NULL};

		err = posix_spawnp(&pid, tool, NULL, NULL, argv, env);
	}
	if (err) {
		snprintf(why, why_size, "cannot run %s: %s", tool, strerror(err));
		err = -err;
		goto out;
	}
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status)) {
		snprintf(why, why_size, "%s -r failed (status %d): the SPIR-V module was refused",
			 tool, status);
		err = -EINVAL;
		goto out;
	}
	*bc = l0drv_read_file(out, bc_size);
	if (!*bc) {
		snprintf(why, why_size, "cannot read %s", out);
		err = -EIO;
	}
out:
	free(env);
	unlink(in);
	unlink(out);
	rmdir(dir);
	return err;
}

/* CL_PROGRAM_KERNEL_NAMES is "a;b;c": split it in place into m->names. */
static int l0drv_split_names(ze_module_handle_t m)
{
	uint32_t n = 1;
	char *p;

	if (!*m->kernel_names)
		return 0;
	for (p = m->kernel_names; *p; p++)
		n += *p == ';';
	m->names = calloc(n, sizeof(*m->names));
	if (!m->names)
		return -ENOMEM;
	m->names[m->nnames++] = m->kernel_names;
	for (p = m->kernel_names; *p; p++)
		if (*p == ';') {
			*p = 0;
			m->names[m->nnames++] = p + 1;
		}
	return 0;
}

static ze_result_t ZE_APICALL l0drv_module_create(ze_context_handle_t c, ze_device_handle_t d,
						  const ze_module_desc_t *desc,
						  ze_module_handle_t *out,
						  ze_module_build_log_handle_t *log_out)
{
	const struct l0drv_cl *s = &l0drv_cl_state;
	char why[512] = "";
	void *bc = NULL;
	size_t bc_size = 0, names = 0;
	cl_int err, bin_status;
	ze_module_handle_t m = NULL;
	ze_result_t r = ZE_RESULT_ERROR_MODULE_BUILD_FAILURE;
	uint32_t magic;

	if (log_out)
		*log_out = NULL;
	if (!desc || !out || !desc->pInputModule)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	if (desc->format != ZE_MODULE_FORMAT_IL_SPIRV) {
		snprintf(why, sizeof(why), "native module format: this driver takes SPIR-V only");
		r = ZE_RESULT_ERROR_INVALID_NATIVE_BINARY;
		goto out;
	}
	if (desc->pConstants && desc->pConstants->numConstants) {
		snprintf(why, sizeof(why), "specialization constants are not supported");
		r = ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
		goto out;
	}
	memcpy(&magic, desc->pInputModule, desc->inputSize >= 4 ? 4 : 0);
	if (desc->inputSize < 20 || desc->inputSize % 4 || desc->inputSize > L0DRV_MAX_MODULE ||
	    magic != 0x07230203) {
		snprintf(why, sizeof(why), "module of %zu bytes is not a SPIR-V binary",
			 desc->inputSize);
		r = ZE_RESULT_ERROR_INVALID_SIZE;
		goto out;
	}
	if (l0drv_spirv_to_bc(desc->pInputModule, desc->inputSize, &bc, &bc_size, why,
			      sizeof(why)))
		goto out;
	m = calloc(1, sizeof(*m));
	if (!m) {
		r = ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
		goto out;
	}
	m->program = clCreateProgramWithBinary(s->context, 1, &s->device, &bc_size,
					       (const unsigned char **)&bc, &bin_status, &err);
	if (!m->program) {
		snprintf(why, sizeof(why), "clCreateProgramWithBinary failed (%d)", err);
		goto out;
	}
	err = clBuildProgram(m->program, 1, &s->device, "", NULL, NULL);
	if (err != CL_SUCCESS) {
		size_t n = 0;

		clGetProgramBuildInfo(m->program, s->device, CL_PROGRAM_BUILD_LOG, sizeof(why) - 1,
				      why, &n);
		why[sizeof(why) - 1] = 0;
		goto out;
	}
	clGetProgramInfo(m->program, CL_PROGRAM_KERNEL_NAMES, 0, NULL, &names);
	m->kernel_names = calloc(1, names + 1);
	if (!m->kernel_names) {
		r = ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
		goto out;
	}
	clGetProgramInfo(m->program, CL_PROGRAM_KERNEL_NAMES, names, m->kernel_names, NULL);
	if (l0drv_split_names(m)) {
		r = ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
		goto out;
	}
	r = ZE_RESULT_SUCCESS;
	*out = m;
	m = NULL;
out:
	if (m) {
		if (m->program)
			clReleaseProgram(m->program);
		free(m->kernel_names);
		free(m->names);
		free(m);
	}
	free(bc);
	if (log_out)
		*log_out = l0drv_log_new(why);
	return r;
}

static ze_result_t ZE_APICALL l0drv_module_destroy(ze_module_handle_t m)
{
	if (!m)
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	clReleaseProgram(m->program);
	free(m->kernel_names);
	free(m->names);
	free(m);
	return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL l0drv_module_kernel_names(ze_module_handle_t m, uint32_t *count,
							const char **names)
{
	uint32_t i;

	if (!m || !count)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	if (names)
		for (i = 0; i < *count && i < m->nnames; i++)
			names[i] = m->names[i];
	*count = names && *count < m->nnames ? *count : m->nnames;
	return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL l0drv_module_props(ze_module_handle_t m, ze_module_properties_t *p)
{
	if (!m || !p)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	p->flags = 0;
	return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL l0drv_log_destroy(ze_module_build_log_handle_t l)
{
	if (!l)
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	free(l->text);
	free(l);
	return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL l0drv_log_string(ze_module_build_log_handle_t l, size_t *size,
					       char *text)
{
	size_t need;

	if (!l || !size)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	need = strlen(l->text ? l->text : "") + 1;
	if (text && *size) {
		snprintf(text, *size, "%s", l->text ? l->text : "");
	}
	*size = need;
	return ZE_RESULT_SUCCESS;
}

void l0drv_fill_module_table(ze_module_dditable_t *t)
{
	t->pfnCreate = l0drv_module_create;
	t->pfnDestroy = l0drv_module_destroy;
	t->pfnGetKernelNames = l0drv_module_kernel_names;
	t->pfnGetProperties = l0drv_module_props;
}

void l0drv_fill_build_log_table(ze_module_build_log_dditable_t *t)
{
	t->pfnDestroy = l0drv_log_destroy;
	t->pfnGetString = l0drv_log_string;
}

/* --- kernels -------------------------------------------------------------- */

static ze_result_t ZE_APICALL l0drv_kernel_create(ze_module_handle_t m, const ze_kernel_desc_t *desc,
						  ze_kernel_handle_t *out)
{
	ze_kernel_handle_t k;
	cl_uint nargs = 0;
	cl_int err;
	uint32_t i;

	if (!m || !desc || !desc->pKernelName || !out)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	k = calloc(1, sizeof(*k));
	if (!k)
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	k->kernel = clCreateKernel(m->program, desc->pKernelName, &err);
	if (!k->kernel) {
		free(k);
		return ZE_RESULT_ERROR_INVALID_KERNEL_NAME;
	}
	clGetKernelInfo(k->kernel, CL_KERNEL_NUM_ARGS, sizeof(nargs), &nargs, NULL);
	if (nargs > L0DRV_MAX_ARGS) {
		clReleaseKernel(k->kernel);
		free(k);
		return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
	}
	k->nargs = nargs;
	k->name = strdup(desc->pKernelName);
	k->group[0] = k->group[1] = k->group[2] = 1;
	/* Pointer arguments are passed as SVM pointers, values as bytes. */
	k->qual_known = 1;
	for (i = 0; i < nargs; i++)
		if (clGetKernelArgInfo(k->kernel, i, CL_KERNEL_ARG_ADDRESS_QUALIFIER,
				       sizeof(k->qual[i]), &k->qual[i], NULL) != CL_SUCCESS)
			k->qual_known = 0;
	*out = k;
	return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL l0drv_kernel_destroy(ze_kernel_handle_t k)
{
	if (!k)
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	clReleaseKernel(k->kernel);
	free(k->name);
	free(k);
	return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL l0drv_kernel_group_size(ze_kernel_handle_t k, uint32_t x, uint32_t y,
						      uint32_t z)
{
	if (!k)
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!x || !y || !z || (uint64_t)x * y * z > l0drv_cl_state.max_group_size)
		return ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION;
	k->group[0] = x;
	k->group[1] = y;
	k->group[2] = z;
	return ZE_RESULT_SUCCESS;
}

static uint32_t l0drv_divisor(uint32_t n, uint32_t limit)
{
	uint32_t d;

	for (d = limit < n ? limit : n; d > 1; d--)
		if (n % d == 0)
			return d;
	return 1;
}

static ze_result_t ZE_APICALL l0drv_kernel_suggest(ze_kernel_handle_t k, uint32_t gx, uint32_t gy,
						   uint32_t gz, uint32_t *x, uint32_t *y,
						   uint32_t *z)
{
	if (!k || !x || !y || !z)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	*x = l0drv_divisor(gx, 64);
	*y = l0drv_divisor(gy, 64 / *x ? 64 / *x : 1);
	*z = 1;
	return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL l0drv_kernel_arg(ze_kernel_handle_t k, uint32_t idx, size_t size,
					       const void *value)
{
	struct l0drv_arg *a;

	if (!k)
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (idx >= k->nargs)
		return ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX;
	if (size == 0 || (value && size > L0DRV_MAX_ARG_SIZE))
		return ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE;
	a = &k->args[idx];
	a->set = 1;
	a->size = size;
	a->is_null = value == NULL;
	if (value)
		memcpy(a->value, value, size);
	return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL l0drv_kernel_indirect(ze_kernel_handle_t k,
						    ze_kernel_indirect_access_flags_t f)
{
	return k ? ZE_RESULT_SUCCESS : ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
}

static ze_result_t ZE_APICALL l0drv_kernel_props(ze_kernel_handle_t k, ze_kernel_properties_t *p)
{
	if (!k || !p)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	p->numKernelArgs = k->nargs;
	p->requiredGroupSizeX = p->requiredGroupSizeY = p->requiredGroupSizeZ = 0;
	p->requiredNumSubGroups = 0;
	p->requiredSubgroupSize = 0;
	p->maxSubgroupSize = 1;
	p->maxNumSubgroups = (uint32_t)l0drv_cl_state.max_group_size;
	p->localMemSize = 0;
	p->privateMemSize = 0;
	p->spillMemSize = 0;
	memset(&p->uuid, 0, sizeof(p->uuid));
	return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL l0drv_kernel_name(ze_kernel_handle_t k, size_t *size, char *name)
{
	if (!k || !size)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	if (name && *size)
		snprintf(name, *size, "%s", k->name);
	*size = strlen(k->name) + 1;
	return ZE_RESULT_SUCCESS;
}

void l0drv_fill_kernel_table(ze_kernel_dditable_t *t)
{
	t->pfnCreate = l0drv_kernel_create;
	t->pfnDestroy = l0drv_kernel_destroy;
	t->pfnSetGroupSize = l0drv_kernel_group_size;
	t->pfnSuggestGroupSize = l0drv_kernel_suggest;
	t->pfnSetArgumentValue = l0drv_kernel_arg;
	t->pfnSetIndirectAccess = l0drv_kernel_indirect;
	t->pfnGetProperties = l0drv_kernel_props;
	t->pfnGetName = l0drv_kernel_name;
}

/* --- execution ------------------------------------------------------------ */

static uint64_t l0drv_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Events signalled by the host after the append are waited for, bounded. */
static ze_result_t l0drv_wait_event(ze_event_handle_t e, uint64_t timeout_ns)
{
	uint64_t end = l0drv_now_ns() + timeout_ns;

	while (!atomic_load(&e->signaled)) {
		if (timeout_ns == 0 || l0drv_now_ns() >= end)
			return ZE_RESULT_NOT_READY;
		usleep(100);
	}
	return ZE_RESULT_SUCCESS;
}

static ze_result_t l0drv_launch(struct l0drv_cmd *c)
{
	ze_kernel_handle_t k = c->kernel;
	size_t global[3], local[3];
	cl_int err = CL_SUCCESS;
	uint32_t i;

	for (i = 0; i < 3; i++) {
		local[i] = c->group[i];
		global[i] = (size_t)c->group[i] * (&c->count.groupCountX)[i];
	}
	if (!global[0] || !global[1] || !global[2])
		return ZE_RESULT_SUCCESS; /* nothing to run */
	pthread_mutex_lock(&l0drv_launch_lock);
	for (i = 0; i < c->nargs && err == CL_SUCCESS; i++) {
		const struct l0drv_arg *a = &c->args[i];
		int ptr;

		if (!a->set) {
			err = CL_INVALID_KERNEL_ARGS;
			break;
		}
		if (a->is_null) {
			err = clSetKernelArg(k->kernel, i, a->size, NULL);
			continue;
		}
		if (k->qual_known)
			ptr = k->qual[i] == CL_KERNEL_ARG_ADDRESS_GLOBAL ||
			      k->qual[i] == CL_KERNEL_ARG_ADDRESS_CONSTANT;
		else
			ptr = a->size == sizeof(void *) &&
			      l0drv_alloc_find(*(void *const *)a->value) != NULL;
		if (ptr && a->size == sizeof(void *))
			err = clSetKernelArgSVMPointer(k->kernel, i, *(void *const *)a->value);
		else
			err = clSetKernelArg(k->kernel, i, a->size, a->value);
	}
	if (err == CL_SUCCESS)
		err = clEnqueueNDRangeKernel(l0drv_cl_state.queue, k->kernel, 3, NULL, global,
					     local, 0, NULL, NULL);
	if (err == CL_SUCCESS)
		err = clFinish(l0drv_cl_state.queue);
	pthread_mutex_unlock(&l0drv_launch_lock);
	if (err != CL_SUCCESS)
		fprintf(stderr, "l0drv: launch of kernel %s failed: OpenCL error %d\n", k->name,
			err);
	return l0drv_cl_result(err);
}

ze_result_t l0drv_run_cmd(struct l0drv_cmd *c)
{
	ze_result_t r = ZE_RESULT_SUCCESS;
	uint32_t i;
	size_t off;

	for (i = 0; i < c->nwait; i++)
		if (c->wait[i] && l0drv_wait_event(c->wait[i], L0DRV_WAIT_NS) != ZE_RESULT_SUCCESS)
			return ZE_RESULT_ERROR_DEVICE_LOST; /* never signalled: give up */
	switch (c->kind) {
	case L0DRV_CMD_LAUNCH:
		r = l0drv_launch(c);
		break;
	case L0DRV_CMD_COPY:
		memmove(c->dst, c->src, c->size);
		break;
	case L0DRV_CMD_FILL:
		for (off = 0; off < c->size; off += c->pattern_size)
			memcpy((char *)c->dst + off, c->pattern,
			       c->size - off < c->pattern_size ? c->size - off : c->pattern_size);
		break;
	case L0DRV_CMD_RESET:
		atomic_store(&c->signal->signaled, 0);
		return ZE_RESULT_SUCCESS;
	case L0DRV_CMD_SIGNAL:
	case L0DRV_CMD_WAIT:
	case L0DRV_CMD_BARRIER:
		break;
	}
	if (r == ZE_RESULT_SUCCESS && c->signal)
		atomic_store(&c->signal->signaled, 1);
	return r;
}

/* --- command lists -------------------------------------------------------- */

static void l0drv_cmd_free(struct l0drv_cmd *c)
{
	free(c->wait);
	free(c->args);
	free(c);
}

static void l0drv_list_clear(ze_command_list_handle_t l)
{
	struct l0drv_cmd *c, *n;

	for (c = l->head; c; c = n) {
		n = c->next;
		l0drv_cmd_free(c);
	}
	l->head = l->tail = NULL;
}

static struct l0drv_cmd *l0drv_cmd_new(enum l0drv_cmd_kind kind, ze_event_handle_t signal,
				       uint32_t nwait, const ze_event_handle_t *wait)
{
	struct l0drv_cmd *c;

	if (nwait > 4096)
		return NULL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->kind = kind;
	c->signal = signal;
	if (nwait && wait) {
		c->wait = calloc(nwait, sizeof(*c->wait));
		if (!c->wait) {
			free(c);
			return NULL;
		}
		memcpy(c->wait, wait, nwait * sizeof(*wait));
		c->nwait = nwait;
	}
	return c;
}

/* Immediate lists run the command now; regular lists keep it for a queue. */
static ze_result_t l0drv_submit(ze_command_list_handle_t l, struct l0drv_cmd *c)
{
	ze_result_t r;

	if (!c)
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	if (l->immediate) {
		r = l0drv_run_cmd(c);
		l0drv_cmd_free(c);
		return r;
	}
	if (l->closed) {
		l0drv_cmd_free(c);
		return ZE_RESULT_ERROR_INVALID_ARGUMENT;
	}
	if (l->tail)
		l->tail->next = c;
	else
		l->head = c;
	l->tail = c;
	return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL l0drv_list_create(ze_context_handle_t ctx, ze_device_handle_t d,
						const ze_command_list_desc_t *desc,
						ze_command_list_handle_t *out)
{
	ze_command_list_handle_t l;

	if (!out)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	l = calloc(1, sizeof(*l));
	if (!l)
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	*out = l;
	return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL l0drv_list_create_imm(ze_context_handle_t ctx, ze_device_handle_t d,
						    const ze_command_queue_desc_t *desc,
						    ze_command_list_handle_t *out)
{
	ze_result_t r = l0drv_list_create(ctx, d, NULL, out);

	if (r == ZE_RESULT_SUCCESS)
		(*out)->immediate = 1;
	return r;
}

static ze_result_t ZE_APICALL l0drv_list_destroy(ze_command_list_handle_t l)
{
	if (!l)
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	l0drv_list_clear(l);
	free(l);
	return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL l0drv_list_close(ze_command_list_handle_t l)
{
	if (!l)
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	l->closed = 1;
	return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL l0drv_list_reset(ze_command_list_handle_t l)
{
	if (!l)
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	l0drv_list_clear(l);
	l->closed = 0;
	return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL l0drv_list_barrier(ze_command_list_handle_t l, ze_event_handle_t sig,
						 uint32_t nwait, ze_event_handle_t *wait)
{
	return l0drv_submit(l, l0drv_cmd_new(L0DRV_CMD_BARRIER, sig, nwait, wait));
}

static ze_result_t ZE_APICALL l0drv_list_ranges_barrier(ze_command_list_handle_t l, uint32_t n,
							const size_t *sizes, const void **ranges,
							ze_event_handle_t sig, uint32_t nwait,
							ze_event_handle_t *wait)
{
	return l0drv_submit(l, l0drv_cmd_new(L0DRV_CMD_BARRIER, sig, nwait, wait));
}

static ze_result_t ZE_APICALL l0drv_list_copy(ze_command_list_handle_t l, void *dst,
					      const void *src, size_t size, ze_event_handle_t sig,
					      uint32_t nwait, ze_event_handle_t *wait)
{
	struct l0drv_cmd *c;

	if (!dst || !src)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	c = l0drv_cmd_new(L0DRV_CMD_COPY, sig, nwait, wait);
	if (c) {
		c->dst = dst;
		c->src = src;
		c->size = size;
	}
	return l0drv_submit(l, c);
}

static ze_result_t ZE_APICALL l0drv_list_fill(ze_command_list_handle_t l, void *ptr,
					      const void *pattern, size_t psize, size_t size,
					      ze_event_handle_t sig, uint32_t nwait,
					      ze_event_handle_t *wait)
{
	struct l0drv_cmd *c;

	if (!ptr || !pattern)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	if (!psize || psize > sizeof(c->pattern) || (psize & (psize - 1)))
		return ZE_RESULT_ERROR_INVALID_SIZE;
	c = l0drv_cmd_new(L0DRV_CMD_FILL, sig, nwait, wait);
	if (c) {
		c->dst = ptr;
		c->size = size;
		memcpy(c->pattern, pattern, psize);
		c->pattern_size = psize;
	}
	return l0drv_submit(l, c);
}

static ze_result_t ZE_APICALL l0drv_list_signal(ze_command_list_handle_t l, ze_event_handle_t e)
{
	if (!e)
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	return l0drv_submit(l, l0drv_cmd_new(L0DRV_CMD_SIGNAL, e, 0, NULL));
}

static ze_result_t ZE_APICALL l0drv_list_wait(ze_command_list_handle_t l, uint32_t n,
					      ze_event_handle_t *events)
{
	return l0drv_submit(l, l0drv_cmd_new(L0DRV_CMD_WAIT, NULL, n, events));
}

static ze_result_t ZE_APICALL l0drv_list_reset_event(ze_command_list_handle_t l,
						     ze_event_handle_t e)
{
	if (!e)
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	return l0drv_submit(l, l0drv_cmd_new(L0DRV_CMD_RESET, e, 0, NULL));
}

static ze_result_t ZE_APICALL l0drv_list_launch(ze_command_list_handle_t l, ze_kernel_handle_t k,
						const ze_group_count_t *count,
						ze_event_handle_t sig, uint32_t nwait,
						ze_event_handle_t *wait)
{
	struct l0drv_cmd *c;

	if (!l || !k)
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!count)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	c = l0drv_cmd_new(L0DRV_CMD_LAUNCH, sig, nwait, wait);
	if (!c)
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	c->kernel = k;
	memcpy(c->group, k->group, sizeof(c->group));
	c->count = *count;
	c->nargs = k->nargs;
	if (k->nargs) {
		/* Level Zero captures arguments at append time. */
		c->args = calloc(k->nargs, sizeof(*c->args));
		if (!c->args) {
			l0drv_cmd_free(c);
			return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
		}
		memcpy(c->args, k->args, k->nargs * sizeof(*c->args));
	}
	return l0drv_submit(l, c);
}

static ze_result_t ZE_APICALL l0drv_list_prefetch(ze_command_list_handle_t l, const void *p,
						  size_t size)
{
	return l ? ZE_RESULT_SUCCESS : ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
}

static ze_result_t ZE_APICALL l0drv_list_advise(ze_command_list_handle_t l, ze_device_handle_t d,
						const void *p, size_t size, ze_memory_advice_t a)
{
	return l ? ZE_RESULT_SUCCESS : ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
}

void l0drv_fill_command_list_table(ze_command_list_dditable_t *t)
{
	t->pfnCreate = l0drv_list_create;
	t->pfnCreateImmediate = l0drv_list_create_imm;
	t->pfnDestroy = l0drv_list_destroy;
	t->pfnClose = l0drv_list_close;
	t->pfnReset = l0drv_list_reset;
	t->pfnAppendBarrier = l0drv_list_barrier;
	t->pfnAppendMemoryRangesBarrier = l0drv_list_ranges_barrier;
	t->pfnAppendMemoryCopy = l0drv_list_copy;
	t->pfnAppendMemoryFill = l0drv_list_fill;
	t->pfnAppendSignalEvent = l0drv_list_signal;
	t->pfnAppendWaitOnEvents = l0drv_list_wait;
	t->pfnAppendEventReset = l0drv_list_reset_event;
	t->pfnAppendLaunchKernel = l0drv_list_launch;
	t->pfnAppendMemoryPrefetch = l0drv_list_prefetch;
	t->pfnAppendMemAdvise = l0drv_list_advise;
}

/* --- queues, fences, events ------------------------------------------------ */

static ze_result_t ZE_APICALL l0drv_queue_create(ze_context_handle_t ctx, ze_device_handle_t d,
						 const ze_command_queue_desc_t *desc,
						 ze_command_queue_handle_t *out)
{
	ze_command_queue_handle_t q;

	if (!out)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	q = calloc(1, sizeof(*q));
	if (!q)
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	*out = q;
	return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL l0drv_queue_destroy(ze_command_queue_handle_t q)
{
	if (!q)
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	free(q);
	return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL l0drv_queue_execute(ze_command_queue_handle_t q, uint32_t n,
						  ze_command_list_handle_t *lists,
						  ze_fence_handle_t fence)
{
	ze_result_t r = ZE_RESULT_SUCCESS;
	struct l0drv_cmd *c;
	uint32_t i;

	if (!q)
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (n && !lists)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	for (i = 0; i < n && r == ZE_RESULT_SUCCESS; i++) {
		if (!lists[i] || lists[i]->immediate || !lists[i]->closed)
			return ZE_RESULT_ERROR_INVALID_ARGUMENT;
		for (c = lists[i]->head; c && r == ZE_RESULT_SUCCESS; c = c->next)
			r = l0drv_run_cmd(c);
	}
	if (fence && r == ZE_RESULT_SUCCESS)
		atomic_store(&fence->signaled, 1);
	return r;
}

static ze_result_t ZE_APICALL l0drv_queue_sync(ze_command_queue_handle_t q, uint64_t timeout)
{
	return q ? ZE_RESULT_SUCCESS : ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
}

void l0drv_fill_command_queue_table(ze_command_queue_dditable_t *t)
{
	t->pfnCreate = l0drv_queue_create;
	t->pfnDestroy = l0drv_queue_destroy;
	t->pfnExecuteCommandLists = l0drv_queue_execute;
	t->pfnSynchronize = l0drv_queue_sync;
}

static ze_result_t ZE_APICALL l0drv_fence_create(ze_command_queue_handle_t q,
						 const ze_fence_desc_t *desc, ze_fence_handle_t *out)
{
	ze_fence_handle_t f;

	if (!out)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	f = calloc(1, sizeof(*f));
	if (!f)
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	atomic_store(&f->signaled, desc && (desc->flags & ZE_FENCE_FLAG_SIGNALED) ? 1 : 0);
	*out = f;
	return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL l0drv_fence_destroy(ze_fence_handle_t f)
{
	if (!f)
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	free(f);
	return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL l0drv_fence_sync(ze_fence_handle_t f, uint64_t timeout)
{
	if (!f)
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	/* Work is synchronous: an unsignalled fence was never submitted. */
	return atomic_load(&f->signaled) ? ZE_RESULT_SUCCESS : ZE_RESULT_NOT_READY;
}

static ze_result_t ZE_APICALL l0drv_fence_query(ze_fence_handle_t f)
{
	return l0drv_fence_sync(f, 0);
}

static ze_result_t ZE_APICALL l0drv_fence_reset(ze_fence_handle_t f)
{
	if (!f)
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	atomic_store(&f->signaled, 0);
	return ZE_RESULT_SUCCESS;
}

void l0drv_fill_fence_table(ze_fence_dditable_t *t)
{
	t->pfnCreate = l0drv_fence_create;
	t->pfnDestroy = l0drv_fence_destroy;
	t->pfnHostSynchronize = l0drv_fence_sync;
	t->pfnQueryStatus = l0drv_fence_query;
	t->pfnReset = l0drv_fence_reset;
}

static ze_result_t ZE_APICALL l0drv_pool_create(ze_context_handle_t ctx,
						const ze_event_pool_desc_t *desc, uint32_t ndev,
						ze_device_handle_t *devs, ze_event_pool_handle_t *out)
{
	ze_event_pool_handle_t p;

	if (!desc || !out)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	p = calloc(1, sizeof(*p));
	if (!p)
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	p->count = desc->count;
	*out = p;
	return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL l0drv_pool_destroy(ze_event_pool_handle_t p)
{
	if (!p)
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	free(p);
	return ZE_RESULT_SUCCESS;
}

void l0drv_fill_event_pool_table(ze_event_pool_dditable_t *t)
{
	t->pfnCreate = l0drv_pool_create;
	t->pfnDestroy = l0drv_pool_destroy;
}

static ze_result_t ZE_APICALL l0drv_event_create(ze_event_pool_handle_t p,
						 const ze_event_desc_t *desc, ze_event_handle_t *out)
{
	ze_event_handle_t e;

	if (!p || !desc || !out)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	if (desc->index >= p->count)
		return ZE_RESULT_ERROR_INVALID_ARGUMENT;
	e = calloc(1, sizeof(*e));
	if (!e)
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	*out = e;
	return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL l0drv_event_destroy(ze_event_handle_t e)
{
	if (!e)
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	free(e);
	return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL l0drv_event_signal(ze_event_handle_t e)
{
	if (!e)
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	atomic_store(&e->signaled, 1);
	return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL l0drv_event_sync(ze_event_handle_t e, uint64_t timeout)
{
	if (!e)
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	return l0drv_wait_event(e, timeout > L0DRV_WAIT_NS ? L0DRV_WAIT_NS : timeout);
}

static ze_result_t ZE_APICALL l0drv_event_query(ze_event_handle_t e)
{
	return l0drv_event_sync(e, 0);
}

static ze_result_t ZE_APICALL l0drv_event_reset(ze_event_handle_t e)
{
	if (!e)
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	atomic_store(&e->signaled, 0);
	return ZE_RESULT_SUCCESS;
}

void l0drv_fill_event_table(ze_event_dditable_t *t)
{
	t->pfnCreate = l0drv_event_create;
	t->pfnDestroy = l0drv_event_destroy;
	t->pfnHostSignal = l0drv_event_signal;
	t->pfnHostSynchronize = l0drv_event_sync;
	t->pfnQueryStatus = l0drv_event_query;
	t->pfnHostReset = l0drv_event_reset;
}
