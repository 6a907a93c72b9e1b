/* SPDX-License-Identifier: MIT */
/*
 * tests/reliability/test_app_writes.c - the agent side of "probes cannot
 * write application memory unless the user explicitly allows it", and of
 * "a malformed control-socket message is rejected".
 *
 * The agent does not trust its controller: it verifies every program again
 * before running any (core/agent/agent.c). A fake controller here sends a
 * real agent (preloaded into the test application, hosttest backend):
 *   - a gpu/mem program that stores to ctx->mem_value, without
 *     GBPF_AGENT_F_ALLOW_APP_WRITES: refused with the verifier's reason,
 *     the application runs on with its own exit status;
 *   - the same program with the flag: the flag alone is not a verdict (the
 *     agent either refuses it for the same reason or attaches it, which is
 *     what the flag asks for); never anything else;
 *   - a gpu/mem program that only reads mem_value: attached (so the refusal
 *     above is about the write).
 * Then the decoder (core/agent/proto.c, public functions only) against
 * malformed SETUP messages: every single-byte change of a valid message is
 * either rejected with a reason or decodes to a setup that keeps every
 * invariant the agent relies on (counts within limits, map ranges inside
 * the table, wide loads whole and inside their maps, known flags), and
 * frames with a wrong version, reserved bits or an oversized length are
 * refused.
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

#include <gbpf/plugin.h>
#include <gbpf/probe_ctx.h>

#include "core/agent/proto.h"
#include "tap.h"

#define MEM_KIND_OFF ((int16_t)offsetof(struct gbpf_gpu_ctx, mem_kind))
#define MEM_VALUE_OFF ((int16_t)offsetof(struct gbpf_gpu_ctx, mem_value))

/* if (ctx->mem_kind == STORE) ctx->mem_value = 0; return 0; */
static struct gbpf_insn writer_insns[] = {
	{.code = GBPF_LDX | GBPF_MEM | GBPF_W, .dst = 2, .src = 1, .off = MEM_KIND_OFF},
	{.code = GBPF_JMP | GBPF_JNE | GBPF_K, .dst = 2, .off = 1, .imm = GBPF_MEM_STORE},
	{.code = GBPF_ST | GBPF_MEM | GBPF_DW, .dst = 1, .off = MEM_VALUE_OFF, .imm = 0},
	{.code = GBPF_ALU64 | GBPF_MOV | GBPF_K, .dst = 0, .imm = 0},
	{.code = GBPF_OP_EXIT},
};

/* return ctx->mem_value & 1; */
static struct gbpf_insn reader_insns[] = {
	{.code = GBPF_LDX | GBPF_MEM | GBPF_DW, .dst = 0, .src = 1, .off = MEM_VALUE_OFF},
	{.code = GBPF_ALU64 | GBPF_AND | GBPF_K, .dst = 0, .imm = 1},
	{.code = GBPF_OP_EXIT},
};

/* A host/launch program that looks a map up: the setup carries a real map. */
static struct gbpf_insn host_insns[] = {
	{.code = GBPF_ST | GBPF_MEM | GBPF_W, .dst = 10, .off = -4, .imm = 0},
	{.code = GBPF_OP_LDDW, .dst = 1, .src = GBPF_PSEUDO_MAP_IDX, .imm = 0},
	{.code = 0},
	{.code = GBPF_ALU64 | GBPF_MOV | GBPF_X, .dst = 2, .src = 10},
	{.code = GBPF_ALU64 | GBPF_ADD | GBPF_K, .dst = 2, .imm = -4},
	{.code = GBPF_OP_CALL, .imm = 1},
	{.code = GBPF_ALU64 | GBPF_MOV | GBPF_K, .dst = 0, .imm = 0},
	{.code = GBPF_OP_EXIT},
};

static struct gbpf_map_desc maps[] = {
	{.sz = sizeof(struct gbpf_map_desc), .name = "counts", .type = GBPF_MAP_TYPE_ARRAY,
	 .key_size = 4, .value_size = 8, .max_entries = 4},
};

static void make_progs(struct gbpf_prog_desc progs[2], struct gbpf_insn *mem_insns, size_t n)
{
	memset(progs, 0, 2 * sizeof(*progs));
	progs[0] = (struct gbpf_prog_desc){
		.sz = sizeof(progs[0]), .name = "mem_probe", .section = "gpu/mem/*",
		.insns = mem_insns, .insn_cnt = n, .attach = {.kind = GBPF_ATTACH_GPU_MEM, .target = "*"},
		.license = "GPL", .source_file = "app_writes.bpf.o"};
	progs[1] = (struct gbpf_prog_desc){
		.sz = sizeof(progs[1]), .name = "host_probe", .section = "host/launch",
		.insns = host_insns, .insn_cnt = sizeof(host_insns) / sizeof(host_insns[0]),
		.maps = maps, .map_cnt = 1, .attach = {.kind = GBPF_ATTACH_HOST_LAUNCH},
		.license = "GPL", .source_file = "app_writes.bpf.o"};
}

/* Read exactly n bytes (0) or fail (-1: EOF or error). */
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

/* Send one frame with its payload, the map memfd attached. */
static int send_setup(int fd, const struct gbpf_agent_buf *b, int memfd)
{
	struct gbpf_agent_frame f;
	union {
		char c[CMSG_SPACE(sizeof(int))];
		struct cmsghdr a;
	} u;
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

/*
 * Run the app under the agent, play controller: HELLO in, SETUP (flags,
 * programs) out, then collect every REPORT message ('\n'-separated into
 * @p reports) until the app exits. Returns the app's wait status, -1 when
 * the exchange itself failed.
 */
static int play_controller(const char *agent, const char *app, const char *plugin,
			   uint32_t flags, struct gbpf_insn *mem_insns, size_t mem_n,
			   char *reports, size_t reports_size)
{
	char dir[] = "/tmp/gbpf-appw-XXXXXX", path[128], why[256];
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct gbpf_prog_desc progs[2];
	struct gbpf_agent_frame f;
	struct gbpf_agent_buf b;
	struct gbpf_shm shm;
	uint32_t base[2] = {0, 0}, slots[1] = {1};
	int ls, fd = -1, st = -1, ok = -1;
	size_t used = 0;
	pid_t pid;

	reports[0] = 0;
	if (!mkdtemp(dir))
		return -1;
	snprintf(path, sizeof(path), "%s/ctl.sock", dir);
	strcpy(sa.sun_path, path);
	ls = socket(AF_UNIX, SOCK_STREAM, 0);
	if (ls < 0 || bind(ls, (struct sockaddr *)&sa, sizeof(sa)) || listen(ls, 4)) {
		tap_diag("control socket %s: %s", path, strerror(errno));
		goto out_dir;
	}
	pid = fork();
	if (pid == 0) {
		FILE *devnull = freopen("/dev/null", "w", stdout);

		(void)devnull;
		setenv("LD_PRELOAD", agent, 1);
		setenv(GBPF_AGENT_ENV_SOCK, path, 1);
		execl(app, app, "5", "1", "9", "0", "plain", (char *)NULL);
		_exit(127);
	}
	fd = accept(ls, NULL, NULL);
	if (fd < 0 || read_full(fd, &f, sizeof(f)) || f.type != GBPF_AGENT_MSG_HELLO) {
		tap_diag("no HELLO from the agent");
		goto out_wait;
	}
	{
		char *hello = malloc(f.len ? f.len : 1);

		if (!hello || read_full(fd, hello, f.len)) {
			free(hello);
			goto out_wait;
		}
		free(hello);
	}
	if (gbpf_shm_create(&shm, maps, slots, 1, why, sizeof(why))) {
		tap_diag("map region: %s", why);
		goto out_wait;
	}
	make_progs(progs, mem_insns, mem_n);
	memset(&b, 0, sizeof(b));
	if (gbpf_agent_encode_setup(&b, "hosttest", plugin, flags, maps, 1, progs, base, 2) ||
	    b.err || send_setup(fd, &b, shm.fd)) {
		tap_diag("sending the setup failed");
		gbpf_agent_buf_free(&b);
		gbpf_shm_destroy(&shm);
		goto out_wait;
	}
	gbpf_agent_buf_free(&b);
	gbpf_shm_destroy(&shm);
	/* Reports until EOF (the app exits and the agent's socket closes). */
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
		if (f.type == GBPF_AGENT_MSG_REPORT && used + 1 < reports_size &&
		    !gbpf_agent_decode_report(f.type, payload, f.len, &r, why, sizeof(why))) {
			snprintf(reports + used, reports_size - used, "%s\n", r.msg);
			used += strlen(reports + used);
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

static int exited_with(int st, int code)
{
	return st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == code;
}

static void test_agent_side(const char *agent, const char *app, const char *plugin)
{
	static char rep[16384];
	size_t nw = sizeof(writer_insns) / sizeof(writer_insns[0]);
	int st;

	st = play_controller(agent, app, plugin, 0, writer_insns, nw, rep, sizeof(rep));
	tap_ok(strstr(rep, "program 'mem_probe'") && strstr(rep, "cannot write into ctx") &&
		       strstr(rep, "runs uninstrumented") && !strstr(rep, "attached"),
	       "agent: a probe writing mem_value, sent without ALLOW_APP_WRITES, is refused "
	       "with the verifier's reason");
	tap_ok(exited_with(st, 9), "agent: the app runs to its own exit status (9) after it");
	if (tap_failed)
		tap_diag("reports:\n%s", rep);

	st = play_controller(agent, app, plugin, GBPF_AGENT_F_ALLOW_APP_WRITES, writer_insns, nw,
			     rep, sizeof(rep));
	{
		int refused = strstr(rep, "cannot write into ctx") != NULL;
		int attached = strstr(rep, "attached 2 program(s)") != NULL;

		tap_ok(refused != attached && exited_with(st, 9),
		       "agent: with ALLOW_APP_WRITES the writer is %s, nothing else happens",
		       refused ? "still refused (the agent verifies without the write flag)"
			       : "attached (the flag asks for it)");
		if (!(refused != attached))
			tap_diag("reports:\n%s", rep);
	}

	st = play_controller(agent, app, plugin, 0, reader_insns,
			     sizeof(reader_insns) / sizeof(reader_insns[0]), rep, sizeof(rep));
	tap_ok(strstr(rep, "attached 2 program(s)") && !strstr(rep, "verifier") &&
		       exited_with(st, 9),
	       "agent: the same probe reading mem_value is attached (the refusal is the write's)");
	if (!strstr(rep, "attached 2 program(s)"))
		tap_diag("reports:\n%s", rep);
}

/* Invariants the agent relies on once a SETUP decoded (the verifier checks the rest). */
static const char *setup_broken(const struct gbpf_agent_setup *s)
{
	if (s->flags & ~(GBPF_AGENT_F_ALLOW_APP_WRITES | GBPF_AGENT_F_GPU_TIMELINE))
		return "unknown flags";
	if (s->map_cnt > GBPF_AGENT_MAX_MAPS || s->prog_cnt > GBPF_AGENT_MAX_PROGS)
		return "counts over the limits";
	for (size_t i = 0; i < s->prog_cnt; i++) {
		const struct gbpf_prog_desc *p = &s->progs[i];

		if (!p->name || !p->insns || !p->insn_cnt || p->insn_cnt > GBPF_AGENT_MAX_INSNS)
			return "program without name or instructions";
		if (p->map_cnt && (p->maps < s->maps || p->maps + p->map_cnt > s->maps + s->map_cnt))
			return "program maps outside the table";
		for (size_t k = 0; k < p->insn_cnt; k++) {
			const struct gbpf_insn *in = &p->insns[k];

			if (!gbpf_insn_is_wide(in))
				continue;
			if (k + 1 >= p->insn_cnt)
				return "wide load cut off";
			if ((in->src == GBPF_PSEUDO_MAP_IDX || in->src == GBPF_PSEUDO_MAP_IDX_VALUE) &&
			    (in->imm < 0 || (size_t)in->imm >= p->map_cnt))
				return "map index outside the program's maps";
			k++;
		}
	}
	for (size_t i = 0; i < s->map_cnt; i++)
		if (!s->maps[i].name || !s->maps[i].name[0])
			return "map without a name";
	return NULL;
}

static void test_decoder(void)
{
	static const unsigned char vals[] = {0x00, 0xff, 0x01, 0x80, 0x7f};
	struct gbpf_prog_desc progs[2];
	struct gbpf_agent_setup s;
	struct gbpf_agent_buf b;
	uint32_t base[2] = {0, 0};
	size_t rejected = 0, accepted = 0, no_reason = 0, broken = 0, tried = 0;
	char why[512];
	unsigned char *m;

	make_progs(progs, writer_insns, sizeof(writer_insns) / sizeof(writer_insns[0]));
	memset(&b, 0, sizeof(b));
	gbpf_agent_encode_setup(&b, "hosttest", "/x/libgbpf-hosttest.so",
				GBPF_AGENT_F_GPU_TIMELINE, maps, 1, progs, base, 2);
	if (!tap_ok(b.err == 0 && gbpf_agent_decode_setup(b.data, b.len, &s, why, sizeof(why)) == 0,
		    "decoder: the valid setup (%zu bytes) decodes", b.len)) {
		gbpf_agent_buf_free(&b);
		return;
	}
	tap_ok(setup_broken(&s) == NULL && s.prog_cnt == 2 && s.map_cnt == 1 &&
		       s.progs[1].maps == &s.maps[0],
	       "decoder: and keeps every invariant");
	gbpf_agent_setup_free(&s);
	m = malloc(b.len + 1);
	for (size_t i = 0; m && i < b.len; i++) {
		for (size_t v = 0; v < sizeof(vals); v++) {
			const char *bad;

			if (b.data[i] == vals[v])
				continue;
			memcpy(m, b.data, b.len);
			m[i] = vals[v];
			why[0] = 0;
			tried++;
			if (gbpf_agent_decode_setup(m, b.len, &s, why, sizeof(why))) {
				rejected++;
				no_reason += why[0] == 0;
				continue;
			}
			accepted++;
			bad = setup_broken(&s);
			if (bad && broken++ < 5)
				tap_diag("byte %zu = 0x%02x decodes with: %s", i, vals[v], bad);
			gbpf_agent_setup_free(&s);
		}
	}
	tap_ok(tried > 0 && broken == 0 && no_reason == 0,
	       "decoder: %zu single-byte changes: %zu rejected with a reason, %zu decode with every "
	       "invariant kept (%zu broken, %zu without a reason)",
	       tried, rejected, accepted, broken, no_reason);
	if (m) {
		memcpy(m, b.data, b.len);
		m[b.len] = 0;
		tap_ok(gbpf_agent_decode_setup(m, b.len + 1, &s, why, sizeof(why)) == -EINVAL,
		       "decoder: a trailing byte is refused: %s", why);
	}
	free(m);
	/* Flag bits no GBPF_AGENT_F_* defines (plugin.h defines bits 0-3). */
	{
		size_t off = 4 + strlen("hosttest") + 4 + strlen("/x/libgbpf-hosttest.so");
		int bit, refused = 0;
		uint32_t fl;

		for (bit = 4; bit < 32; bit++) {
			memcpy(&fl, b.data + off, 4);
			fl ^= 1u << bit;
			memcpy(b.data + off, &fl, 4);
			if (gbpf_agent_decode_setup(b.data, b.len, &s, why, sizeof(why)) == -EINVAL &&
			    strstr(why, "unknown flags"))
				refused++;
			else if (!why[0])
				gbpf_agent_setup_free(&s);
			fl ^= 1u << bit;
			memcpy(b.data + off, &fl, 4);
		}
		tap_ok(refused == 28, "decoder: each of the 28 undefined flag bits refused (%d)",
		       refused);
	}
	gbpf_agent_buf_free(&b);

	/* Frame headers: wrong version, reserved bits, oversized, unknown type. */
	{
		struct gbpf_agent_frame f;

		gbpf_agent_frame_init(&f, GBPF_AGENT_MSG_SETUP, 100);
		tap_ok(gbpf_agent_frame_check(&f, why, sizeof(why)) == 0, "frame: a valid header passes");
		f.version = GBPF_AGENT_PROTO_VERSION + 1;
		tap_ok(gbpf_agent_frame_check(&f, why, sizeof(why)) != 0, "frame: another version refused: %s",
		       why);
		gbpf_agent_frame_init(&f, GBPF_AGENT_MSG_SETUP, 100);
		f.reserved = 1;
		tap_ok(gbpf_agent_frame_check(&f, why, sizeof(why)) != 0,
		       "frame: reserved bits refused: %s", why);
		gbpf_agent_frame_init(&f, GBPF_AGENT_MSG_SETUP, GBPF_AGENT_MAX_PAYLOAD + 1);
		tap_ok(gbpf_agent_frame_check(&f, why, sizeof(why)) != 0,
		       "frame: a payload over %u bytes refused before reading it: %s",
		       GBPF_AGENT_MAX_PAYLOAD, why);
		gbpf_agent_frame_init(&f, 0, 0);
		tap_ok(gbpf_agent_frame_check(&f, why, sizeof(why)) != 0, "frame: type 0 refused: %s", why);
	}
}

int main(int argc, char **argv)
{
	test_decoder();
	if (argc < 4)
		tap_skip("agent side: usage: test_app_writes AGENT_LIB APP HOSTTEST_PLUGIN");
	else
		test_agent_side(argv[1], argv[2], argv[3]);
	return tap_done();
}
