/* SPDX-License-Identifier: MIT */
/*
 * core/interp/exec_fast.c - the execution loop for verified programs:
 * memory is accessed without checks (the verifier proved it safe).
 */
#include <string.h>

#include "interp_internal.h"

#define INTERP_CHECKED 0
#define INTERP_FN gbpf_interp_exec_fast
#include "exec.inc"
