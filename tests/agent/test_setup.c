/* SPDX-License-Identifier: MIT */
/*
 * tests/agent/test_setup.c - what SETUP carries for the agent's verifier
 * (protocol 2): the initial bytes of .data / .rodata maps and the flags
 * (--allow-app-writes, --engine).
 *
 * Decoder: the .rodata bytes round trip; bytes for other maps, more bytes
 * than the value, bytes cut short are refused with a reason; every
 * single-byte change of a valid setup is refused with a reason or decodes
 * keeping every invariant; engine flags alone pass, both at once and
 * undefined bits are refused.
 *
 * A real agent (preloaded with the test backend into launch_app) behind a
 * fake controller: a gpu/entry program calling puts on a .rodata string is
 * attached and its line comes back as a PRINT; the same setup without the
 * .rodata bytes, or with a region whose .rodata differs from them, is
 * refused with the reason; a gpu/mem writer is attached only with
 * GBPF_AGENT_F_ALLOW_APP_WRITES.
 * argv: AGENT_LIB APP HOSTTEST_PLUGIN
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gbpf/helper_ids.h>
#include <gbpf/plugin.h>
#include <gbpf/probe_ctx.h>

#include "core/agent/proto.h"
#include "maps/map.h"
#include "tap.h"

static const char rodata_bytes[24] = "hi\0hello from rodata";

/* The .rodata map: an array of one value holding the strings. */
static struct gbpf_map_desc maps[] = {
	{.sz = sizeof(struct gbpf_map_desc), .name = ".rodata", .type = GBPF_MAP_TYPE_ARRAY,
	 .key_size = 4, .value_size = sizeof(rodata_bytes), .max_entries = 1,
	 .map_flags = GBPF_F_RDONLY_PROG, .origin = GBPF_MAP_ORIGIN_RODATA,
	 .init_data = rodata_bytes, .init_size = sizeof(rodata_bytes)},
};

/* bpf_gpu_puts(&rodata[3]) ("hello from rodata"); return 0; */
static struct gbpf_insn puts_insns[] = {
	{.code = GBPF_OP_LDDW, .dst = 1, .src = GBPF_PSEUDO_MAP_IDX_VALUE, .imm = 0},
	{.code = 0, .imm = 3},
	{.code = GBPF_OP_CALL, .imm = GBPF_HELPER_GPU_PUTS},
	{.code = GBPF_ALU64 | GBPF_MOV | GBPF_K, .dst = 0, .imm = 0},
	{.code = GBPF_OP_EXIT},
};

/* if (ctx->mem_kind == STORE) ctx->mem_value = 0; return 0; */
static struct gbpf_insn writer_insns[] = {
	{.code = GBPF_LDX | GBPF_MEM | GBPF_W, .dst = 2, .src = 1,
	 .off = (int16_t)offsetof(struct gbpf_gpu_ctx, mem_kind)},
	{.code = GBPF_JMP | GBPF_JNE | GBPF_K, .dst = 2, .off = 1, .imm = GBPF_MEM_STORE},
	{.code = GBPF_ST | GBPF_MEM | GBPF_DW, .dst = 1,
	 .off = (int16_t)offsetof(struct gbpf_gpu_ctx, mem_value), .imm = 0},
	{.code = GBPF_ALU64 | GBPF_MOV | GBPF_K, .dst = 0, .imm = 0},
	{.code = GBPF_OP_EXIT},
};

static struct gbpf_prog_desc prog_of(struct gbpf_insn *insns, size_t n, uint32_t kind,
				     const char *name)
{
	return (struct gbpf_prog_desc){
		.sz = sizeof(struct gbpf_prog_desc), .name = name,
		.section = kind == GBPF_ATTACH_GPU_MEM ? "gpu/mem/*" : "gpu/entry/kern_a",
		.insns = insns, .insn_cnt = n, .maps = maps, .map_cnt = 1,
		.attach = {.kind = kind, .target = kind == GBPF_ATTACH_GPU_MEM ? "*" : "kern_a"},
		.license = "GPL", .source_file = "setup.bpf.o"};
}

static void encode_puts(struct gbpf_agent_buf *b, uint32_t flags)
{
	struct gbpf_prog_desc p = prog_of(puts_insns, 5, GBPF_ATTACH_GPU_ENTRY, "say");
	uint32_t base = 0;

	memset(b, 0, sizeof(*b));
	gbpf_agent_encode_setup(b, "hosttest", "/x/libgbpf-hosttest.so", flags, maps, 1, &p, &base,
				1);
}

/* Offset of the flags field in an encoded setup with the strings above. */
#define FLAGS_OFF (4 + strlen("hosttest") + 4 + strlen("/x/libgbpf-hosttest.so"))
/* Offset of map #0's init_size: flags, map count, name, six u32 fields. */
#define INIT_SIZE_OFF (FLAGS_OFF + 4 + 4 + 4 + strlen(".rodata") + 6 * 4)

static void poke(struct gbpf_agent_buf *b, size_t off, uint32_t v)
{
	memcpy(b->data + off, &v, 4); /* the wire is little endian, as this host */
}

/* Invariants the agent relies on for the new fields. */
static const char *init_broken(const struct gbpf_agent_setup *s)
{
	if (s->flags & ~GBPF_AGENT_F_KNOWN)
		return "unknown flags";
	if ((s->flags & GBPF_AGENT_F_ENGINE_PTX) && (s->flags & GBPF_AGENT_F_ENGINE_SANITIZER))
		return "both engines";
	for (size_t i = 0; i < s->map_cnt; i++) {
		const struct gbpf_map_desc *m = &s->maps[i];

		if (!m->init_data != !m->init_size)
			return "init bytes and size disagree";
		if (m->init_size > m->value_size)
			return "more init bytes than the value";
		if (m->init_size && m->origin != GBPF_MAP_ORIGIN_DATA &&
		    m->origin != GBPF_MAP_ORIGIN_RODATA)
			return "init bytes for a map that is not .data or .rodata";
	}
	return NULL;
}

static void test_decoder(void)
{
	static const unsigned char vals[] = {0x00, 0xff, 0x01, 0x80, 0x7f, 0x04, 0x0c};
	struct gbpf_agent_setup s;
	struct gbpf_agent_buf b;
	size_t tried = 0, rejected = 0, no_reason = 0, broken = 0, cut, bad = 0;
	char why[512];
	unsigned char *m;
	int err;

	encode_puts(&b, 0);
	err = gbpf_agent_decode_setup(b.data, b.len, &s, why, sizeof(why));
	tap_ok(err == 0 && s.map_cnt == 1 && s.maps[0].init_size == sizeof(rodata_bytes) &&
		       s.maps[0].init_data && s.maps[0].init_data != rodata_bytes &&
		       !memcmp(s.maps[0].init_data, rodata_bytes, sizeof(rodata_bytes)) &&
		       s.progs[0].maps == &s.maps[0],
	       "setup: the .rodata bytes round trip (%s)", err ? why : "ok");
	if (!err)
		gbpf_agent_setup_free(&s);
	for (cut = 0; cut < b.len; cut++)
		if (gbpf_agent_decode_setup(b.data, cut, &s, why, sizeof(why)) != -EINVAL)
			bad++;
	tap_ok(bad == 0, "setup: each of its %zu truncations refused", b.len);
	gbpf_agent_decode_setup(b.data, INIT_SIZE_OFF + 4 + 5, &s, why, sizeof(why));
	tap_ok(strstr(why, "map.init_data at payload offset") != NULL,
	       "setup: bytes cut short name the field: %s", why);

	poke(&b, INIT_SIZE_OFF, sizeof(rodata_bytes) + 1);
	err = gbpf_agent_decode_setup(b.data, b.len, &s, why, sizeof(why));
	tap_ok(err == -EINVAL && strstr(why, "25 initial bytes exceed its value size 24"),
	       "setup: more initial bytes than the value refused: %s", why);
	poke(&b, INIT_SIZE_OFF, 0x7fffffff);
	err = gbpf_agent_decode_setup(b.data, b.len, &s, why, sizeof(why));
	tap_ok(err == -EINVAL && strstr(why, "exceed"),
	       "setup: a huge initial size refused before any allocation: %s", why);
	poke(&b, INIT_SIZE_OFF, sizeof(rodata_bytes));
	poke(&b, INIT_SIZE_OFF - 4, GBPF_MAP_ORIGIN_USER);
	err = gbpf_agent_decode_setup(b.data, b.len, &s, why, sizeof(why));
	tap_ok(err == -EINVAL && strstr(why, "not .data or .rodata"),
	       "setup: initial bytes for a declared map refused: %s", why);
	poke(&b, INIT_SIZE_OFF - 4, GBPF_MAP_ORIGIN_RODATA);

	/* Flags: each engine alone, never both, nothing undefined. */
	poke(&b, FLAGS_OFF, GBPF_AGENT_F_ENGINE_PTX | GBPF_AGENT_F_ALLOW_APP_WRITES);
	err = gbpf_agent_decode_setup(b.data, b.len, &s, why, sizeof(why));
	tap_ok(err == 0 && s.flags == (GBPF_AGENT_F_ENGINE_PTX | GBPF_AGENT_F_ALLOW_APP_WRITES),
	       "setup: ENGINE_PTX with ALLOW_APP_WRITES accepted (%s)", err ? why : "ok");
	if (!err)
		gbpf_agent_setup_free(&s);
	poke(&b, FLAGS_OFF, GBPF_AGENT_F_ENGINE_SANITIZER | GBPF_AGENT_F_GPU_TIMELINE);
	err = gbpf_agent_decode_setup(b.data, b.len, &s, why, sizeof(why));
	tap_ok(err == 0 && s.flags == (GBPF_AGENT_F_ENGINE_SANITIZER | GBPF_AGENT_F_GPU_TIMELINE),
	       "setup: ENGINE_SANITIZER with GPU_TIMELINE accepted (%s)", err ? why : "ok");
	if (!err)
		gbpf_agent_setup_free(&s);
	poke(&b, FLAGS_OFF, GBPF_AGENT_F_ENGINE_SANITIZER | GBPF_AGENT_F_ENGINE_PTX);
	err = gbpf_agent_decode_setup(b.data, b.len, &s, why, sizeof(why));
	tap_ok(err == -EINVAL && strstr(why, "both the PTX and the sanitizer engine"),
	       "setup: both engines at once refused: %s", why);
	poke(&b, FLAGS_OFF, 1u << 4);
	err = gbpf_agent_decode_setup(b.data, b.len, &s, why, sizeof(why));
	tap_ok(err == -EINVAL && strstr(why, "unknown flags 0x10"),
	       "setup: the first undefined bit refused: %s", why);
	poke(&b, FLAGS_OFF, 0);
	tap_ok(gbpf_agent_verify_flags(GBPF_AGENT_F_ALLOW_APP_WRITES | GBPF_AGENT_F_ENGINE_PTX) ==
			       GBPF_VERIFY_F_ALLOW_MEM_WRITE &&
		       gbpf_agent_verify_flags(GBPF_AGENT_F_KNOWN & ~GBPF_AGENT_F_ALLOW_APP_WRITES) ==
			       0,
	       "verifier flags: only ALLOW_APP_WRITES lets probes write (both sides use this)");

	/* Every single-byte change: refused with a reason, or every invariant kept. */
	m = malloc(b.len);
	for (size_t i = 0; m && i < b.len; i++) {
		for (size_t v = 0; v < sizeof(vals); v++) {
			const char *what;

			if (b.data[i] == vals[v])
				continue;
			memcpy(m, b.data, b.len);
			m[i] = vals[v];
			why[0] = 0;
			tried++;
			if (gbpf_agent_decode_setup(m, b.len, &s, why, sizeof(why))) {
				rejected++;
				no_reason += !why[0];
				continue;
			}
			what = init_broken(&s);
			if (what && broken++ < 5)
				tap_diag("byte %zu = 0x%02x decodes with: %s", i, vals[v], what);
			gbpf_agent_setup_free(&s);
		}
	}
	tap_ok(tried && !broken && !no_reason,
	       "setup: %zu single-byte changes: %zu refused with a reason, the rest keep every "
	       "invariant (%zu broken, %zu without a reason)",
	       tried, rejected, broken, no_reason);
	free(m);
	gbpf_agent_buf_free(&b);
}

/* ---- a real agent behind a fake controller ---------------------------------------- */

static int read_full(int fd, void *p, size_t n)
{
	size_t got = 0;

	while (got < n) {
		ssize_t r = read(fd, (char *)p + got, n - got);

		if (r <= 0)
			return -1;
		got += (size_t)r;
	}
	return 0;
}

static int send_setup(int fd, const struct gbpf_agent_buf *b, int memfd)
{
	union {
		char c[CMSG_SPACE(sizeof(int))];
		struct cmsghdr a;
	} u;
	struct gbpf_agent_frame f;
	struct iovec iov = {.iov_base = &f, .iov_len = sizeof(f)};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.c,
			    .msg_controllen = sizeof(u.c)};
	struct cmsghdr *c;

	gbpf_agent_frame_init(&f, GBPF_AGENT_MSG_SETUP, (uint32_t)b->len);
	c = CMSG_FIRSTHDR(&mh);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &memfd, sizeof(int));
	if (sendmsg(fd, &mh, 0) != (ssize_t)sizeof(f))
		return -1;
	return write(fd, b->data, b->len) == (ssize_t)b->len ? 0 : -1;
}

enum scenario { GOOD, NO_BYTES, REGION_CHANGED };

/*
 * Play controller for launch_app (6 launches, exit 9) with the agent and
 * the test backend preloaded: send @p prog with @p flags, then collect
 * "R: report" and "P: print" lines into @p out until EOF. Returns the
 * app's wait status or -1.
 */
static int play(const char *agent, const char *app, const char *plugin, struct gbpf_prog_desc *prog,
		uint32_t flags, enum scenario sc, char *out, size_t out_size)
{
	char dir[] = "/tmp/gbpf-setup-XXXXXX", path[64], preload[1024], why[256];
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct gbpf_map_desc sent = maps[0];
	struct gbpf_agent_frame f;
	struct gbpf_agent_buf b = {0};
	struct gbpf_shm shm;
	uint32_t base = 0, slots = 1;
	int ls, fd = -1, st = -1, ok = -1;
	size_t used = 0;
	pid_t pid;

	out[0] = 0;
	if (!mkdtemp(dir))
		return -1;
	snprintf(path, sizeof(path), "%s/ctl.sock", dir);
	memcpy(sa.sun_path, path, strlen(path) + 1); /* 32 bytes: the template's length is fixed */
	snprintf(preload, sizeof(preload), "%s:%s", agent, plugin);
	ls = socket(AF_UNIX, SOCK_STREAM, 0);
	if (ls < 0 || bind(ls, (struct sockaddr *)&sa, sizeof(sa)) || listen(ls, 4)) {
		tap_diag("control socket %s: %s", path, strerror(errno));
		goto out_dir;
	}
	pid = fork();
	if (pid == 0) {
		FILE *devnull = freopen("/dev/null", "w", stdout);

		(void)devnull;
		setenv("LD_PRELOAD", preload, 1);
		setenv(GBPF_AGENT_ENV_SOCK, path, 1);
		execl(app, app, "6", "1", "9", "0", "plain", (char *)NULL);
		_exit(127);
	}
	fd = accept(ls, NULL, NULL);
	if (fd < 0 || read_full(fd, &f, sizeof(f)) || f.type != GBPF_AGENT_MSG_HELLO || f.len > 8192)
		goto out_wait;
	{
		char hello[8192];

		if (read_full(fd, hello, f.len))
			goto out_wait;
	}
	if (gbpf_shm_create(&shm, maps, &slots, 1, why, sizeof(why))) {
		tap_diag("map region: %s", why);
		goto out_wait;
	}
	if (sc == REGION_CHANGED) {
		uint32_t key = 0;
		char *v = gbpf_map_lookup(&shm.maps[0], &key, 0);

		if (v)
			v[5] ^= 0x20; /* "hello" -> "heLlo": the verified bytes differ from the region's */
	}
	if (sc == NO_BYTES) {
		sent.init_data = NULL;
		sent.init_size = 0;
	}
	prog->maps = &sent;
	if (gbpf_agent_encode_setup(&b, "hosttest", plugin, flags, &sent, 1, prog, &base, 1) ||
	    send_setup(fd, &b, shm.fd)) {
		tap_diag("sending the setup failed");
		gbpf_agent_buf_free(&b);
		gbpf_shm_destroy(&shm);
		goto out_wait;
	}
	gbpf_agent_buf_free(&b);
	gbpf_shm_destroy(&shm);
	while (read_full(fd, &f, sizeof(f)) == 0) {
		struct gbpf_agent_report r;
		char *payload;

		if (gbpf_agent_frame_check(&f, why, sizeof(why)))
			break;
		payload = malloc(f.len ? f.len : 1);
		if (!payload || read_full(fd, payload, f.len)) {
			free(payload);
			break;
		}
		if ((f.type == GBPF_AGENT_MSG_REPORT || f.type == GBPF_AGENT_MSG_PRINT) &&
		    !gbpf_agent_decode_report(f.type, payload, f.len, &r, why, sizeof(why)) &&
		    used + 1 < out_size) {
			snprintf(out + used, out_size - used, "%s: %s\n",
				 f.type == GBPF_AGENT_MSG_PRINT ? "P" : "R", r.msg);
			used += strlen(out + used);
		}
		free(payload);
	}
	ok = 0;
out_wait:
	if (fd >= 0)
		close(fd);
	waitpid(pid, &st, 0);
	close(ls);
	unlink(path);
out_dir:
	rmdir(dir);
	return ok ? -1 : st;
}

static size_t count_str(const char *hay, const char *needle)
{
	size_t n = 0;

	while ((hay = strstr(hay, needle))) {
		n++;
		hay += strlen(needle);
	}
	return n;
}

static int exited_9(int st)
{
	return st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 9;
}

static void test_agent(const char *agent, const char *app, const char *plugin)
{
	static char out[32768];
	struct gbpf_prog_desc p = prog_of(puts_insns, 5, GBPF_ATTACH_GPU_ENTRY, "say");
	struct gbpf_prog_desc w = prog_of(writer_insns, 5, GBPF_ATTACH_GPU_MEM, "zero");
	int st;

	st = play(agent, app, plugin, &p, 0, GOOD, out, sizeof(out));
	tap_ok(strstr(out, "R: attached 1 program(s), 1 map(s)") &&
		       count_str(out, "P: hello from rodata\n") == 3 && exited_9(st),
	       "agent: a puts probe verified with the .rodata bytes of the setup is attached; its "
	       "line comes back as a print for each of the 3 kern_a launches");
	if (tap_failed)
		tap_diag("messages:\n%s", out);

	st = play(agent, app, plugin, &p, 0, NO_BYTES, out, sizeof(out));
	tap_ok(strstr(out, "program 'say': verifier: instruction 2:") &&
		       strstr(out, "NUL-terminated string in a read-only map") &&
		       strstr(out, "runs uninstrumented") && !strstr(out, "P: ") && exited_9(st),
	       "agent: without the .rodata bytes the same probe is refused, naming the instruction");
	if (!strstr(out, "NUL-terminated"))
		tap_diag("messages:\n%s", out);

	st = play(agent, app, plugin, &p, 0, REGION_CHANGED, out, sizeof(out));
	tap_ok(strstr(out, "map #0 '.rodata': its memory differs at byte 5") &&
		       strstr(out, "runs uninstrumented") && !strstr(out, "P: ") && exited_9(st),
	       "agent: a region whose .rodata differs from the verified bytes is refused");
	if (!strstr(out, "differs"))
		tap_diag("messages:\n%s", out);

	st = play(agent, app, plugin, &w, 0, GOOD, out, sizeof(out));
	tap_ok(strstr(out, "cannot write into ctx") && strstr(out, "--allow-app-writes") &&
		       !strstr(out, "R: attached") && exited_9(st),
	       "agent: a gpu/mem writer without ALLOW_APP_WRITES is refused with the option named");
	st = play(agent, app, plugin, &w, GBPF_AGENT_F_ALLOW_APP_WRITES | GBPF_AGENT_F_ENGINE_PTX,
		  GOOD, out, sizeof(out));
	tap_ok(strstr(out, "R: attached 1 program(s)") && strstr(out, "(flags 0x5)") &&
		       !strstr(out, "verifier") && exited_9(st),
	       "agent: with ALLOW_APP_WRITES (and ENGINE_PTX) it is attached, the plugin sees both");
	if (tap_failed)
		tap_diag("messages:\n%s", out);
}

int main(int argc, char **argv)
{
	test_decoder();
	if (argc >= 4)
		test_agent(argv[1], argv[2], argv[3]);
	else
		tap_skip("usage: test_setup AGENT_LIB APP HOSTTEST_PLUGIN");
	return tap_done();
}
