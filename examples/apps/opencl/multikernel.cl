/* Several kernels of one program, launched many times by multikernel.c. */
__kernel void scale(__global float *x, float f, uint n)
{
	size_t i = get_global_id(0);

	if (i < n)
		x[i] = x[i] * f;
}

__kernel void shift(__global float *x, float d, uint n)
{
	size_t i = get_global_id(0);

	if (i < n)
		x[i] = x[i] + d;
}

/* One partial sum of squares per work-group, through local memory. */
__kernel void square_sum(__global const float *x, __global float *partial, __local float *tmp, uint n)
{
	size_t i = get_global_id(0), l = get_local_id(0), s;

	tmp[l] = i < n ? x[i] * x[i] : 0.0f;
	barrier(CLK_LOCAL_MEM_FENCE);
	for (s = get_local_size(0) / 2; s > 0; s /= 2) {
		if (l < s)
			tmp[l] += tmp[l + s];
		barrier(CLK_LOCAL_MEM_FENCE);
	}
	if (l == 0)
		partial[get_group_id(0)] = tmp[0];
}
