/* Test application kernels for SPIR-V injection (built with clang-15 -target spir64 + llvm-spirv-15). */
__kernel void vadd(__global const int *a, __global const int *b, __global int *c, int n)
{
	int i = get_global_id(0);

	if (i < n)
		c[i] = a[i] + b[i];
}

/* several returns */
__kernel void clampk(__global int *x, int lo, int hi)
{
	int i = get_global_id(0);

	if (x[i] < lo) {
		x[i] = lo;
		return;
	}
	if (x[i] > hi) {
		x[i] = hi;
		return;
	}
	x[i] = x[i] * 2;
}

/* a loop (a recurrence the optimizer cannot fold into a closed form) */
__kernel void loopk(__global int *out, int n)
{
	int i = get_global_id(0), s = 1, k;

	for (k = 0; k <= i && k < n; k++)
		s = s * 3 + (k ^ i);
	out[i] = s;
}

/* local memory and a barrier */
__kernel void revlocal(__global int *x, __local int *tmp)
{
	int l = get_local_id(0), g = get_global_id(0), n = get_local_size(0);

	tmp[l] = x[g];
	barrier(CLK_LOCAL_MEM_FENCE);
	x[g] = tmp[n - 1 - l];
}

/* atomics */
__kernel void histo(__global const int *x, __global int *bins)
{
	int i = get_global_id(0);

	atomic_add(&bins[x[i] & 7], 1);
}
