// SPDX-License-Identifier: MIT
// graph: CUDA graphs, launched many times. (1) Stream capture of two
// kernels, instantiated once and launched 5 times. (2) An explicit graph
// with one kernel node, launched 3 times, then its parameters updated in
// the executable graph (another grid, another buffer) and launched 2 more
// times. Every element's final value is checked. Prints one
// "grid=.. block=.. launches=.." line per kernel configuration, with the
// global accesses of one launch ("mem=KIND.SPACE.BYTES:COUNT,...").
// (3) Two graphs captured from the same kernel, each launched twice on its
// own stream, alternately, so that they may run at once (each launch must
// still be told apart by a tool).
// `graph --warm` first launches both kernels once outside any graph (on a
// scratch buffer), so that a tool instrumenting kernels at their first
// launch does that work before the capture begins rather than inside it.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
	fprintf(stderr, "graph: %s: %s (line %d)\n", #x, cudaGetErrorString(e_), __LINE__); \
	exit(2); } } while (0)

__global__ void add_k(int *p, int n, int v)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		p[i] += v;
}

__global__ void twice_k(int *p, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		p[i] *= 2;
}

static int check(const char *what, const int *d, int n, int (*want)(int))
{
	int *h = (int *)malloc(n * sizeof(int));

	if (!h)
		return 1;
	CK(cudaMemcpy(h, d, n * sizeof(int), cudaMemcpyDeviceToHost));
	for (int i = 0; i < n; i++)
		if (h[i] != want(i)) {
			fprintf(stderr, "graph: %s: [%d] = %d, expected %d\n", what, i, h[i], want(i));
			free(h);
			return 1;
		}
	free(h);
	return 0;
}

// Captured: x = (x + 1) * 2, five times from x = i: x5 = 32 i + 62.
static int want_captured(int i) { return 32 * i + 62; }
// Warm-up: (0 + 1) * 2.
static int want_warm(int) { return 2; }
// Explicit node: += 3, three launches, from 0.
static int want_first(int) { return 9; }
// Updated node on the second buffer: += 5, two launches, from 0.
static int want_second(int) { return 10; }
// Concurrent graphs: += 7 twice, from i.
static int want_concurrent(int i) { return i + 14; }

int main(int argc, char **argv)
{
	const int warm = argc > 1 && !strcmp(argv[1], "--warm");
	const int n1 = 10000, b1 = 256, g1 = (n1 + b1 - 1) / b1;
	const int n2 = 3000, b2 = 128, g2 = (n2 + b2 - 1) / b2;
	const int n3 = 6000, b3 = 64, g3 = (n3 + b3 - 1) / b3;
	cudaStream_t st;
	int *x, *p, *q, bad = 0;

	CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
	CK(cudaMalloc(&x, n1 * sizeof(int)));
	CK(cudaMalloc(&p, n2 * sizeof(int)));
	CK(cudaMalloc(&q, n3 * sizeof(int)));
	int *h = (int *)malloc(n1 * sizeof(int));
	if (!h)
		return 2;
	for (int i = 0; i < n1; i++)
		h[i] = i;
	CK(cudaMemcpy(x, h, n1 * sizeof(int), cudaMemcpyHostToDevice));
	free(h);
	CK(cudaMemset(p, 0, n2 * sizeof(int)));
	CK(cudaMemset(q, 0, n3 * sizeof(int)));

	if (warm) {
		int *w;
		CK(cudaMalloc(&w, n1 * sizeof(int)));
		CK(cudaMemset(w, 0, n1 * sizeof(int)));
		add_k<<<g1, b1, 0, st>>>(w, n1, 1);
		twice_k<<<g1, b1, 0, st>>>(w, n1);
		CK(cudaStreamSynchronize(st));
		bad |= check("warm-up", w, n1, want_warm);
		CK(cudaFree(w));
		if (!bad)
			printf("graph: warm-up add_k, twice_k grid=%dx1x1 block=%dx1x1 launches=2 "
			       "mem=ld.global.4:%d,st.global.4:%d\n", g1, b1, n1, n1);
	}

	// (1) stream capture
	cudaGraph_t cg;
	cudaGraphExec_t cge;
	CK(cudaStreamBeginCapture(st, cudaStreamCaptureModeGlobal));
	add_k<<<g1, b1, 0, st>>>(x, n1, 1);
	twice_k<<<g1, b1, 0, st>>>(x, n1);
	CK(cudaStreamEndCapture(st, &cg));
	CK(cudaGraphInstantiate(&cge, cg, 0));
	for (int r = 0; r < 5; r++)
		CK(cudaGraphLaunch(cge, st));
	CK(cudaStreamSynchronize(st));
	bad |= check("captured graph", x, n1, want_captured);
	if (!bad) {
		printf("graph: captured add_k grid=%dx1x1 block=%dx1x1 launches=5 mem=ld.global.4:%d,st.global.4:%d\n",
		       g1, b1, n1, n1);
		printf("graph: captured twice_k grid=%dx1x1 block=%dx1x1 launches=5 mem=ld.global.4:%d,st.global.4:%d\n",
		       g1, b1, n1, n1);
	}

	// (2) explicit kernel node, then an exec update of its parameters
	cudaGraph_t eg;
	cudaGraphExec_t ege;
	cudaGraphNode_t node;
	int v = 3, n = n2;
	void *args[] = {&p, &n, &v};
	cudaKernelNodeParams kp = {};
	kp.func = (void *)add_k;
	kp.gridDim = dim3(g2);
	kp.blockDim = dim3(b2);
	kp.kernelParams = args;
	CK(cudaGraphCreate(&eg, 0));
	CK(cudaGraphAddKernelNode(&node, eg, NULL, 0, &kp));
	CK(cudaGraphInstantiate(&ege, eg, 0));
	for (int r = 0; r < 3; r++)
		CK(cudaGraphLaunch(ege, st));
	CK(cudaStreamSynchronize(st));
	bad |= check("explicit node", p, n2, want_first);
	int v2 = 5, nq = n3;
	void *args2[] = {&q, &nq, &v2};
	kp.gridDim = dim3(g3);
	kp.blockDim = dim3(b3);
	kp.kernelParams = args2;
	CK(cudaGraphExecKernelNodeSetParams(ege, node, &kp));
	for (int r = 0; r < 2; r++)
		CK(cudaGraphLaunch(ege, st));
	CK(cudaStreamSynchronize(st));
	bad |= check("updated node", q, n3, want_second);
	bad |= check("explicit node after the update", p, n2, want_first);
	if (!bad) {
		printf("graph: node add_k grid=%dx1x1 block=%dx1x1 launches=3 mem=ld.global.4:%d,st.global.4:%d\n", g2,
		       b2, n2, n2);
		printf("graph: updated node add_k grid=%dx1x1 block=%dx1x1 launches=2 mem=ld.global.4:%d,st.global.4:%d\n",
		       g3, b3, n3, n3);
	}

	// (3) two captured graphs of add_k on two buffers and two streams, launched alternately
	cudaStream_t st2;
	cudaGraph_t ga, gb;
	cudaGraphExec_t gae, gbe;
	int *ya, *yb;
	CK(cudaStreamCreateWithFlags(&st2, cudaStreamNonBlocking));
	CK(cudaMalloc(&ya, n1 * sizeof(int)));
	CK(cudaMalloc(&yb, n1 * sizeof(int)));
	{
		int *hi = (int *)malloc(n1 * sizeof(int));
		if (!hi)
			return 2;
		for (int i = 0; i < n1; i++)
			hi[i] = i;
		CK(cudaMemcpy(ya, hi, n1 * sizeof(int), cudaMemcpyHostToDevice));
		CK(cudaMemcpy(yb, hi, n1 * sizeof(int), cudaMemcpyHostToDevice));
		free(hi);
	}
	CK(cudaStreamBeginCapture(st, cudaStreamCaptureModeGlobal));
	add_k<<<g1, b1, 0, st>>>(ya, n1, 7);
	CK(cudaStreamEndCapture(st, &ga));
	CK(cudaStreamBeginCapture(st2, cudaStreamCaptureModeGlobal));
	add_k<<<g1, b1, 0, st2>>>(yb, n1, 7);
	CK(cudaStreamEndCapture(st2, &gb));
	CK(cudaGraphInstantiate(&gae, ga, 0));
	CK(cudaGraphInstantiate(&gbe, gb, 0));
	for (int r = 0; r < 2; r++) {
		CK(cudaGraphLaunch(gae, st));
		CK(cudaGraphLaunch(gbe, st2));
	}
	CK(cudaStreamSynchronize(st));
	CK(cudaStreamSynchronize(st2));
	bad |= check("concurrent graph a", ya, n1, want_concurrent);
	bad |= check("concurrent graph b", yb, n1, want_concurrent);
	if (!bad)
		printf("graph: captured concurrent add_k grid=%dx1x1 block=%dx1x1 launches=4 "
		       "mem=ld.global.4:%d,st.global.4:%d\n", g1, b1, n1, n1);
	if (!bad)
		printf("graph: all results ok\n");
	CK(cudaGraphExecDestroy(gae));
	CK(cudaGraphExecDestroy(gbe));
	CK(cudaGraphDestroy(ga));
	CK(cudaGraphDestroy(gb));
	CK(cudaFree(ya));
	CK(cudaFree(yb));
	CK(cudaStreamDestroy(st2));

	CK(cudaGraphExecDestroy(cge));
	CK(cudaGraphExecDestroy(ege));
	CK(cudaGraphDestroy(cg));
	CK(cudaGraphDestroy(eg));
	CK(cudaFree(x));
	CK(cudaFree(p));
	CK(cudaFree(q));
	CK(cudaStreamDestroy(st));
	return bad;
}
