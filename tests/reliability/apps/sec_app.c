/* SPDX-License-Identifier: MIT */
/*
 * tests/reliability/apps/sec_app.c - an application that probes, from
 * inside a `gbpf run`, what another local process could do to the
 * controller: it reports the permissions of the control socket and its
 * directory, sends malformed messages on fresh connections (each must be
 * closed by the controller), looks at how the map region is mapped, then
 * launches like the test app so that the real agent's results can be
 * checked. One "sec: ..." line per finding, then "done".
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "core/agent/proto.h"

unsigned long gbpf_test_launch(const char *kernel, unsigned grid, unsigned block);

/* Connect, send @p len bytes, say whether the peer closed within 3 s. */
static void probe(const char *path, const char *name, const void *msg, size_t len)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct pollfd pf;
	char c;
	int fd;

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		printf("sec: %s: connect failed: %s\n", name, strerror(errno));
		if (fd >= 0)
			close(fd);
		return;
	}
	if (send(fd, msg, len, MSG_NOSIGNAL) != (ssize_t)len) {
		printf("sec: %s: closed\n", name);
		close(fd);
		return;
	}
	pf = (struct pollfd){.fd = fd, .events = POLLIN};
	if (poll(&pf, 1, 3000) == 1 && recv(fd, &c, 1, 0) <= 0)
		printf("sec: %s: closed\n", name);
	else
		printf("sec: %s: still open\n", name);
	close(fd);
}

static void frame(struct gbpf_agent_frame *f, uint32_t magic, uint16_t version, uint16_t type,
		  uint32_t len)
{
	*f = (struct gbpf_agent_frame){.magic = magic, .version = version, .type = type, .len = len};
}

/* The map region as this process maps it: "memfd:..." lines of /proc/self/maps. */
static void map_region(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	int n = 0;

	while (f && fgets(line, sizeof(line), f)) {
		char perms[8] = "";

		if (!strstr(line, "memfd:gbpf-maps"))
			continue;
		sscanf(line, "%*s %7s", perms);
		printf("sec: map region mapped %s\n", perms);
		n++;
	}
	if (f)
		fclose(f);
	if (!n)
		printf("sec: map region not mapped\n");
}

int main(int argc, char **argv)
{
	const char *sock = getenv("GBPF_AGENT_SOCK");
	struct gbpf_agent_frame f;
	unsigned char buf[64];
	char dir[PATH_MAX], *slash;
	struct stat st;
	unsigned long sum = 0;
	long n = argc > 1 ? atol(argv[1]) : 10;

	if (!sock) {
		printf("sec: no socket\n");
		return 1;
	}
	snprintf(dir, sizeof(dir), "%s", sock);
	slash = strrchr(dir, '/');
	if (slash)
		*slash = 0;
	if (!stat(dir, &st))
		printf("sec: dir mode %03o uid %u\n", st.st_mode & 07777, st.st_uid);
	if (!stat(sock, &st))
		printf("sec: socket mode %03o uid %u\n", st.st_mode & 07777, st.st_uid);

	memset(buf, 'X', sizeof(buf));
	probe(sock, "garbage", buf, sizeof(buf));
	frame(&f, GBPF_AGENT_MAGIC, 99, GBPF_AGENT_MSG_HELLO, 0);
	probe(sock, "wrong version", &f, sizeof(f));
	frame(&f, GBPF_AGENT_MAGIC, GBPF_AGENT_PROTO_VERSION, 77, 0);
	probe(sock, "unknown type", &f, sizeof(f));
	frame(&f, GBPF_AGENT_MAGIC, GBPF_AGENT_PROTO_VERSION, GBPF_AGENT_MSG_HELLO,
	      GBPF_AGENT_MAX_PAYLOAD + 1);
	probe(sock, "oversized", &f, sizeof(f));
	frame(&f, GBPF_AGENT_MAGIC, GBPF_AGENT_PROTO_VERSION, GBPF_AGENT_MSG_REPORT, 8);
	memcpy(buf, &f, sizeof(f));
	memset(buf + sizeof(f), 0, 8);
	probe(sock, "report before hello", buf, sizeof(f) + 8);
	/* A HELLO whose fields run past its payload. */
	frame(&f, GBPF_AGENT_MAGIC, GBPF_AGENT_PROTO_VERSION, GBPF_AGENT_MSG_HELLO, 16);
	memcpy(buf, &f, sizeof(f));
	memset(buf + sizeof(f), 0xff, 16);
	probe(sock, "truncated hello", buf, sizeof(f) + 16);
	{ /* a well-formed HELLO that lies about its pid */
		struct gbpf_agent_buf b = {0};

		if (!gbpf_agent_encode_hello(&b, 1, (uint32_t)getppid(), "/forged") && !b.err) {
			unsigned char *m = malloc(sizeof(f) + b.len);

			gbpf_agent_frame_init(&f, GBPF_AGENT_MSG_HELLO, (uint32_t)b.len);
			if (m) {
				memcpy(m, &f, sizeof(f));
				memcpy(m + sizeof(f), b.data, b.len);
				probe(sock, "forged pid", m, sizeof(f) + b.len);
			}
			free(m);
		}
		gbpf_agent_buf_free(&b);
	}
	map_region();

	for (long i = 0; i < n; i++)
		sum += gbpf_test_launch(i % 2 ? "kern_b" : "kern_a", 1u << (i % 8), 128);
	printf("sum %lu\ndone\n", sum);
	return 0;
}
