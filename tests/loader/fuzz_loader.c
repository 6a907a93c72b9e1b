/* SPDX-License-Identifier: MIT */
/*
 * tests/loader/fuzz_loader.c - libFuzzer target: any byte string given to
 * gbpf_object__open_mem must give an object or a clean error with a
 * message, never a crash, a leak or an unbounded allocation.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/libbpf.h>
#include <gbpf/object.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	/* libbpf reports malformed BTF on stderr; the loader's own message is what we check. */
	libbpf_set_print(NULL);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[256] = "";
	GBPF_OPTS(gbpf_object_open_opts, opts, .object_name = "fuzz.o", .errbuf = err,
		  .errbuf_size = sizeof(err));
	struct gbpf_object *obj = gbpf_object__open_mem(data, size, &opts);
	const struct gbpf_prog_desc *p;
	const struct gbpf_map_desc *m;
	volatile uint64_t sink = 0;

	/* Short inputs also exercise the name parsers (demangler, attach points). */
	if (size < 512) {
		char name[512], out[256], storage[512];
		struct gbpf_attach a;

		memcpy(name, data, size);
		name[size] = '\0';
		gbpf_demangle(name, out, sizeof(out));
		gbpf_kernel_name_match("vec*", name);
		gbpf_attach_parse(name, &a, storage, sizeof(storage));
	}
	if (!obj) {
		/* Every failure must explain itself. */
		if (err[0] == '\0' || strncmp(err, "fuzz.o: ", 8) != 0)
			abort();
		return 0;
	}
	/* Touch everything the descriptions point to, so ASan checks it. */
	gbpf_object__for_each_prog(p, obj) {
		size_t i;

		for (i = 0; i < p->insn_cnt; i++)
			sink += (uint64_t)p->insns[i].imm + p->insns[i].code;
		sink += strlen(p->name) + strlen(p->section) + (p->license ? strlen(p->license) : 0);
		if (p->attach.target)
			sink += strlen(p->attach.target);
		if (p->attach.symbol)
			sink += strlen(p->attach.symbol);
	}
	gbpf_object__for_each_map(m, obj) {
		sink += strlen(m->name) + m->value_size;
		if (m->init_data && m->init_size)
			sink += ((const uint8_t *)m->init_data)[m->init_size - 1];
	}
	(void)sink;
	gbpf_object__close(obj);
	return 0;
}
