/* SPDX-License-Identifier: MIT */
/*
 * tests/loader/test_kernel_names.c - section names to attach points, the
 * Itanium demangler and the kernel-name matcher.
 */
#include <errno.h>
#include <string.h>

#include <gbpf/object.h>

#include "tap.h"

static void dm_ok(const char *mangled, const char *want)
{
	char buf[512];
	int rc = gbpf_demangle(mangled, buf, sizeof(buf));

	tap_ok(rc == (int)strlen(want) && strcmp(buf, want) == 0, "demangle %s -> %s (got %s, rc %d)",
	       mangled, want, buf, rc);
}

static void dm_fail(const char *mangled)
{
	char buf[512];
	int rc = gbpf_demangle(mangled, buf, sizeof(buf));

	tap_ok(rc == -EINVAL && strcmp(buf, mangled) == 0, "demangle rejects %s cleanly (rc %d)",
	       mangled, rc);
}

static void match_ok(const char *pattern, const char *kernel, int want)
{
	tap_ok(gbpf_kernel_name_match(pattern, kernel) == want, "'%s' %s '%s'", pattern ? pattern : "(null)",
	       want ? "matches" : "does not match", kernel);
}

static void attach_ok(const char *sec, int want_rc, uint32_t kind, const char *target, const char *symbol)
{
	struct gbpf_attach a;
	char storage[256];
	int rc = gbpf_attach_parse(sec, &a, storage, sizeof(storage));
	int ok = rc == want_rc;

	if (ok && rc == 0)
		ok = a.kind == kind &&
		     ((!target && !a.target) || (target && a.target && strcmp(a.target, target) == 0)) &&
		     ((!symbol && !a.symbol) || (symbol && a.symbol && strcmp(a.symbol, symbol) == 0));
	tap_ok(ok, "section '%s' -> rc %d kind %u target %s symbol %s", sec, want_rc, kind,
	       target ? target : "(null)", symbol ? symbol : "(null)");
}

int main(void)
{
	char small[8];

	dm_ok("_Z6vecAddPfS_S_i", "vecAdd(float*, float*, float*, int)");
	dm_ok("_Z3foov", "foo()");
	dm_ok("_ZN2ns6kernelEPKfPfm", "ns::kernel(float const*, float*, unsigned long)");
	dm_ok("_ZN2ns3sub6kernelEiRKi", "ns::sub::kernel(int, int const&)");
	dm_ok("_Z6kernelIfEvPT_S1_i", "void kernel<float>(float*, float*, int)");
	dm_ok("_ZN4gemm6matmulILi16ELi32EfEEvPKT1_PS1_j",
	      "void gemm::matmul<16, 32, float>(float const*, float*, unsigned int)");
	dm_ok("_ZN12_GLOBAL__N_16reduceEPdi", "(anonymous namespace)::reduce(double*, int)");
	dm_ok("_Z7scatterPN3foo3BarES1_", "scatter(foo::Bar*, foo::Bar*)");
	dm_ok("_ZN2ns2k2EPNS_3BarES1_RKS0_", "ns::k2(ns::Bar*, ns::Bar*, ns::Bar const&)");
	dm_ok("_ZN2ns2k3EPNS_1WIiEES2_", "ns::k3(ns::W<int>*, ns::W<int>*)");
	dm_ok("_Z4histPhPjj", "hist(unsigned char*, unsigned int*, unsigned int)");
	dm_ok("_Z5accumIdLb1EEvPT_", "void accum<double, true>(double*)");
	dm_fail("_Z3sumPA10_i");
	dm_ok("_ZNSt6vectorIiSaIiEE4sizeEv", "std::vector<int, std::allocator<int>>::size()");
	dm_fail("_Z5fancyPFviE");
	dm_ok("vec_add", "vec_add");
	dm_fail("_Z");
	dm_fail("_Z3");
	dm_fail("_Z99abc");
	dm_fail("_Z3fooS5_");
	dm_fail("_Z3fooT_");
	dm_fail("_ZN3foo");
	/* Found by the fuzzer: repeated qualifiers overflowed a fixed buffer. */
	dm_fail("_ZNKrVrrV_");
	dm_fail("_ZNVVVVVVVVVVVVVV3fooE");
	tap_ok(gbpf_demangle("_Z6vecAddPfS_S_i", small, sizeof(small)) == -ENOSPC && strlen(small) == 7,
	       "demangle into a small buffer truncates and says -ENOSPC");

	match_ok("_Z6vecAddPfS_S_i", "_Z6vecAddPfS_S_i", 1);
	match_ok("vecAdd", "_Z6vecAddPfS_S_i", 1);
	match_ok("vecAdd(float*, float*, float*, int)", "_Z6vecAddPfS_S_i", 1);
	match_ok("vec*", "_Z6vecAddPfS_S_i", 1);
	match_ok("_Z6vec*", "_Z6vecAddPfS_S_i", 1);
	match_ok("vecSub", "_Z6vecAddPfS_S_i", 0);
	match_ok("gemm::matmul<16, 32, float>", "_ZN4gemm6matmulILi16ELi32EfEEvPKT1_PS1_j", 1);
	match_ok("matmul", "_ZN4gemm6matmulILi16ELi32EfEEvPKT1_PS1_j", 1);
	match_ok("gemm::*", "_ZN4gemm6matmulILi16ELi32EfEEvPKT1_PS1_j", 1);
	match_ok("other::*", "_ZN4gemm6matmulILi16ELi32EfEEvPKT1_PS1_j", 0);
	match_ok("ns::kernel", "_ZN2ns6kernelEPKfPfm", 1);
	match_ok("kernel", "_ZN2ns6kernelEPKfPfm", 1);
	match_ok("vec_add", "vec_add", 1);
	match_ok("vec_*", "vec_add", 1);
	match_ok("*", "anything", 1);
	match_ok(NULL, "anything", 1);
	match_ok("", "anything", 1);
	match_ok("fancy", "_Z5fancyPFviE", 0);
	match_ok("_Z5fancy*", "_Z5fancyPFviE", 1);

	attach_ok("kprobe/_Z6vecAddPfS_S_i", 0, GBPF_ATTACH_GPU_ENTRY, "_Z6vecAddPfS_S_i", NULL);
	attach_ok("kretprobe/vec_add", 0, GBPF_ATTACH_GPU_EXIT, "vec_add", NULL);
	attach_ok("kprobe/__memcapture", 0, GBPF_ATTACH_GPU_MEM, NULL, NULL);
	attach_ok("uprobe/./app:main", 0, GBPF_ATTACH_UPROBE, "./app", "main");
	attach_ok("uretprobe//lib/libcudart.so:cudaMalloc", 0, GBPF_ATTACH_URETPROBE, "/lib/libcudart.so",
		  "cudaMalloc");
	attach_ok("gpu/entry/vec*", 0, GBPF_ATTACH_GPU_ENTRY, "vec*", NULL);
	attach_ok("gpu/entry", 0, GBPF_ATTACH_GPU_ENTRY, NULL, NULL);
	attach_ok("gpu/entry/*", 0, GBPF_ATTACH_GPU_ENTRY, NULL, NULL);
	attach_ok("gpu/exit/k", 0, GBPF_ATTACH_GPU_EXIT, "k", NULL);
	attach_ok("gpu/mem/k", 0, GBPF_ATTACH_GPU_MEM, "k", NULL);
	attach_ok("gpu/barrier/k", 0, GBPF_ATTACH_GPU_BARRIER, "k", NULL);
	attach_ok("host/launch", 0, GBPF_ATTACH_HOST_LAUNCH, NULL, NULL);
	attach_ok("host/launch/gemm*", 0, GBPF_ATTACH_HOST_LAUNCH, "gemm*", NULL);
	attach_ok("host/memcpy", 0, GBPF_ATTACH_HOST_MEMCPY, NULL, NULL);
	attach_ok("host/malloc", 0, GBPF_ATTACH_HOST_MALLOC, NULL, NULL);
	attach_ok("host/sync", 0, GBPF_ATTACH_HOST_SYNC, NULL, NULL);
	attach_ok("host/module_load", 0, GBPF_ATTACH_HOST_MODULE_LOAD, NULL, NULL);
	attach_ok("xdp", 0, GBPF_ATTACH_NONE, NULL, NULL);
	attach_ok("socket", 0, GBPF_ATTACH_NONE, NULL, NULL);
	attach_ok("gpux/entry", 0, GBPF_ATTACH_NONE, NULL, NULL);
	attach_ok("kprobe/", -EINVAL, 0, NULL, NULL);
	attach_ok("uprobe/app", -EINVAL, 0, NULL, NULL);
	attach_ok("uprobe/:main", -EINVAL, 0, NULL, NULL);
	attach_ok("uprobe/app:", -EINVAL, 0, NULL, NULL);
	attach_ok("host/memcpy/x", -EINVAL, 0, NULL, NULL);
	attach_ok("host/launchx", -EINVAL, 0, NULL, NULL);
	attach_ok("gpu/entryx", -EINVAL, 0, NULL, NULL);
	attach_ok("gpu/nothing", -EINVAL, 0, NULL, NULL);
	{
		struct gbpf_attach a;

		tap_ok(gbpf_attach_parse("kprobe/long_kernel_name", &a, small, sizeof(small)) == -ENOSPC,
		       "attach parse with too small storage gives -ENOSPC");
	}
	return tap_done();
}
