/* SPDX-License-Identifier: MIT */
/*
 * plugins/spirv/spv_tools.c - validation and disassembly through the
 * SPIRV-Tools C API (static libraries; their C++ stays inside the plugin).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <spirv-tools/libspirv.h>

#include "spv_internal.h"

/* Does the module declare capability @p cap? Walks the leading OpCapability run. */
static int has_cap(const uint32_t *w, size_t count, uint32_t cap)
{
	size_t i = 5;

	while (i < count) {
		uint32_t len = w[i] >> 16, op = w[i] & 0xffff;

		if (!len || i + len > count)
			return 0;
		if (op == SpvOpCapability && len == 2 && w[i + 1] == cap)
			return 1;
		if (op != SpvOpCapability)
			return 0;
		i += len;
	}
	return 0;
}

static spv_target_env pick_env(const uint32_t *w, size_t count, enum gbpf_spirv_env env)
{
	uint32_t minor;

	switch (env) {
	case GBPF_SPIRV_ENV_OPENCL_1_2: return SPV_ENV_OPENCL_1_2;
	case GBPF_SPIRV_ENV_OPENCL_2_0: return SPV_ENV_OPENCL_2_0;
	case GBPF_SPIRV_ENV_OPENCL_2_1: return SPV_ENV_OPENCL_2_1;
	case GBPF_SPIRV_ENV_OPENCL_2_2: return SPV_ENV_OPENCL_2_2;
	case GBPF_SPIRV_ENV_UNIVERSAL_1_5: return SPV_ENV_UNIVERSAL_1_5;
	default: break;
	}
	minor = (w[1] >> 8) & 0xff;
	/* SPIR-V 1.0 is the IL of OpenCL 1.2 (cl_khr_il_program) and 2.0/2.1;
	 * the generic address space (GenericPointer) needs OpenCL 2.0 */
	if (minor == 0)
		return has_cap(w, count, SpvCapabilityGenericPointer) ? SPV_ENV_OPENCL_2_0
								     : SPV_ENV_OPENCL_1_2;
	if (minor <= 2)
		return SPV_ENV_OPENCL_2_2;
	if (minor == 3)
		return SPV_ENV_UNIVERSAL_1_3;
	if (minor == 4)
		return SPV_ENV_UNIVERSAL_1_4;
	if (minor == 5)
		return SPV_ENV_UNIVERSAL_1_5;
	return SPV_ENV_UNIVERSAL_1_6;
}

static int validate_env(const uint32_t *words, size_t count, spv_target_env env, char *err,
			size_t err_size)
{
	spv_const_binary_t bin = {words, count};
	spv_diagnostic diag = NULL;
	spv_validator_options vo;
	spv_context ctx;
	spv_result_t r;

	ctx = spvContextCreate(env);
	vo = spvValidatorOptionsCreate();
	if (!ctx || !vo) {
		spvValidatorOptionsDestroy(vo);
		spvContextDestroy(ctx);
		return -ENOMEM;
	}
	r = spvValidateWithOptions(ctx, vo, &bin, &diag);
	if (r != SPV_SUCCESS && err && err_size) {
		if (diag)
			snprintf(err, err_size, "spirv-val (%s): word %zu: %s",
				 spvTargetEnvDescription(env), diag->position.index,
				 diag->error ? diag->error : "invalid module");
		else
			snprintf(err, err_size, "spirv-val: invalid module (%d)", (int)r);
	}
	spvDiagnosticDestroy(diag);
	spvValidatorOptionsDestroy(vo);
	spvContextDestroy(ctx);
	return r == SPV_SUCCESS ? 0 : -EPROTO;
}

static spv_target_env universal_env(uint32_t version)
{
	static const spv_target_env u[] = {SPV_ENV_UNIVERSAL_1_0, SPV_ENV_UNIVERSAL_1_1,
					   SPV_ENV_UNIVERSAL_1_2, SPV_ENV_UNIVERSAL_1_3,
					   SPV_ENV_UNIVERSAL_1_4, SPV_ENV_UNIVERSAL_1_5,
					   SPV_ENV_UNIVERSAL_1_6};
	uint32_t minor = (version >> 8) & 0xff;

	return u[minor > 6 ? 6 : minor];
}

/*
 * 64-bit atomics (cl_khr_int64_base_atomics) are an OpenCL extension that
 * SPIRV-Tools' OpenCL environments do not model: they reject the
 * Int64Atomics capability outright. Such modules are validated twice:
 * fully under the universal environment of their version, and under the
 * OpenCL environment with the capability removed, where the only error
 * accepted is the missing Int64Atomics one.
 */
static int validate_int64_atomics(const uint32_t *words, size_t count, spv_target_env env,
				  char *err, size_t err_size)
{
	uint32_t *copy;
	size_t i = 5, o = 5;
	int rc;

	rc = validate_env(words, count, universal_env(words[1]), err, err_size);
	if (rc)
		return rc;
	copy = malloc(count * sizeof(*copy));
	if (!copy)
		return -ENOMEM;
	memcpy(copy, words, 5 * sizeof(*copy));
	while (i < count) {
		uint32_t len = words[i] >> 16;

		if (!len || i + len > count) {
			free(copy);
			return -EPROTO; /* the universal pass would have said so */
		}
		if (!((words[i] & 0xffff) == SpvOpCapability && len == 2 &&
		      words[i + 1] == SpvCapabilityInt64Atomics)) {
			memcpy(copy + o, words + i, len * sizeof(*copy));
			o += len;
		}
		i += len;
	}
	rc = validate_env(copy, o, env, err, err_size);
	free(copy);
	if (rc == -EPROTO && err && strstr(err, "Int64Atomics")) {
		err[0] = 0;
		rc = 0;
	}
	return rc;
}

int gbpf_spirv_validate(const uint32_t *words, size_t count, enum gbpf_spirv_env env, char *err,
			size_t err_size)
{
	spv_target_env e;

	if (err && err_size)
		err[0] = 0;
	if (!words || count < 5) {
		if (err)
			snprintf(err, err_size, "spirv: module of %zu words is shorter than its header",
				 count);
		return -EINVAL;
	}
	if (words[0] != SpvMagicNumber) {
		if (err)
			snprintf(err, err_size, "spirv: word 0: bad magic 0x%08x", words[0]);
		return -EPROTO;
	}
	e = pick_env(words, count, env);
	if (has_cap(words, count, SpvCapabilityInt64Atomics) &&
	    (e == SPV_ENV_OPENCL_1_2 || e == SPV_ENV_OPENCL_2_0 || e == SPV_ENV_OPENCL_2_1 ||
	     e == SPV_ENV_OPENCL_2_2))
		return validate_int64_atomics(words, count, e, err, err_size);
	return validate_env(words, count, e, err, err_size);
}

int gbpf_spirv_disassemble(const uint32_t *words, size_t count, char **text)
{
	spv_context ctx;
	spv_text t = NULL;
	spv_diagnostic diag = NULL;
	spv_result_t r;

	if (!words || !text || count < 5)
		return -EINVAL;
	*text = NULL;
	ctx = spvContextCreate(SPV_ENV_UNIVERSAL_1_6);
	if (!ctx)
		return -ENOMEM;
	r = spvBinaryToText(ctx, words, count,
			    SPV_BINARY_TO_TEXT_OPTION_INDENT | SPV_BINARY_TO_TEXT_OPTION_FRIENDLY_NAMES,
			    &t, &diag);
	spvDiagnosticDestroy(diag);
	spvContextDestroy(ctx);
	if (r != SPV_SUCCESS || !t) {
		spvTextDestroy(t);
		return -EPROTO;
	}
	*text = malloc(t->length + 1);
	if (!*text) {
		spvTextDestroy(t);
		return -ENOMEM;
	}
	memcpy(*text, t->str, t->length);
	(*text)[t->length] = 0;
	spvTextDestroy(t);
	return 0;
}
