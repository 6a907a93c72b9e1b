/* SPDX-License-Identifier: MIT */
/*
 * A fake agent for the controller's frame checks (#11): started by
 * `gbpf run`, it opens one connection per malformed frame to the
 * controller's socket (GBPF_AGENT_SOCK) and sends it, then prints
 * "fake done". Frames: bad magic, bad version, unknown type, a type only
 * the controller sends, a payload past the agent limit, a non-zero
 * reserved field, and a valid hello followed by a setup frame (the bad
 * frame then starts past the hello: its byte offset is checked).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "core/agent/proto.h"

struct frame {
	uint32_t magic;
	uint16_t version, type;
	uint32_t len, reserved;
};

static void send_case(const char *path, const void *bytes, size_t n)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		perror("bad_frames: connect");
		exit(1);
	}
	if (write(fd, bytes, n) != (ssize_t)n)
		perror("bad_frames: write");
	usleep(150000); /* the controller reads and reports before we close */
	close(fd);
}

int main(void)
{
	const char *path = getenv("GBPF_AGENT_SOCK");
	const struct frame good = {GBPF_AGENT_MAGIC, GBPF_AGENT_PROTO_VERSION, GBPF_AGENT_MSG_HELLO, 0, 0};
	struct frame cases[6];
	unsigned char hello[64];
	uint32_t w[4];
	size_t i, n;

	if (!path) {
		fprintf(stderr, "bad_frames: run me under gbpf run\n");
		return 2;
	}
	for (i = 0; i < 6; i++)
		cases[i] = good;
	cases[0].magic = 0x58585858u;
	cases[1].version = 9;
	cases[2].type = 99;
	cases[3].type = 2; /* setup: the controller's */
	cases[4].len = 1u << 20;
	cases[5].reserved = 7;
	for (i = 0; i < 6; i++)
		send_case(path, &cases[i], sizeof(cases[i]));
	/* A valid hello (16 + 17 bytes), then a setup frame at byte 33. */
	w[0] = GBPF_AGENT_PROTO_VERSION;
	w[1] = (uint32_t)getpid();
	w[2] = (uint32_t)getppid();
	w[3] = 5;
	memcpy(hello, &good, sizeof(good));
	memcpy(hello + 16, w, sizeof(w));
	memcpy(hello + 32, "/fake", 5);
	n = 37;
	((struct frame *)hello)->len = (uint32_t)(n - 16);
	memcpy(hello + n, &cases[3], sizeof(cases[3]));
	send_case(path, hello, n + sizeof(cases[3]));
	printf("fake done\n");
	return 0;
}
