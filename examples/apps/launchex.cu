// SPDX-License-Identifier: MIT
// launchex: cudaLaunchKernelEx (cuLaunchKernelEx) with launch attributes.
// (1) Thread-block clusters of 2 (sm_90): each block records its rank in the
// cluster after a cluster-wide barrier and reads its partner block's shared
// memory (distributed shared memory). (2) The same entry point with no
// attribute and dynamic shared memory. Results checked; one
// "grid=.. block=.. launches=.." line per launch (with "mem=KIND.SPACE.BYTES:COUNT"
// per launch; ld.generic: the partner's shared memory). Build: nvcc -arch=sm_90.
#include <cooperative_groups.h>
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

namespace cg = cooperative_groups;

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
	fprintf(stderr, "launchex: %s: %s (line %d)\n", #x, cudaGetErrorString(e_), __LINE__); \
	exit(2); } } while (0)

// out[block] = rank * 1000 + the partner block's index, read from its shared memory.
__global__ void cluster_k(int *out)
{
	__shared__ int mine;
	cg::cluster_group cluster = cg::this_cluster();
	unsigned rank = cluster.block_rank();

	if (threadIdx.x == 0)
		mine = blockIdx.x;
	cluster.sync();
	if (threadIdx.x == 0) {
		int *peer = cluster.map_shared_rank(&mine, rank ^ 1);
		out[blockIdx.x] = (int)rank * 1000 + *peer;
	}
	cluster.sync(); // the partner's shared memory must outlive the read
}

__global__ void fill_k(int *out, int n)
{
	extern __shared__ int tile[];
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	tile[threadIdx.x] = i * 3;
	__syncthreads();
	if (i < n)
		out[i] = tile[blockDim.x - 1 - threadIdx.x];
}

int main(void)
{
	const int blocks = 64, threads = 128, n = 40000, fb = 256, fg = (n + fb - 1) / fb;
	int *out, *fill, *h, bad = 0;
	cudaStream_t st;

	CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
	CK(cudaMalloc(&out, blocks * sizeof(int)));
	CK(cudaMalloc(&fill, fg * fb * sizeof(int)));
	h = (int *)malloc(fg * fb * sizeof(int));
	if (!h)
		return 2;

	cudaLaunchConfig_t cfg = {};
	cudaLaunchAttribute attr[1];
	attr[0].id = cudaLaunchAttributeClusterDimension;
	attr[0].val.clusterDim.x = 2;
	attr[0].val.clusterDim.y = 1;
	attr[0].val.clusterDim.z = 1;
	cfg.gridDim = dim3(blocks);
	cfg.blockDim = dim3(threads);
	cfg.stream = st;
	cfg.attrs = attr;
	cfg.numAttrs = 1;
	CK(cudaLaunchKernelEx(&cfg, cluster_k, out));
	CK(cudaStreamSynchronize(st));
	CK(cudaMemcpy(h, out, blocks * sizeof(int), cudaMemcpyDeviceToHost));
	for (int b = 0; b < blocks && !bad; b++)
		if (h[b] != (b & 1) * 1000 + (b ^ 1)) {
			fprintf(stderr, "launchex: cluster_k: out[%d] = %d, expected %d\n", b, h[b],
				(b & 1) * 1000 + (b ^ 1));
			bad = 1;
		}
	if (!bad)
		printf("launchex: cluster_k cluster=2x1x1 grid=%dx1x1 block=%dx1x1 launches=1 "
		       "mem=st.shared.4:%d,ld.generic.4:%d,st.global.4:%d: ok\n", blocks, threads, blocks, blocks,
		       blocks);

	cudaLaunchConfig_t cfg2 = {};
	cfg2.gridDim = dim3(fg);
	cfg2.blockDim = dim3(fb);
	cfg2.dynamicSmemBytes = fb * sizeof(int);
	cfg2.stream = st;
	CK(cudaLaunchKernelEx(&cfg2, fill_k, fill, n));
	CK(cudaStreamSynchronize(st));
	CK(cudaMemcpy(h, fill, n * sizeof(int), cudaMemcpyDeviceToHost));
	for (int i = 0; i < n && !bad; i++) {
		int want = ((i / fb) * fb + fb - 1 - i % fb) * 3;
		if (h[i] != want) {
			fprintf(stderr, "launchex: fill_k: out[%d] = %d, expected %d\n", i, h[i], want);
			bad = 1;
		}
	}
	if (!bad)
		printf("launchex: fill_k smem=%d grid=%dx1x1 block=%dx1x1 launches=1 "
		       "mem=st.shared.4:%d,ld.shared.4:%d,st.global.4:%d: ok\n",
		       (int)cfg2.dynamicSmemBytes, fg, fb, fg * fb, n, n);
	free(h);
	CK(cudaFree(out));
	CK(cudaFree(fill));
	CK(cudaStreamDestroy(st));
	return bad;
}
