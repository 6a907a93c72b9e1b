/* Kernels of the multi-launch Level Zero example app (OpenCL C 1.2). */
__kernel void scale(__global int *x, int k)
{
	size_t i = get_global_id(0);

	x[i] = x[i] * k;
}

__kernel void add_offset(__global int *x, int off)
{
	size_t i = get_global_id(0);

	x[i] = x[i] + off + (int)get_group_id(0);
}

__kernel void square_into(__global const int *x, __global long *y)
{
	size_t i = get_global_id(0);

	y[i] = (long)x[i] * x[i];
}
