// coop: a cooperative-groups kernel with a grid-wide barrier, launched
// with cudaLaunchCooperativeKernel. Prints its launch configuration and the
// accesses one launch makes: every element stored once, thread 0 loads them
// all and stores the sum; the grid barrier's arrival is one atomic per block
// and its wait spins (at least one load per block, "+": at least).
#include <cooperative_groups.h>
#include <cstdio>
#include <cuda_runtime.h>

namespace cg = cooperative_groups;

__global__ void two_phase(int *data, int *sum, int n)
{
	cg::grid_group grid = cg::this_grid();
	for (int i = grid.thread_rank(); i < n; i += grid.size())
		data[i] = i;
	grid.sync();
	if (grid.thread_rank() == 0) {
		int s = 0;
		for (int i = 0; i < n; i++)
			s += data[i];
		*sum = s;
	}
}

int main(void)
{
	int n = 1000, *data, *sum;
	if (cudaMallocManaged(&data, n * sizeof(*data)) || cudaMallocManaged(&sum, sizeof(*sum)))
		return 1;
	void *args[] = {&data, &sum, &n};
	if (cudaLaunchCooperativeKernel((void *)two_phase, 4, 64, args, 0, 0) ||
	    cudaDeviceSynchronize())
		return 1;
	if (*sum != n * (n - 1) / 2) {
		fprintf(stderr, "coop: sum %d\n", *sum);
		return 1;
	}
	printf("coop: two_phase grid=4x1x1 block=64x1x1 launches=1 "
	       "mem=st.global.4:%d,ld.global.4:%d,atom.generic.4:4,ld.generic.4:4+\n", n + 1, n);
	printf("coop: ok\n");
	return 0;
}
