extern "C" __global__ void k(float *a) { a[threadIdx.x + blockIdx.x * blockDim.x] += 1.0f; }
