/* SPDX-License-Identifier: MIT */
/*
 * The controller <-> agent protocol: round trips, every truncation and a
 * set of lies rejected by the decoder; then a fake controller that sends a
 * real agent a malformed setup and checks that the agent says why and the
 * application runs on. argv: AGENT_LIB APP
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gbpf/plugin.h>

#include "core/agent/proto.h"
#include "tap.h"

static struct gbpf_insn prog_insns[] = {
	{.code = GBPF_OP_LDDW, .dst = 1, .src = GBPF_PSEUDO_MAP_IDX, .imm = 0},
	{.code = 0},
	{.code = GBPF_ALU64 | GBPF_MOV | GBPF_K, .dst = 0, .imm = 0},
	{.code = GBPF_OP_EXIT},
};

static struct gbpf_map_desc maps[] = {
	{.sz = sizeof(struct gbpf_map_desc), .name = "counts", .type = GBPF_MAP_TYPE_HASH,
	 .key_size = 8, .value_size = 8, .max_entries = 16},
};

static void encode(struct gbpf_agent_buf *b, struct gbpf_insn *insns, size_t insn_cnt,
		   uint32_t base)
{
	struct gbpf_prog_desc p = {
		.sz = sizeof(p), .name = "probe", .section = "host/launch", .insns = insns,
		.insn_cnt = insn_cnt, .maps = maps, .map_cnt = 1,
		.attach = {.kind = GBPF_ATTACH_HOST_LAUNCH, .target = "kern_*"},
		.license = "GPL", .source_file = "x.bpf.o",
	};

	memset(b, 0, sizeof(*b));
	gbpf_agent_encode_setup(b, "hosttest", "/x/libgbpf-hosttest.so", 0, maps, 1, &p, &base, 1);
}

static void test_decoder(void)
{
	struct gbpf_agent_buf b;
	struct gbpf_agent_setup s;
	char why[256];
	size_t cut, bad = 0;
	int err;

	encode(&b, prog_insns, 4, 0);
	err = gbpf_agent_decode_setup(b.data, b.len, &s, why, sizeof(why));
	tap_ok(err == 0 && s.prog_cnt == 1 && s.map_cnt == 1 && s.progs[0].insn_cnt == 4 &&
		       strcmp(s.progs[0].attach.target, "kern_*") == 0 &&
		       s.progs[0].maps == &s.maps[0] && strcmp(s.maps[0].name, "counts") == 0 &&
		       strcmp(s.backend, "hosttest") == 0,
	       "setup round trip (%s)", err ? why : "ok");
	gbpf_agent_setup_free(&s);
	for (cut = 0; cut < b.len; cut++)
		if (gbpf_agent_decode_setup(b.data, cut, &s, why, sizeof(why)) != -EINVAL)
			bad++;
	tap_ok(bad == 0, "every one of %zu truncations rejected", b.len);
	gbpf_agent_decode_setup(b.data, b.len - 3, &s, why, sizeof(why));
	tap_ok(strstr(why, "payload offset") != NULL, "truncation names the field and offset: %s",
	       why);

	/* Lies: a map count the payload cannot hold. */
	memcpy(b.data + 4 + strlen("hosttest") + 4 + strlen("/x/libgbpf-hosttest.so") + 4,
	       "\xff\xff\x00\x00", 4);
	tap_ok(gbpf_agent_decode_setup(b.data, b.len, &s, why, sizeof(why)) == -EINVAL &&
		       strstr(why, "map count"),
	       "map count beyond the payload rejected before allocating: %s", why);
	gbpf_agent_buf_free(&b);

	/* A map index outside the program's maps. */
	prog_insns[0].imm = 1;
	encode(&b, prog_insns, 4, 0);
	tap_ok(gbpf_agent_decode_setup(b.data, b.len, &s, why, sizeof(why)) == -EINVAL &&
		       strstr(why, "instruction 0") && strstr(why, "map index 1"),
	       "map index out of range rejected with the instruction index: %s", why);
	gbpf_agent_buf_free(&b);
	prog_insns[0].imm = 0;

	/* A wide load cut in half at the end. */
	encode(&b, prog_insns, 1, 0);
	tap_ok(gbpf_agent_decode_setup(b.data, b.len, &s, why, sizeof(why)) == -EINVAL &&
		       strstr(why, "cut off"),
	       "wide load cut off rejected: %s", why);
	gbpf_agent_buf_free(&b);

	/* A map range outside the map table. */
	encode(&b, prog_insns, 4, 1);
	tap_ok(gbpf_agent_decode_setup(b.data, b.len, &s, why, sizeof(why)) == -EINVAL &&
		       strstr(why, "outside the 1 maps"),
	       "map range outside the table rejected: %s", why);
	gbpf_agent_buf_free(&b);

	/* Frames. */
	struct gbpf_agent_frame f;

	gbpf_agent_frame_init(&f, GBPF_AGENT_MSG_SETUP, GBPF_AGENT_MAX_PAYLOAD + 1);
	tap_ok(gbpf_agent_frame_check(&f, why, sizeof(why)) == -EMSGSIZE, "oversized frame: %s", why);
	gbpf_agent_frame_init(&f, 99, 0);
	tap_ok(gbpf_agent_frame_check(&f, why, sizeof(why)) == -EINVAL, "unknown type: %s", why);
	f.type = GBPF_AGENT_MSG_HELLO;
	f.magic = 1;
	tap_ok(gbpf_agent_frame_check(&f, why, sizeof(why)) == -EINVAL, "bad magic: %s", why);

	/* Hello and report. */
	struct gbpf_agent_hello h;
	struct gbpf_agent_report r;

	memset(&b, 0, sizeof(b));
	gbpf_agent_encode_hello(&b, 42, 1, "/bin/app");
	tap_ok(gbpf_agent_decode_hello(b.data, b.len, &h, why, sizeof(why)) == 0 && h.pid == 42 &&
		       strcmp(h.exe, "/bin/app") == 0,
	       "hello round trip");
	b.data[12] = 0xff; /* string length beyond the payload */
	tap_ok(gbpf_agent_decode_hello(b.data, b.len, &h, why, sizeof(why)) == -EINVAL,
	       "hello with a lying string length rejected: %s", why);
	gbpf_agent_buf_free(&b);
	gbpf_agent_encode_report(&b, 7, 0, "k", "m");
	tap_ok(gbpf_agent_decode_report(GBPF_AGENT_MSG_REPORT, b.data, b.len, &r, why,
					sizeof(why)) == -EINVAL,
	       "report with an unknown event kind rejected: %s", why);
	gbpf_agent_buf_free(&b);
}

/* Fake controller: accept the agent, read its hello, send garbage as setup. */
static void test_agent_rejects(const char *agent, const char *app)
{
	char dir[] = "/tmp/gbpf-test-XXXXXX", path[128], payload[64], buf[8192];
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct gbpf_agent_frame f;
	size_t got = 0;
	int ls, fd, memfd, st = -1;
	pid_t pid;

	if (!mkdtemp(dir)) {
		tap_skip("mkdtemp failed");
		return;
	}
	snprintf(path, sizeof(path), "%s/ctl.sock", dir);
	strcpy(sa.sun_path, path);
	ls = socket(AF_UNIX, SOCK_STREAM, 0);
	bind(ls, (struct sockaddr *)&sa, sizeof(sa));
	listen(ls, 4);
	pid = fork();
	if (pid == 0) {
		int devnull = open("/dev/null", 1);

		dup2(devnull, 1);
		setenv("LD_PRELOAD", agent, 1);
		setenv(GBPF_AGENT_ENV_SOCK, path, 1);
		execl(app, app, "5", "1", "9", "0", "plain", (char *)NULL);
		_exit(127);
	}
	fd = accept(ls, NULL, NULL);
	/* The hello. */
	while (fd >= 0 && got < sizeof(f)) {
		ssize_t n = read(fd, buf + got, sizeof(buf) - got);

		if (n <= 0)
			break;
		got += (size_t)n;
	}
	memcpy(&f, buf, sizeof(f));
	tap_ok(fd >= 0 && got >= sizeof(f) && f.type == GBPF_AGENT_MSG_HELLO,
	       "agent connects and says hello");
	/* A setup whose payload claims 1000 maps in 64 bytes, with a memfd attached. */
	memset(payload, 0, sizeof(payload));
	memcpy(payload + 8 + 4, "\xe8\x03\x00\x00", 4);
	gbpf_agent_frame_init(&f, GBPF_AGENT_MSG_SETUP, sizeof(payload));
	memfd = memfd_create("junk", 0);
	{
		union {
			char c[CMSG_SPACE(sizeof(int))];
			struct cmsghdr a;
		} u;
		struct iovec iov = {.iov_base = &f, .iov_len = sizeof(f)};
		struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.c,
				    .msg_controllen = sizeof(u.c)};
		struct cmsghdr *c = CMSG_FIRSTHDR(&mh);

		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &memfd, sizeof(int));
		sendmsg(fd, &mh, 0);
		if (write(fd, payload, sizeof(payload)) < 0)
			tap_diag("write: %s", strerror(errno));
	}
	/* Its report, then EOF when the app exits. */
	got = 0;
	for (;;) {
		ssize_t n = read(fd, buf + got, sizeof(buf) - 1 - got);

		if (n <= 0)
			break;
		got += (size_t)n;
	}
	buf[got] = 0;
	waitpid(pid, &st, 0);
	{
		size_t i;
		int seen = 0;

		for (i = 0; i + 20 < got; i++)
			if (memcmp(buf + i, "setup: map count 1000", 21) == 0)
				seen = 1;
		tap_ok(seen, "agent reports the malformed setup with its reason");
	}
	tap_ok(WIFEXITED(st) && WEXITSTATUS(st) == 9, "app runs to its own exit status (9) after a malformed setup");
	close(fd);
	close(ls);
	close(memfd);
	unlink(path);
	rmdir(dir);
}

/* Write little-endian u32 @p v at byte @p off of an encoded payload. */
static void poke_u32(unsigned char *p, size_t off, uint32_t v)
{
	p[off] = (unsigned char)v;
	p[off + 1] = (unsigned char)(v >> 8);
	p[off + 2] = (unsigned char)(v >> 16);
	p[off + 3] = (unsigned char)(v >> 24);
}

/* TIMELINE: round trip, truncations, and every field the decoder must refuse. */
static void test_timeline_decoder(void)
{
	static struct gbpf_timeline_event in[3], out[GBPF_AGENT_MAX_TL_BATCH];
	struct gbpf_agent_buf b = {0};
	struct gbpf_agent_frame f;
	uint64_t dropped = 0;
	size_t n = 0, cut, bad = 0, i;
	char why[256] = "";
	int err;

	for (i = 0; i < 3; i++) {
		memset(&in[i], 0, sizeof(in[i]));
		in[i].sz = sizeof(in[i]);
		in[i].kind = i == 2 ? GBPF_TL_SYNC : GBPF_TL_MEMCPY_H2D;
		in[i].flags = i == 1 ? GBPF_TL_F_GPU : GBPF_TL_F_HOST | GBPF_TL_F_ASYNC;
		in[i].device = i == 2 ? -1 : 1;
		in[i].stream = 0x7f0000001234ull + i;
		in[i].correlation_id = 42;
		in[i].host_tid = 777;
		in[i].host_begin_ns = 1000 + i;
		in[i].host_end_ns = 2000 + i;
		in[i].gpu_begin_ns = 1500;
		in[i].gpu_end_ns = 1u << 31;
		in[i].bytes = 1ull << 40;
		snprintf(in[i].name, sizeof(in[i].name), "%s", i == 1 ? "Memcpy \"HtoD\"\n" : "cudaMemcpyAsync");
	}
	err = gbpf_agent_encode_timeline(&b, 5, in, 3);
	err = err ? err : gbpf_agent_decode_timeline(b.data, b.len, &dropped, out, &n, why, sizeof(why));
	tap_ok(err == 0 && n == 3 && dropped == 5 && memcmp(&in[0], &out[0], sizeof(in[0])) == 0 &&
		       memcmp(&in[1], &out[1], sizeof(in[1])) == 0 && out[2].device == -1 &&
		       out[1].gpu_end_ns == 1u << 31 && out[0].bytes == 1ull << 40,
	       "timeline: 3 events round trip exactly (%s)", why);
	for (cut = 0; cut < b.len; cut++)
		if (gbpf_agent_decode_timeline(b.data, cut, &dropped, out, &n, why, sizeof(why)) != -EINVAL)
			bad++;
	tap_ok(bad == 0, "timeline: every truncation (%zu) is rejected", b.len);
	/* Event 0 begins after the 12-byte header: kind at +0, flags at +4. */
	poke_u32(b.data, 12, 99);
	err = gbpf_agent_decode_timeline(b.data, b.len, &dropped, out, &n, why, sizeof(why));
	tap_ok(err == -EINVAL && strstr(why, "event #0: unknown kind 99"), "timeline: unknown kind refused: %s", why);
	poke_u32(b.data, 12, GBPF_TL_MEMCPY_H2D);
	poke_u32(b.data, 16, 1u << 9);
	err = gbpf_agent_decode_timeline(b.data, b.len, &dropped, out, &n, why, sizeof(why));
	tap_ok(err == -EINVAL && strstr(why, "unknown flags"), "timeline: unknown flags refused: %s", why);
	poke_u32(b.data, 16, 0);
	err = gbpf_agent_decode_timeline(b.data, b.len, &dropped, out, &n, why, sizeof(why));
	tap_ok(err == -EINVAL && strstr(why, "neither a host nor a GPU interval"),
	       "timeline: event without an interval refused: %s", why);
	poke_u32(b.data, 16, GBPF_TL_F_HOST);
	/* host_end_ns (u64 at +44) below host_begin_ns */
	poke_u32(b.data, 12 + 44, 3);
	err = gbpf_agent_decode_timeline(b.data, b.len, &dropped, out, &n, why, sizeof(why));
	tap_ok(err == -EINVAL && strstr(why, "host interval ends before it begins"),
	       "timeline: reversed host interval refused: %s", why);
	poke_u32(b.data, 12 + 44, 2000);
	poke_u32(b.data, 8, 1000000);
	err = gbpf_agent_decode_timeline(b.data, b.len, &dropped, out, &n, why, sizeof(why));
	tap_ok(err == -EINVAL && strstr(why, "event count 1000000 does not fit"),
	       "timeline: a count the payload cannot hold is refused before allocating: %s", why);
	gbpf_agent_buf_free(&b);
	memset(&b, 0, sizeof(b));
	tap_ok(gbpf_agent_encode_timeline(&b, 0, out, GBPF_AGENT_MAX_TL_BATCH + 1) == -E2BIG,
	       "timeline: encoder refuses a batch beyond %u events", GBPF_AGENT_MAX_TL_BATCH);
	gbpf_agent_buf_free(&b);
	gbpf_agent_frame_init(&f, GBPF_AGENT_MSG_TIMELINE, 12);
	tap_ok(gbpf_agent_frame_check(&f, why, sizeof(why)) == 0, "timeline: frame type %u accepted",
	       GBPF_AGENT_MSG_TIMELINE);
	f.type = GBPF_AGENT_MSG_MAX + 1;
	tap_ok(gbpf_agent_frame_check(&f, why, sizeof(why)) == -EINVAL,
	       "frame type beyond the last message refused");
}

/* JOB (gbpf attach): the controller's socket path, bounded, no NUL; names and directions. */
static void test_job_and_names(void)
{
	struct gbpf_agent_buf b = {0};
	char path[64], why[256], dir[160];
	unsigned char nul[9] = {5, 0, 0, 0, 'a', 0, 'b', 'c', 'd'};
	int err;

	gbpf_agent_buf_put_str(&b, "/tmp/gbpf-run-x/ctl.sock");
	err = gbpf_agent_decode_job(b.data, b.len, path, sizeof(path), why, sizeof(why));
	tap_ok(err == 0 && !strcmp(path, "/tmp/gbpf-run-x/ctl.sock"), "job round trip (%s)",
	       err ? why : "ok");
	err = gbpf_agent_decode_job(b.data, b.len, path, 8, why, sizeof(why));
	tap_ok(err == -EINVAL && strstr(why, "job.path"), "job: a path longer than the room: %s", why);
	err = gbpf_agent_decode_job(b.data, b.len - 1, path, sizeof(path), why, sizeof(why));
	tap_ok(err == -EINVAL, "job: cut short rejected: %s", why);
	err = gbpf_agent_decode_job(nul, sizeof(nul), path, sizeof(path), why, sizeof(why));
	tap_ok(err == -EINVAL && strstr(why, "NUL"), "job: NUL byte rejected: %s", why);
	gbpf_agent_buf_put_u32(&b, 1);
	err = gbpf_agent_decode_job(b.data, b.len, path, sizeof(path), why, sizeof(why));
	tap_ok(err == -EINVAL && strstr(why, "trailing"), "job: trailing bytes rejected: %s", why);
	gbpf_agent_buf_free(&b);
	tap_ok(!strcmp(gbpf_agent_msg_name(GBPF_AGENT_MSG_DETACH), "detach") &&
		       !strcmp(gbpf_agent_msg_name(GBPF_AGENT_MSG_WAKE), "wake") &&
		       !strcmp(gbpf_agent_msg_name(0), "unknown") &&
		       !strcmp(gbpf_agent_msg_name(GBPF_AGENT_MSG_MAX + 1), "unknown"),
	       "message names, unknown past the table");
	tap_ok(gbpf_agent_msg_from_agent(GBPF_AGENT_MSG_HELLO) &&
		       gbpf_agent_msg_from_agent(GBPF_AGENT_MSG_TIMELINE) &&
		       gbpf_agent_msg_from_agent(GBPF_AGENT_MSG_WAKE) &&
		       !gbpf_agent_msg_from_agent(GBPF_AGENT_MSG_SETUP) &&
		       !gbpf_agent_msg_from_agent(GBPF_AGENT_MSG_JOB) &&
		       !gbpf_agent_msg_from_agent(GBPF_AGENT_MSG_DETACH),
	       "which side sends which message");
	{
		char xdg[] = "/tmp/gbpf-proto-test-XXXXXX", want[160];
		struct stat st;

		if (!mkdtemp(xdg)) {
			tap_skip("mkdtemp failed");
			return;
		}
		setenv("XDG_RUNTIME_DIR", xdg, 1);
		snprintf(want, sizeof(want), "%s/gbpf", xdg);
		err = gbpf_agent_sock_dir(dir, sizeof(dir), 0, why, sizeof(why));
		tap_ok(err == -ENOENT, "socket directory missing and not created: %s", why);
		err = gbpf_agent_sock_dir(dir, sizeof(dir), 1, why, sizeof(why));
		tap_ok(err == 0 && !strcmp(dir, want) && !stat(dir, &st) && (st.st_mode & 0777) == 0700,
		       "socket directory created under XDG_RUNTIME_DIR, mode 0700 (%s)",
		       err ? why : dir);
		err = gbpf_agent_listen_path(1234, path, sizeof(path), why, sizeof(why));
		snprintf(want + strlen(want), sizeof(want) - strlen(want), "/1234.sock");
		tap_ok(err == 0 && !strcmp(path, want), "socket path DIR/PID.sock (%s)", err ? why : path);
		err = gbpf_agent_listen_path(1234, path, 8, why, sizeof(why));
		tap_ok(err == -ENAMETOOLONG, "socket path that does not fit is refused: %s", why);
		chmod(dir, 0755);
		err = gbpf_agent_sock_dir(dir, sizeof(dir), 1, why, sizeof(why));
		tap_ok(err == -EPERM && strstr(why, "mode 0700") && strstr(why, "0755"),
		       "a directory others can read is refused: %s", why);
		rmdir(dir);
		rmdir(xdg);
		unsetenv("XDG_RUNTIME_DIR");
	}
}

int main(int argc, char **argv)
{
	test_job_and_names();
	test_decoder();
	test_timeline_decoder();
	if (argc >= 3)
		test_agent_rejects(argv[1], argv[2]);
	else
		tap_skip("agent library and app not given");
	return tap_done();
}
