/* SPDX-License-Identifier: MIT */
/*
 * core/interp/exec_checked.c - the execution loop of the bounds-checked
 * mode: the same semantics as exec_fast.c, with every access checked first.
 */
#include <string.h>

#include "interp_internal.h"

#define INTERP_CHECKED 1
#define INTERP_FN gbpf_interp_exec_checked
#include "exec.inc"
