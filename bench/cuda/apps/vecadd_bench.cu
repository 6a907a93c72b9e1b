// SPDX-License-Identifier: MIT
// Vector add of 2^LOG2N floats (default 2^26), inputs from a hash (not zeros),
// timed with CUDA events; checks the result. Built plain, and with one of the
// -D flags below, where the kernel itself runs a probe written by hand in
// CUDA at its exit - the same work as a gbpf probe, to compare gbpf's
// injected code with (bench/cuda/run.sh):
//   HAND_THREADHIST         per-thread counter, plain `+= 1`
//                           (bench/cuda/probes/threadhist_plain.bpf.c)
//   HAND_THREADHIST_ATOMIC  per-thread counter, atomicAdd
//                           (examples/threadhist/threadhist.bpf.c)
//   HAND_HASH=1             device hash counter, key = global thread id & 4095
//                           (bench/cuda/probes/hash_update.bpf.c)
//   HAND_HASH=2             the same, key = block index & 4095
//                           (bench/cuda/probes/hash_update_warp.bpf.c)
//   HAND_HASH=3             key = block index & 4095, aggregated by hand: the
//                           lanes of a warp with one key elect a leader that
//                           looks up once and adds their count (what a CUDA
//                           programmer would write for a per-block key)
//   HAND_HASH_LOAD=0|1|2    with HAND_HASH: the probe of each bucket's key
//                           word by a plain load (default), ld.relaxed.gpu or
//                           ld.acquire.gpu (diagnostic of what an acquire costs)
//   HAND_HASH_LAYOUT=0..4   with HAND_HASH (diagnostic): 16-byte slots of key
//                           and value (default); 1: keys and values in two
//                           arrays (the lookup's loads never share a sector
//                           with the atomics); 2: 32-byte slots, key and
//                           value in one sector as a 32-byte gbpf bucket;
//                           3 and 4: values apart as 1, each key in a slot of
//                           16 / 32 bytes (a gbpf bucket without / with its
//                           64-bit hash)
//   HAND_COUNTS_FLOOR       atomicAdd(&counts[global thread id & 4095], 1): no
//                           hash at all, the floor of any keyed counter
//   HAND_MEMTRACE=1         examples/mem_trace/mem_trace.bpf.c by hand at each
//                           of vec_add's three global accesses: a per-SM
//                           counter per access kind and a per-SM log2
//                           histogram of the distance from the thread's last
//                           address (kept in a per-thread slot)
//   HAND_MEMTRACE=2         the counters only (bench/cuda/probes/mem_count.bpf.c)
//   HAND_MEMTRACE=3         the histogram only (bench/cuda/probes/mem_stride.bpf.c)
//   HAND_MEMTRACE=4         diagnostic: =2 plus what gbpf's inlined mem_count
//                           stores to the probe's stack at each access (the
//                           16-byte key and the 8-byte initial value: 24 bytes
//                           of local memory a thread)
//   HAND_MEMTRACE=5         diagnostic: =2 plus the warp instructions of gbpf's
//                           inlined lookup and add (2 match.any.b64 grouping the
//                           key, 2 shuffles of the answer, 2 match.all.b64 on the
//                           counter's address and increment)
//   HAND_MEMTRACE=6         diagnostic: =2 with the SMs' copies of a counter
//                           adjacent (8 bytes apart, as a PERCPU_HASH bucket
//                           holds them) instead of a row per SM
//   HAND_MEMTRACE=7         diagnostic: =6 with the copies 32 bytes apart
//   HAND_MEMTRACE=9         diagnostic: =2 plus the loads of gbpf's inlined
//                           lookup, each behind a compare (a 16-byte state and
//                           hash, two key words, the slot count), from a row
//                           nothing writes
//   HAND_RECORDS            kernelretsnoop's bytes alone: each thread's 56-byte
//                           record (an 8-byte header and 6 words) at a place
//                           fixed by its thread id, a warp's 32 records stored
//                           as 7 rows of 32 consecutive words (whole sectors,
//                           as gbpf's warp-wide ring write does), with no
//                           reservation, commit or consumer: the floor of any
//                           ring that keeps every event
// Each hand-written variant checks its counts on the host after the run.
// VECADD_SMEM=BYTES (diagnostic): that much unused dynamic shared memory per block,
// which caps the blocks per SM like an instrumented kernel's register count does.
#include "bench_common.h"

__global__ void init(float *a, float *b, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) {
		unsigned h = (unsigned)i * 2654435761u;
		a[i] = (float)(h & 0xffff) / 65536.0f + 0.5f;
		b[i] = (float)(h >> 16) / 65536.0f + 0.25f;
	}
}

#define NKEYS 4096u /* the probes' key range: & 4095 */

#ifdef HAND_RECORDS
#define REC_WORDS 7u /* kernelretsnoop's 48-byte event and 8-byte header */

/* word w of record r (the host checks every one) */
__host__ __device__ static inline unsigned long long hand_record_word(unsigned long long r, unsigned w)
{
	return w == 0 ? 0x30ull | r << 32 : r * 0x9E3779B97F4A7C15ull + w;
}
#endif

#ifdef HAND_HASH
#ifndef HAND_HASH_LOAD
#define HAND_HASH_LOAD 0
#endif
// The probes' map holds max_entries 8192; gbpf lays a hash out in a power of
// two >= 2 * max_entries buckets (maps/map_layout.h), so the hand-written
// table has the same number of slots and load factor (4096 keys in 16384).
#define HSLOTS 16384u
#define HEMPTY 0xffffffffu /* no key is 0xffffffff: keys are < 4096 */
#ifndef HAND_HASH_LAYOUT
#define HAND_HASH_LAYOUT 0
#endif
// The table is HASH_WORDS 8-byte words; slot s's key word (HEMPTY, or the key,
// claimed once by atomicCAS) and value, per HAND_HASH_LAYOUT.
#if HAND_HASH_LAYOUT == 1
#define HASH_WORDS ((size_t)HSLOTS / 2 + HSLOTS)
__host__ __device__ __forceinline__ unsigned *hkey(unsigned long long *t, unsigned s) { return (unsigned *)t + s; }
__host__ __device__ __forceinline__ unsigned long long *hval(unsigned long long *t, unsigned s) { return t + HSLOTS / 2 + s; }
#elif HAND_HASH_LAYOUT == 3 || HAND_HASH_LAYOUT == 4
#define HKEY_WORDS (HAND_HASH_LAYOUT == 3 ? 2u : 4u)
#define HASH_WORDS ((size_t)HSLOTS * HKEY_WORDS + HSLOTS)
__host__ __device__ __forceinline__ unsigned *hkey(unsigned long long *t, unsigned s) { return (unsigned *)(t + (size_t)s * HKEY_WORDS); }
__host__ __device__ __forceinline__ unsigned long long *hval(unsigned long long *t, unsigned s) { return t + (size_t)HSLOTS * HKEY_WORDS + s; }
#else
#define HSLOT_WORDS (HAND_HASH_LAYOUT == 2 ? 4u : 2u)
#define HASH_WORDS ((size_t)HSLOTS * HSLOT_WORDS)
__host__ __device__ __forceinline__ unsigned *hkey(unsigned long long *t, unsigned s) { return (unsigned *)(t + (size_t)s * HSLOT_WORDS); }
__host__ __device__ __forceinline__ unsigned long long *hval(unsigned long long *t, unsigned s) { return t + (size_t)s * HSLOT_WORDS + 1; }
#endif

// murmur3's 32-bit finalizer: keys 0..4095 spread like random ones (a
// multiplicative hash would map them to distinct slots with no collision at
// all, which neither gbpf's hash nor real keys give).
__host__ __device__ __forceinline__ unsigned hhash(unsigned k)
{
	k ^= k >> 16;
	k *= 0x85ebca6bu;
	k ^= k >> 13;
	k *= 0xc2b2ae35u;
	k ^= k >> 16;
	return k;
}

// The read of a slot's key word: the only load of the lookup.
__device__ __forceinline__ unsigned hload(const unsigned *p)
{
	unsigned v;
#if HAND_HASH_LOAD == 1
	asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
#elif HAND_HASH_LOAD == 2
	// what gbpf's inline lookup does with the home bucket's state word
	asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
#else
	// A plain load is enough here: the value is only touched atomically and
	// was zeroed before the kernel, and a stale HEMPTY read falls to the CAS,
	// which returns the key word as it is.
	v = *p;
#endif
	return v;
}

// Open addressing, linear probing: find key's slot (claiming an empty one by
// CAS on its key word), then count with one atomic add on the value.
__device__ __forceinline__ void hand_hash_add(unsigned long long *t, unsigned key, unsigned long long add)
{
	unsigned s = hhash(key) & (HSLOTS - 1);

	for (unsigned n = 0; n < HSLOTS; n++, s = (s + 1) & (HSLOTS - 1)) {
		unsigned k = hload(hkey(t, s));

		if (k == HEMPTY)
			k = atomicCAS(hkey(t, s), HEMPTY, key); /* HEMPTY back: ours now */
		if (k == HEMPTY || k == key) {
			atomicAdd(hval(t, s), add);
			return;
		}
	}
	/* table full: cannot happen with 4096 keys in 16384 slots (the host check would see the loss) */
}
#endif

#ifdef HAND_MEMTRACE
// Layout of the hand buffer: per SM (%smid & 255) a row of 64 counters (0: loads,
// 1: stores, 16 + slot: the distance histogram's 48 slots), then one last
// address per thread.
#define HM_SMS 256u
#ifndef HM_ROW
#define HM_ROW 64u /* words: SM rows 512 bytes apart (-DHM_ROW=N: a diagnostic of the rows' spacing) */
#endif
#define HM_SLOTS 48u
#if HAND_MEMTRACE == 4
/* reads a frame through a generic pointer, as gbpf's slow-path helpers read the probe's stack */
__device__ __noinline__ void hand_sink(unsigned long long *hand, const unsigned long long *stk)
{
	hand[0] += stk[0] + stk[1] + stk[2];
}
#endif
__device__ __forceinline__ void hand_mem(unsigned long long *hand, int kind, const void *addr)
{
	unsigned sm;
	asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
#if HAND_MEMTRACE == 6 || HAND_MEMTRACE == 7
	/* copy of SM sm of counter kind at kind * HM_SMS + sm (x4: 32 bytes apart); check_hand sums them */
	unsigned long long *row = hand + ((size_t)kind * HM_SMS + (sm & (HM_SMS - 1))) * (HAND_MEMTRACE == 7 ? 4 : 1) - kind;
#else
	unsigned long long *row = hand + (size_t)(sm & (HM_SMS - 1)) * HM_ROW;
#endif
#if HAND_MEMTRACE == 4
	{
		/* 24 bytes of local memory a thread, kept by a read on a path never taken (the SM
		 * id is below HM_SMS): a frame nothing reads is dropped by ptxas, volatile or not
		 * (sessions 9-10 measured that empty diagnostic) */
		unsigned long long stk[3];

		/* stored by asm: NVVM would sink C stores into the branch, ptxas does not move them */
		asm volatile("st.u64 [%0], %1;\n\tst.u64 [%0+8], %2;\n\tst.u64 [%0+16], %3;"
			     :: "l"(stk), "l"((unsigned long long)(kind + 1) | 1ull << 32), "l"(4ull), "l"(1ull)
			     : "memory");
		if (sm >= HM_SMS)
			hand_sink(hand, stk);
	}
#elif HAND_MEMTRACE == 9
	{
		/* the lookup's loads from SM row HM_SMS - 1's words 8..13, all 0 (no GPU has that many
		 * SMs): a mismatch would move the counter to another row and fail the host's check */
		const unsigned long long *bk = hand + (size_t)(HM_SMS - 1) * HM_ROW + 8;
		ulonglong2 sh = *(const ulonglong2 *)bk;
		unsigned long long off;

		if ((sh.x & 3) != 0 || sh.y != 0)
			off = 1;
		else if (bk[3] != 0)
			off = 2;
		else if (bk[4] != 0)
			off = 3;
		else
			off = *(const unsigned *)(bk + 5);
		row += off * 2 * HM_ROW;
	}
#elif HAND_MEMTRACE == 5
	{
		unsigned long long key = kind + 1, key2 = 4, p = (unsigned long long)&row[kind];
		unsigned m = __activemask(), g = __match_any_sync(m, key) & __match_any_sync(m, key2);
		int pred;
		int lead = __ffs(g) - 1;

		p = __shfl_sync(g, (unsigned)p, lead) | (unsigned long long)__shfl_sync(g, (unsigned)(p >> 32), lead) << 32;
		__match_all_sync(m, p, &pred);
		if (pred)
			__match_all_sync(m, 1ull, &pred);
		row = (unsigned long long *)(p - (unsigned long long)kind * 8);
	}
#endif
#if HAND_MEMTRACE != 3
	atomicAdd(&row[kind], 1ull);
#endif
#if HAND_MEMTRACE == 1 || HAND_MEMTRACE == 3
	unsigned long long *last = hand + (size_t)HM_SMS * HM_ROW + (size_t)blockIdx.x * blockDim.x + threadIdx.x;
	unsigned long long a = (unsigned long long)addr, l = *last;
	if (l) {
		unsigned long long d = a > l ? a - l : l - a;
		unsigned slot = d ? 63 - __clzll(d) : 0;
		atomicAdd(&row[16 + (slot < HM_SLOTS ? slot : HM_SLOTS - 1)], 1ull);
	}
	*last = a;
#endif
}

#if HAND_MEMTRACE >= 10
/*
 * HAND_MEMTRACE=10 (both halves) / 11 (the histogram only): the last address in
 * a register for the thread's run (not kept across launches), each add
 * aggregated over the lanes of a warp that add to one counter.
 */
__device__ __forceinline__ void hand_mem_reg(unsigned long long *hand, int kind, const void *addr,
					     unsigned long long &last)
{
	unsigned sm, m = __activemask();
	asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
	unsigned long long *row = hand + (size_t)(sm & (HM_SMS - 1)) * HM_ROW;
	unsigned lane = threadIdx.x & 31;
#if HAND_MEMTRACE == 10
	if (lane == (unsigned)__ffs(m) - 1)
		atomicAdd(&row[kind], (unsigned long long)__popc(m));
#endif
	unsigned long long a = (unsigned long long)addr;
	if (last) {
		unsigned long long d = a > last ? a - last : last - a;
		unsigned slot = d ? 63 - __clzll(d) : 0;
		slot = slot < HM_SLOTS ? slot : HM_SLOTS - 1;
		unsigned peers = __match_any_sync(__activemask(), slot);
		if (lane == (unsigned)__ffs(peers) - 1)
			atomicAdd(&row[16 + slot], (unsigned long long)__popc(peers));
	}
	last = a;
}
#endif
#endif

__global__ void vec_add(const float *a, const float *b, float *c, int n, unsigned long long *hand)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
#if HAND_MEMTRACE >= 10
	if (i < n) {
		unsigned long long last = 0;

		hand_mem_reg(hand, 0, &a[i], last);
		float x = a[i];
		hand_mem_reg(hand, 0, &b[i], last);
		float y = b[i];
		hand_mem_reg(hand, 1, &c[i], last);
		c[i] = x + y;
	}
#elif defined(HAND_MEMTRACE)
	// the probe at each access, in the order the instrumented kernel runs them
	if (i < n) {
		hand_mem(hand, 0, &a[i]);
		float x = a[i];
		hand_mem(hand, 0, &b[i]);
		float y = b[i];
		hand_mem(hand, 1, &c[i]);
		c[i] = x + y;
	}
#else
	if (i < n)
		c[i] = a[i] + b[i];
#endif
	// the probes run at the kernel's exit, for every thread (also those past n)
#if defined(HAND_THREADHIST)
	hand[(size_t)blockIdx.x * blockDim.x + threadIdx.x] += 1;
#elif defined(HAND_THREADHIST_ATOMIC)
	atomicAdd(&hand[(size_t)blockIdx.x * blockDim.x + threadIdx.x], 1ull);
#elif defined(HAND_COUNTS_FLOOR)
	atomicAdd(&hand[(blockIdx.x * blockDim.x + threadIdx.x) & (NKEYS - 1)], 1ull);
#elif defined(HAND_RECORDS)
	{
		/* store k of lane L writes word 32 k + L of the warp's block: word (32 k + L) % 7 of its record (32 k + L) / 7 */
		unsigned lane = threadIdx.x & 31;
		size_t warp = ((size_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5;

		for (unsigned k = 0; k < REC_WORDS; k++) {
			unsigned word = 32 * k + lane;

			hand[warp * 32 * REC_WORDS + word] = hand_record_word(warp * 32 + word / REC_WORDS, word % REC_WORDS);
		}
	}
#elif defined(HAND_HASH) && HAND_HASH == 3
	{
		unsigned key = blockIdx.x & (NKEYS - 1), peers = __match_any_sync(__activemask(), key);

		if ((threadIdx.x & 31) == (unsigned)__ffs(peers) - 1) /* 1-D blocks of 256: lane = tid & 31 */
			hand_hash_add(hand, key, __popc(peers));
	}
#elif defined(HAND_HASH) && HAND_HASH == 2
	hand_hash_add(hand, blockIdx.x & (NKEYS - 1), 1);
#elif defined(HAND_HASH)
	hand_hash_add(hand, (blockIdx.x * blockDim.x + threadIdx.x) & (NKEYS - 1), 1);
#endif
}

#if defined(HAND_THREADHIST) || defined(HAND_THREADHIST_ATOMIC)
#define HAND_WORDS ((size_t)blocks * threads)
#elif defined(HAND_COUNTS_FLOOR)
#define HAND_WORDS ((size_t)NKEYS)
#elif defined(HAND_RECORDS)
#define HAND_WORDS ((size_t)blocks * threads * REC_WORDS)
#elif defined(HAND_HASH)
#define HAND_WORDS HASH_WORDS
#elif defined(HAND_MEMTRACE)
#define HAND_WORDS ((size_t)HM_SMS * HM_ROW + (size_t)blocks * threads)
#endif

// The hand-written probe's counts after `launches` launches of blocks x threads:
// every one exact, or the run fails. Returns 0 when they are.
static int check_hand(const unsigned long long *dev, int blocks, int threads, long long launches)
{
#ifdef HAND_WORDS
	std::vector<unsigned long long> h(HAND_WORDS);
	unsigned long long total = (unsigned long long)blocks * threads * launches, sum = 0;
	size_t bad = 0, keys = 0, home = 0;

	CK(cudaMemcpy(h.data(), dev, HAND_WORDS * 8, cudaMemcpyDeviceToHost));
#if defined(HAND_THREADHIST) || defined(HAND_THREADHIST_ATOMIC)
	for (size_t i = 0; i < h.size(); i++) {
		bad += h[i] != (unsigned long long)launches;
		sum += h[i];
	}
	keys = h.size();
#elif defined(HAND_COUNTS_FLOOR)
	unsigned long long per_key = total / NKEYS; /* blocks * threads is a multiple of 4096 */

	for (size_t i = 0; i < h.size(); i++) {
		bad += h[i] != per_key;
		sum += h[i];
	}
	keys = h.size();
#elif defined(HAND_RECORDS)
	for (size_t i = 0; i < h.size(); i++)
		bad += h[i] != hand_record_word(i / REC_WORDS, i % REC_WORDS);
	/* the records are rewritten, not counted: every launch leaves the same words */
	sum = total;
	keys = h.size() / REC_WORDS;
#elif defined(HAND_MEMTRACE)
	// loads 2 and stores 1 per thread and launch; distances 3 per thread and launch
	// but the thread's very first access (no last address yet)
	unsigned long long ld = 0, st = 0, strides = 0;

	for (unsigned s = 0; s < HM_SMS; s++) {
#if HAND_MEMTRACE == 6 || HAND_MEMTRACE == 7
		ld += h[s * (HAND_MEMTRACE == 7 ? 4 : 1)];
		st += h[(HM_SMS + s) * (HAND_MEMTRACE == 7 ? 4 : 1)];
		continue;
#endif
		ld += h[s * HM_ROW];
		st += h[s * HM_ROW + 1];
		/* rows narrower than the histogram (-DHM_ROW=16) hold the counters only */
		for (unsigned k = 0; HM_ROW >= 16 + HM_SLOTS && k < HM_SLOTS; k++)
			strides += h[s * HM_ROW + 16 + k];
	}
#if HAND_MEMTRACE == 1 || HAND_MEMTRACE == 2 || (HAND_MEMTRACE >= 4 && HAND_MEMTRACE != 11)
	bad += ld != 2 * total;
	bad += st != total;
#endif
#if HAND_MEMTRACE == 1 || HAND_MEMTRACE == 3
	bad += strides != 3 * total - (unsigned long long)blocks * threads;
#elif HAND_MEMTRACE >= 10
	/* the last address lives for the thread's run: 2 distances per thread and launch */
	bad += strides != 2 * total;
#endif
	sum = total;
	keys = 2;
	printf("gbpf-bench hand_mem loads=%llu stores=%llu strides=%llu\n", ld, st, strides);
#else
	unsigned long long *t = h.data();
	std::vector<int> seen(NKEYS, 0);
	// both key functions hit each key equally often (a block is 256 threads,
	// the grid a multiple of 4096 blocks at the sizes run.sh uses)
	unsigned long long per_key = total / NKEYS;

	for (unsigned s = 0; s < HSLOTS; s++) {
		unsigned k = *hkey(t, s);

		if (k == HEMPTY) {
			bad += *hval(t, s) != 0;
			continue;
		}
		if (k >= NKEYS || seen[k]++) {
			bad++; /* a key out of range, or in two slots */
			continue;
		}
		keys++;
		bad += *hval(t, s) != per_key;
		sum += *hval(t, s);
		home += (hhash(k) & (HSLOTS - 1)) == s; /* keys found at their first probe */
	}
	bad += keys != NKEYS;
#endif
	printf("gbpf-bench hand_check entries=%zu sum=%llu expected=%llu bad=%zu home=%zu launches=%lld\n", keys,
	       sum, total, bad, home, launches);
	if (bad || sum != total) {
		printf("vecadd: hand-written probe counts wrong\n");
		return 1;
	}
#else
	(void)dev, (void)blocks, (void)threads, (void)launches;
#endif
	return 0;
}

int main(int argc, char **argv)
{
	int log2n = argc > 1 ? atoi(argv[1]) : 26, iters = argc > 2 ? atoi(argv[2]) : 50;
	int n = 1 << log2n, threads = 256, blocks = (n + threads - 1) / threads;
	float *a, *b, *c;
	unsigned long long *hand = nullptr;
	long long launches = 0;
	std::vector<float> hc(n);

	CK(cudaMalloc(&a, n * sizeof(float)));
	CK(cudaMalloc(&b, n * sizeof(float)));
	CK(cudaMalloc(&c, n * sizeof(float)));
#ifdef HAND_WORDS
	CK(cudaMalloc(&hand, HAND_WORDS * 8));
	CK(cudaMemset(hand, 0, HAND_WORDS * 8));
#ifdef HAND_HASH
	{
		std::vector<unsigned long long> empty(HAND_WORDS, 0); /* every key word HEMPTY, values 0 */

		for (unsigned s = 0; s < HSLOTS; s++)
			*hkey(empty.data(), s) = HEMPTY;
		CK(cudaMemcpy(hand, empty.data(), HAND_WORDS * 8, cudaMemcpyHostToDevice));
	}
#endif
#endif
	init<<<blocks, threads>>>(a, b, n);
	CK(cudaGetLastError());
	// Diagnostic: VECADD_SMEM=bytes of dynamic shared memory per block (unused) caps the
	// blocks per SM, to measure what an instrumented kernel's lower occupancy costs.
	const char *smem_env = getenv("VECADD_SMEM");
	int smem = smem_env ? atoi(smem_env) : 0;
	if (smem > 48 * 1024)
		CK(cudaFuncSetAttribute(vec_add, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
	time_launches(argc > 3 ? argv[3] : "vecadd", 5, iters, [&] {
		vec_add<<<blocks, threads, smem>>>(a, b, c, n, hand);
		launches++;
	});
	CK(cudaGetLastError());
	CK(cudaMemcpy(hc.data(), c, n * sizeof(float), cudaMemcpyDeviceToHost));
	for (int i = 0; i < n; i += 4099) {
		unsigned h = (unsigned)i * 2654435761u;
		float want = ((float)(h & 0xffff) / 65536.0f + 0.5f) + ((float)(h >> 16) / 65536.0f + 0.25f);
		if (hc[i] != want) {
			printf("vecadd: wrong result at %d: %f != %f\n", i, hc[i], want);
			return 1;
		}
	}
	if (check_hand(hand, blocks, threads, launches))
		return 1;
	printf("vecadd: %d elements ok\n", n);
	return 0;
}
