/* Element-wise c = a + b over n floats: one work-item per element. */
__kernel void vecadd(__global const float *a, __global const float *b, __global float *c, uint n)
{
	size_t i = get_global_id(0);

	if (i < n)
		c[i] = a[i] + b[i];
}
