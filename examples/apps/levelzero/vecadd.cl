/* Vector add for the Level Zero example app (OpenCL C 1.2, compiled to SPIR-V 1.0). */
__kernel void vecadd(__global const float *a, __global const float *b, __global float *c, uint n)
{
	size_t i = get_global_id(0);

	if (i < n)
		c[i] = a[i] + b[i];
}
