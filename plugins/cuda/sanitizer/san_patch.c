/* SPDX-License-Identifier: MIT */
/*
 * The Compute Sanitizer engine's patch module: PTX around the probe
 * fragment, ptxas --compile-as-tools-patch, a disk cache, and the
 * placeholder replacement that binds a cached cubin to one process.
 */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gbpf/cuda_inject.h>
#include <gbpf/probe_ctx.h>
#include <gbpf/prog.h>

#include "plugins/cuda/ptx_buf.h"
#include "plugins/cuda/ptx_codegen.h"
#include "san_api.h"
#include "san_patch.h"

extern char **environ;

/*
 * The callbacks copy record fields into the context with 8-byte loads and
 * stores at these offsets: device and its zero padding travel as one word.
 */
_Static_assert(offsetof(struct gbpf_san_record, device) % 8 == 0 &&
		       offsetof(struct gbpf_san_record, device_pad) == offsetof(struct gbpf_san_record, device) + 4,
	       "gbpf_san_record: device and device_pad form one aligned 8-byte word");
_Static_assert(offsetof(struct gbpf_gpu_ctx, device) == GBPF_GPU_CTX_DEVICE_OFF &&
		       offsetof(struct gbpf_gpu_ctx, device) % 8 == 0 &&
		       offsetof(struct gbpf_gpu_ctx, device_pad) == offsetof(struct gbpf_gpu_ctx, device) + 4,
	       "gbpf_gpu_ctx: device and device_pad form one aligned 8-byte word");
_Static_assert(sizeof(struct gbpf_san_record) == 40, "gbpf_san_record layout (san_patch.h) changed");

/* One patch point the module may serve. */
struct san_site {
	int instruction;   /* GBPF_SAN_INSTRUCTION_* */
	uint32_t kind;     /* GBPF_ATTACH_GPU_* */
	const char *name;  /* callback name */
	uint32_t space;    /* GBPF_SPACE_* for memory callbacks */
};

static const struct san_site san_sites[] = {
	{GBPF_SAN_INSTRUCTION_BLOCK_ENTER, GBPF_ATTACH_GPU_ENTRY, GBPF_SAN_CB_ENTER, 0},
	{GBPF_SAN_INSTRUCTION_BLOCK_EXIT, GBPF_ATTACH_GPU_EXIT, GBPF_SAN_CB_EXIT, 0},
	{GBPF_SAN_INSTRUCTION_GLOBAL_MEMORY_ACCESS, GBPF_ATTACH_GPU_MEM, GBPF_SAN_CB_GMEM, GBPF_SPACE_GLOBAL},
	{GBPF_SAN_INSTRUCTION_SHARED_MEMORY_ACCESS, GBPF_ATTACH_GPU_MEM, GBPF_SAN_CB_SMEM, GBPF_SPACE_SHARED},
	{GBPF_SAN_INSTRUCTION_BARRIER, GBPF_ATTACH_GPU_BARRIER, GBPF_SAN_CB_BARRIER, 0},
};

const char *gbpf_san_patch_callback(const uint32_t *probe_kind, size_t probe_cnt, int instruction_id)
{
	for (size_t s = 0; s < sizeof(san_sites) / sizeof(san_sites[0]); s++) {
		if (san_sites[s].instruction != instruction_id)
			continue;
		for (size_t i = 0; probe_kind && i < probe_cnt; i++)
			if (probe_kind[i] == san_sites[s].kind)
				return san_sites[s].name;
	}
	return NULL;
}

/* The callback's parameter list, by kind. */
static void san_emit_params(struct ptx_buf *b, uint32_t kind)
{
	ptx_buf_puts(b, "(.param .b64 __ud, .param .b64 __pc");
	if (kind == GBPF_ATTACH_GPU_MEM)
		ptx_buf_puts(b, ", .param .b64 __ptr, .param .b32 __size, .param .b32 __flags, "
				".param .b64 __value");
	else if (kind == GBPF_ATTACH_GPU_BARRIER)
		ptx_buf_puts(b, ", .param .b32 __bar, .param .b32 __count, .param .b32 __flags");
	ptx_buf_puts(b, ")\n");
}

/*
 * The memory fields of the context. mem_kind from the flags: READ and WRITE
 * together, or ATOMSYS, is an atomic; no flag (a prefetch) counts as a load.
 * mem_value is read through the callback's value pointer for stores and
 * atomics, by the access size (the first 8 bytes of wider accesses).
 */
static void san_emit_mem_fields(struct ptx_buf *b, uint32_t space, const char *tag)
{
	ptx_buf_printf(b,
		       "ld.param.b64 %%x1, [__ptr];\n"
		       "st.local.u64 [__c+%zu], %%x1;\n"
		       "ld.param.b32 %%y1, [__size];\n"
		       "st.local.u32 [__c+%zu], %%y1;\n"
		       "ld.param.b32 %%y2, [__flags];\n"
		       "and.b32 %%y3, %%y2, 3;\n"
		       "and.b32 %%y4, %%y2, %u;\n"
		       "setp.ne.u32 %%z1, %%y4, 0;\n"
		       "@%%z1 mov.u32 %%y3, %u;\n"
		       "setp.eq.u32 %%z1, %%y3, 0;\n"
		       "@%%z1 mov.u32 %%y3, %u;\n"
		       "st.local.u32 [__c+%zu], %%y3;\n"
		       "mov.u32 %%y4, %u;\n"
		       "st.local.u32 [__c+%zu], %%y4;\n"
		       "ld.param.b64 %%x2, [__pc];\n"
		       "cvt.u32.u64 %%y5, %%x2;\n"
		       "st.local.u32 [__c+%zu], %%y5;\n"
		       "mov.u64 %%x3, 0;\n"
		       "ld.param.b64 %%x4, [__value];\n"
		       "setp.eq.u64 %%z1, %%x4, 0;\n"
		       "@%%z1 bra $Lsan_v_%s;\n"
		       "setp.eq.u32 %%z1, %%y3, %u;\n"
		       "@%%z1 bra $Lsan_v_%s;\n"
		       "setp.eq.u32 %%z1, %%y1, 1;\n"
		       "@%%z1 ld.u8 %%x3, [%%x4];\n"
		       "setp.eq.u32 %%z1, %%y1, 2;\n"
		       "@%%z1 ld.u16 %%x3, [%%x4];\n"
		       "setp.eq.u32 %%z1, %%y1, 4;\n"
		       "@%%z1 ld.u32 %%x3, [%%x4];\n"
		       "setp.ge.u32 %%z1, %%y1, 8;\n"
		       "@%%z1 ld.u64 %%x3, [%%x4];\n"
		       "$Lsan_v_%s:\n"
		       "st.local.u64 [__c+%zu], %%x3;\n",
		       offsetof(struct gbpf_gpu_ctx, mem_addr), offsetof(struct gbpf_gpu_ctx, mem_size),
		       GBPF_SAN_MEMORY_DEVICE_FLAG_ATOMSYS, GBPF_MEM_ATOMIC, GBPF_MEM_LOAD,
		       offsetof(struct gbpf_gpu_ctx, mem_kind), space, offsetof(struct gbpf_gpu_ctx, mem_space),
		       offsetof(struct gbpf_gpu_ctx, mem_site), tag, GBPF_MEM_LOAD, tag, tag,
		       offsetof(struct gbpf_gpu_ctx, mem_value));
}

static void san_emit_callback(struct ptx_buf *b, const struct san_site *site,
			      const struct gbpf_san_patch_opts *o, uint64_t mask)
{
	const char *tag = site->name + strlen("__gbpf_san_");
	static const struct {
		unsigned unused_bit;
		size_t ctx_off, rec_off;
	} copied[] = {
		{GBPF_CUDA_CTX_UNUSED_KERNEL_ID, offsetof(struct gbpf_gpu_ctx, kernel_id),
		 offsetof(struct gbpf_san_record, kernel_id)},
		{GBPF_CUDA_CTX_UNUSED_PARAMS, offsetof(struct gbpf_gpu_ctx, params),
		 offsetof(struct gbpf_san_record, params)},
		{GBPF_CUDA_CTX_UNUSED_LAUNCH_ID, offsetof(struct gbpf_gpu_ctx, launch_id),
		 offsetof(struct gbpf_san_record, launch_id)},
		/* device and device_pad (0) in one word: the static assertions above. */
		{GBPF_CUDA_CTX_UNUSED_DEVICE, offsetof(struct gbpf_gpu_ctx, device),
		 offsetof(struct gbpf_san_record, device)},
	};

	ptx_buf_printf(b, ".visible .func (.param .b32 __r) %s", site->name);
	san_emit_params(b, site->kind);
	ptx_buf_printf(b,
		       "{\n"
		       ".local .align 8 .b8 __c[%zu];\n"
		       ".reg .b64 %%x<8>;\n"
		       ".reg .b32 %%y<6>;\n"
		       ".reg .pred %%z<2>;\n"
		       "ld.param.b64 %%x0, [__ud];\n"
		       "setp.eq.u64 %%z0, %%x0, 0;\n"
		       "@%%z0 bra $Lsan_done_%s;\n"
		       "ld.global.u64 %%x7, [%%x0+%zu];\n"
		       "and.b64 %%x6, %%x7, 0x%016llx;\n"
		       "setp.eq.u64 %%z0, %%x6, 0;\n"
		       "@%%z0 bra $Lsan_done_%s;\n",
		       sizeof(struct gbpf_gpu_ctx), tag, offsetof(struct gbpf_san_record, probes),
		       (unsigned long long)mask, tag);
	/* Only the fields some probe reads: each is a global load and a local store per call. */
	for (size_t f = 0; f < sizeof(copied) / sizeof(copied[0]); f++) {
		if (o->ctx_unused & copied[f].unused_bit)
			continue;
		ptx_buf_printf(b, "ld.global.u64 %%x1, [%%x0+%zu];\nst.local.u64 [__c+%zu], %%x1;\n",
			       copied[f].rec_off, copied[f].ctx_off);
	}
	if (site->kind == GBPF_ATTACH_GPU_MEM && !(o->ctx_unused & GBPF_CUDA_CTX_UNUSED_MEM))
		san_emit_mem_fields(b, site->space, tag);
	ptx_buf_puts(b, "mov.u64 %x5, __c;\ncvta.local.u64 %x5, %x5;\n");
	for (size_t i = 0; i < o->probe_cnt; i++) {
		if (!(mask & (1ull << i)))
			continue;
		ptx_buf_printf(b,
			       "and.b64 %%x6, %%x7, 0x%016llx;\n"
			       "setp.eq.u64 %%z0, %%x6, 0;\n"
			       "@%%z0 bra $Lsan_skip_%s_%zu;\n"
			       "{\n.param .b64 __a;\n.param .b64 __rr;\n"
			       "st.param.b64 [__a], %%x5;\n"
			       "call (__rr), __gbpf_probe_%zu, (__a);\n}\n"
			       "$Lsan_skip_%s_%zu:\n",
			       (unsigned long long)(1ull << i), tag, i, i, tag, i);
	}
	ptx_buf_printf(b,
		       "$Lsan_done_%s:\n"
		       "mov.u32 %%y0, 0;\n"
		       "st.param.b32 [__r], %%y0;\n"
		       "ret;\n}\n",
		       tag);
}

/* Copy @p text, making every module-scope `.func` .visible when @p visible. */
static void san_copy_funcs(struct ptx_buf *b, const char *text, size_t n, int visible)
{
	if (!visible) {
		ptx_buf_printf(b, "%.*s", (int)n, text);
		return;
	}
	/* Module-scope helpers become .visible: some loaders take only global functions. */
	for (const char *line = text, *end = text + n; line < end;) {
		const char *nl = memchr(line, '\n', (size_t)(end - line));
		size_t ln = nl ? (size_t)(nl - line) + 1 : (size_t)(end - line);

		if (ln >= 6 && !strncmp(line, ".func ", 6))
			ptx_buf_puts(b, ".visible ");
		ptx_buf_printf(b, "%.*s", (int)ln, line);
		line += ln;
	}
}

/*
 * Copy the fragment, giving __gbpf_maps, __gbpf_pid_tgid and
 * __gbpf_clock_off placeholder initialisers. The fragment declares
 * __gbpf_clock_off (ptx_emit_module_helpers) whether a probe calls
 * bpf_ktime_get_ns or not; a fragment without the declaration gets one, so
 * that the placeholder is always in the cubin and gbpf_san_patch_set_globals
 * can insist on finding it once.
 */
static int san_emit_fragment(struct ptx_buf *b, const char *frag, uint32_t flags, char *why, size_t why_size)
{
	static const char maps_decl[] = ".visible .global .align 8 .u64 __gbpf_maps[";
	static const char pid_decl[] = ".visible .global .align 8 .u64 __gbpf_pid_tgid;";
	static const char clock_decl[] = ".visible .global .align 8 .u64 __gbpf_clock_off;";
	const char *m = strstr(frag, maps_decl), *p = strstr(frag, pid_decl), *c, *end;
	int visible = !!(flags & GBPF_SAN_PATCH_VISIBLE_FUNCS);
	unsigned long n;
	char *num_end;

	if (!m || !p || p < m) {
		snprintf(why, why_size, "patch module: the probe fragment lacks the declarations of "
					"__gbpf_maps and __gbpf_pid_tgid");
		return -EINVAL;
	}
	if (strstr(frag, ".const ")) {
		/* ptxas --compile-as-tools-patch: "Allocating additional constants is not allowed" */
		snprintf(why, why_size, "patch module: the probe fragment declares constant-space variables "
					"(made with GBPF_PTX_CONST_MAP_TABLE?), which a patch module may not have");
		return -EINVAL;
	}
	n = strtoul(m + sizeof(maps_decl) - 1, &num_end, 10);
	if (n == 0 || n > GBPF_SAN_MAX_MAPS || strncmp(num_end, "];", 2)) {
		snprintf(why, why_size, "patch module: unexpected __gbpf_maps declaration in the fragment");
		return -EINVAL;
	}
	end = num_end + 2;
	c = strstr(frag, clock_decl);
	if (c && c < p) {
		snprintf(why, why_size, "patch module: __gbpf_clock_off declared before __gbpf_pid_tgid in the fragment");
		return -EINVAL;
	}
	ptx_buf_printf(b, "%.*s%s%lu] = {", (int)(m - frag), frag, maps_decl, n);
	for (unsigned long i = 0; i < n; i++)
		ptx_buf_printf(b, "%s0x%016llx", i ? ", " : "", (unsigned long long)GBPF_SAN_MAGIC_MAP(i));
	ptx_buf_printf(b, "};%.*s", (int)(p - end), end);
	ptx_buf_printf(b, ".visible .global .align 8 .u64 __gbpf_pid_tgid = 0x%016llx;",
		       (unsigned long long)GBPF_SAN_MAGIC_PID);
	p += sizeof(pid_decl) - 1;
	if (c) {
		san_copy_funcs(b, p, (size_t)(c - p), visible);
		p = c + sizeof(clock_decl) - 1;
	} else {
		ptx_buf_puts(b, "\n");
	}
	ptx_buf_printf(b, ".visible .global .align 8 .u64 __gbpf_clock_off = 0x%016llx;",
		       (unsigned long long)GBPF_SAN_MAGIC_CLOCK);
	san_copy_funcs(b, p, strlen(p), visible);
	return 0;
}

int gbpf_san_patch_ptx(const struct gbpf_san_patch_opts *o, char **ptx, size_t *len, char *why,
		       size_t why_size)
{
	struct ptx_buf b = {0};
	char head[128];
	int rc;

	if (!o || o->sz < sizeof(*o) || !o->fragment || !o->probe_kind || !o->probe_cnt ||
	    o->probe_cnt > GBPF_SAN_MAX_PROBES || o->map_cnt > GBPF_SAN_MAX_MAPS || !ptx || !why) {
		if (why && why_size)
			snprintf(why, why_size, "patch module: bad options (at most %d probes, %d maps)",
				 GBPF_SAN_MAX_PROBES, GBPF_SAN_MAX_MAPS);
		return -EINVAL;
	}
	rc = gbpf_ptx_header(head, sizeof(head), o->arch ? o->arch : "sm_90", GBPF_PTX_DEFAULT_VERSION);
	if (rc < 0 || (size_t)rc >= sizeof(head)) {
		snprintf(why, why_size, "patch module: bad architecture '%s'", o->arch ? o->arch : "");
		return -EINVAL;
	}
	ptx_buf_puts(&b, head);
	rc = san_emit_fragment(&b, o->fragment, o->flags, why, why_size);
	if (rc) {
		ptx_buf_free(&b);
		return rc;
	}
	for (size_t s = 0; s < sizeof(san_sites) / sizeof(san_sites[0]); s++) {
		uint64_t mask = 0;

		for (size_t i = 0; i < o->probe_cnt; i++)
			if (o->probe_kind[i] == san_sites[s].kind)
				mask |= 1ull << i;
		if (mask)
			san_emit_callback(&b, &san_sites[s], o, mask);
	}
	if (b.oom) {
		ptx_buf_free(&b);
		snprintf(why, why_size, "patch module: out of memory");
		return -ENOMEM;
	}
	*ptx = b.p;
	if (len)
		*len = b.len;
	return 0;
}

int gbpf_san_patch_set_globals(void *cubin, size_t size, const uint64_t *maps, size_t map_cnt,
			       uint64_t pid_tgid, uint64_t clock_off, char *why, size_t why_size)
{
	unsigned char *img = cubin;
	size_t found_maps = 0, found_pid = 0, found_clock = 0;

	if (!cubin || (map_cnt && !maps) || map_cnt > GBPF_SAN_MAX_MAPS || !why)
		return -EINVAL;
	/*
	 * The placeholders are 64-bit constants no code or metadata contains;
	 * each must appear exactly once (in .nv.global.init), so a match
	 * elsewhere cannot be overwritten silently.
	 */
	for (size_t off = 0; off + 8 <= size; off++) {
		uint64_t v;

		memcpy(&v, img + off, 8);
		if (v == GBPF_SAN_MAGIC_PID) {
			memcpy(img + off, &pid_tgid, 8);
			found_pid++;
			off += 7;
			continue;
		}
		if (v == GBPF_SAN_MAGIC_CLOCK) {
			memcpy(img + off, &clock_off, 8);
			found_clock++;
			off += 7;
			continue;
		}
		if ((v & ~0xfff000ull) != GBPF_SAN_MAGIC_MAP(0))
			continue;
		size_t i = (size_t)((v - GBPF_SAN_MAGIC_MAP(0)) >> 12);
		uint64_t real = i < map_cnt ? maps[i] : 0;

		memcpy(img + off, &real, 8);
		found_maps++;
		off += 7;
	}
	if (found_pid != 1 || found_clock != 1 || found_maps < map_cnt) {
		snprintf(why, why_size,
			 "patch cubin: placeholders found: pid_tgid %zu (want 1), clock_off %zu (want 1), "
			 "maps %zu (want >= %zu)",
			 found_pid, found_clock, found_maps, map_cnt);
		return -ENOENT;
	}
	return 0;
}

/* ---- ptxas and the cache ---- */

static uint64_t san_fnv1a(uint64_t h, const void *data, size_t n)
{
	const unsigned char *p = data;

	for (size_t i = 0; i < n; i++) {
		h ^= p[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

static int san_read_file(const char *path, void **out, size_t *size)
{
	struct stat st;
	void *buf;
	ssize_t got;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || st.st_size <= 0 || (uint64_t)st.st_size > GBPF_SAN_CUBIN_MAX) {
		close(fd);
		return st.st_size > 0 ? -EFBIG : -EIO;
	}
	buf = malloc((size_t)st.st_size);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	got = read(fd, buf, (size_t)st.st_size);
	close(fd);
	if (got != st.st_size) {
		free(buf);
		return -EIO;
	}
	*out = buf;
	*size = (size_t)st.st_size;
	return 0;
}

static int san_write_file(const char *path, const void *data, size_t size)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	ssize_t put;

	if (fd < 0)
		return -errno;
	put = write(fd, data, size);
	if (close(fd) || put < 0 || (size_t)put != size)
		return -EIO;
	return 0;
}

/* The cache folder (created), or -ENOENT when caching is off or impossible. */
static int san_cache_dir(char *dir, size_t size)
{
	const char *off = getenv("GBPF_SANITIZER_CACHE"), *base = getenv("GBPF_CACHE_DIR");
	char parent[512];
	int n;

	if (off && !strcmp(off, "0"))
		return -ENOENT;
	if (base && *base)
		n = snprintf(parent, sizeof(parent), "%s", base);
	else if ((base = getenv("XDG_CACHE_HOME")) && *base)
		n = snprintf(parent, sizeof(parent), "%s/gbpf", base);
	else if ((base = getenv("HOME")) && *base)
		n = snprintf(parent, sizeof(parent), "%s/.cache/gbpf", base);
	else
		return -ENOENT;
	if (n < 0 || (size_t)n >= sizeof(parent))
		return -ENAMETOOLONG;
	n = snprintf(dir, size, "%s/sanitizer", parent);
	if (n < 0 || (size_t)n >= size)
		return -ENAMETOOLONG;
	/* Two levels at most: XDG_CACHE_HOME or ~/.cache is expected to exist, or be creatable. */
	if (mkdir(parent, 0700) && errno != EEXIST)
		return -errno;
	if (mkdir(dir, 0700) && errno != EEXIST)
		return -errno;
	return 0;
}

static int san_find_ptxas(char *path, size_t size)
{
	const char *env = getenv("GBPF_PTXAS"), *home = getenv("CUDA_HOME");

	if (env && *env) {
		snprintf(path, size, "%s", env);
		return access(path, X_OK) ? -ENOENT : 0;
	}
	if (home && *home && (size_t)snprintf(path, size, "%s/bin/ptxas", home) < size && !access(path, X_OK))
		return 0;
	snprintf(path, size, "/usr/local/cuda/bin/ptxas");
	if (!access(path, X_OK))
		return 0;
	snprintf(path, size, "ptxas"); /* posix_spawnp searches PATH */
	return 1;
}

/* Run ptxas on @p in, output in @p out, messages in @p log. */
static int san_run_ptxas(const char *in, const char *out, const char *log, const char *arch, char *why,
			 size_t why_size)
{
	char ptxas[512], archopt[64];
	char *argv[] = {ptxas, "--compile-as-tools-patch", archopt, (char *)in, "-o", (char *)out, NULL};
	posix_spawn_file_actions_t fa;
	pid_t pid;
	int st = 0, rc, search = san_find_ptxas(ptxas, sizeof(ptxas));

	if (search < 0) {
		snprintf(why, why_size, "ptxas not found at %s (GBPF_PTXAS)", ptxas);
		return -ENOENT;
	}
	snprintf(archopt, sizeof(archopt), "-arch=%s", arch);
	if (posix_spawn_file_actions_init(&fa))
		return -ENOMEM;
	posix_spawn_file_actions_addopen(&fa, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	posix_spawn_file_actions_adddup2(&fa, 1, 2);
	rc = search ? posix_spawnp(&pid, ptxas, &fa, NULL, argv, environ)
		    : posix_spawn(&pid, ptxas, &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (rc) {
		snprintf(why, why_size, "cannot run %s: %s (set GBPF_PTXAS or CUDA_HOME)", ptxas, strerror(rc));
		return -ENOENT;
	}
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -errno;
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		char msg[768] = "";
		int fd = open(log, O_RDONLY | O_CLOEXEC);

		if (fd >= 0) {
			ssize_t n = read(fd, msg, sizeof(msg) - 1);

			msg[n > 0 ? n : 0] = '\0';
			close(fd);
		}
		snprintf(why, why_size, "%s --compile-as-tools-patch %s failed (status %d): %s", ptxas, archopt,
			 WIFEXITED(st) ? WEXITSTATUS(st) : -1, msg);
		return -EIO;
	}
	return 0;
}

int gbpf_san_patch_compile(const char *ptx, size_t len, const char *arch, void **cubin, size_t *size,
			   int *cached, char *why, size_t why_size)
{
	char dir[600], key[700], tmpd[] = "/tmp/gbpf-san-XXXXXX", in[64], out[64], log[64];
	uint64_t h = 0xcbf29ce484222325ull;
	int rc, have_cache;

	if (!ptx || !arch || !cubin || !size || !why || strlen(arch) > 16)
		return -EINVAL;
	if (cached)
		*cached = 0;
	h = san_fnv1a(h, arch, strlen(arch) + 1);
	h = san_fnv1a(h, ptx, len);
	have_cache = san_cache_dir(dir, sizeof(dir)) == 0;
	if (have_cache) {
		snprintf(key, sizeof(key), "%s/%016llx-%zx-%s.cubin", dir, (unsigned long long)h, len, arch);
		if (!san_read_file(key, cubin, size)) {
			if (cached)
				*cached = 1;
			return 0;
		}
	}
	if (!mkdtemp(tmpd)) {
		snprintf(why, why_size, "cannot create a folder under /tmp for ptxas: %s", strerror(errno));
		return -errno;
	}
	snprintf(in, sizeof(in), "%s/p.ptx", tmpd);
	snprintf(out, sizeof(out), "%s/p.cubin", tmpd);
	snprintf(log, sizeof(log), "%s/log", tmpd);
	rc = san_write_file(in, ptx, len);
	if (rc)
		snprintf(why, why_size, "cannot write %s: %s", in, strerror(-rc));
	if (!rc)
		rc = san_run_ptxas(in, out, log, arch, why, why_size);
	if (!rc) {
		rc = san_read_file(out, cubin, size);
		if (rc)
			snprintf(why, why_size, "cannot read ptxas output %s: %s", out, strerror(-rc));
	}
	if (!rc && have_cache) {
		char tmp[720];

		/* Write then rename: concurrent processes never read a half-written cubin. */
		snprintf(tmp, sizeof(tmp), "%s.%d", key, (int)getpid());
		if (!san_write_file(tmp, *cubin, *size))
			rename(tmp, key);
		unlink(tmp);
	}
	unlink(in);
	unlink(out);
	unlink(log);
	rmdir(tmpd);
	return rc;
}
