// SPDX-License-Identifier: MIT
// Device code with no HIP headers or device libraries (clang builtins only),
// so that clang-19 builds gfx942 code objects (v5) where the installed ROCm
// device libraries stop at gfx940. Same kernels as the apps: the rewriter's
// round-trip and probe tests use it.
#define __global__ __attribute__((global))
#define __shared__ __attribute__((shared))

static __attribute__((device)) int gid(void)
{
	return __builtin_amdgcn_workgroup_id_x() * 256 + __builtin_amdgcn_workitem_id_x();
}

extern "C" __global__ void vector_add(const float *a, const float *b, float *c, int n)
{
	int i = gid();

	if (i < n)
		c[i] = a[i] + b[i];
}

extern "C" __global__ void reduce_loop(const int *in, int *out, int n)
{
	__shared__ int part[256];
	int t = __builtin_amdgcn_workitem_id_x(), s = 0;

	for (int i = gid(); i < n; i += 4096)
		s += (in[i] & 1) ? in[i] * 3 : in[i] / 2;
	part[t] = s;
	__builtin_amdgcn_s_barrier();
	for (int k = 128; k > 0; k >>= 1) {
		if (t < k)
			part[t] += part[t + k];
		__builtin_amdgcn_s_barrier();
	}
	if (t == 0)
		__atomic_fetch_add(out, part[0], __ATOMIC_RELAXED);
}

__global__ void table_lookup(int *out, int n)
{
	static __attribute__((device)) const int table[8] = {3, 1, 4, 1, 5, 9, 2, 6};
	int i = gid();

	if (i < n)
		out[i] = table[i & 7] + table[(i >> 3) & 7];
}
