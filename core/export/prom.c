/* SPDX-License-Identifier: MIT */
/*
 * Prometheus text exposition format 0.0.4: rendering, the node_exporter
 * textfile (atomic rename) and a minimal HTTP endpoint (GET /metrics only).
 * The server is one thread doing one request at a time with short socket
 * timeouts: a slow or hostile client can delay a scrape, never the
 * controller, which only shares the render callback with it.
 */
#include "core/export/metrics.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "core/export/export_util.h"

/* Label values escape backslash, double quote and newline (the format's only escapes). */
static void label_value(struct gbpf_sbuf *b, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\')
			gbpf_sbuf_printf(b, "\\\\");
		else if (*s == '"')
			gbpf_sbuf_printf(b, "\\\"");
		else if (*s == '\n')
			gbpf_sbuf_printf(b, "\\n");
		else
			gbpf_sbuf_printf(b, "%c", *s);
	}
}

/* {key="...",word="N"[,le="..."]} or nothing at all. */
static void labels(struct gbpf_sbuf *b, const struct gbpf_metric *m,
		   const struct gbpf_metric_sample *s, const char *le)
{
	int any = 0;

	if (!s->key[0] && s->word < 0 && !le)
		return;
	gbpf_sbuf_printf(b, "{");
	if (s->key[0]) {
		gbpf_sbuf_printf(b, "%s=\"", m->label);
		label_value(b, s->key);
		gbpf_sbuf_printf(b, "\"");
		any = 1;
	}
	if (s->word >= 0) {
		gbpf_sbuf_printf(b, "%sword=\"%d\"", any ? "," : "", s->word);
		any = 1;
	}
	if (le)
		gbpf_sbuf_printf(b, "%sle=\"%s\"", any ? "," : "", le);
	gbpf_sbuf_printf(b, "}");
}

static void help_text(struct gbpf_sbuf *b, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\')
			gbpf_sbuf_printf(b, "\\\\");
		else if (*s == '\n')
			gbpf_sbuf_printf(b, "\\n");
		else
			gbpf_sbuf_printf(b, "%c", *s);
	}
}

static void histogram(struct gbpf_sbuf *b, const struct gbpf_metric *m,
		      const struct gbpf_metric_sample *s)
{
	size_t i, last = 0;
	uint64_t cum = 0;
	char le[32];

	for (i = 0; i < GBPF_METRIC_HIST_SLOTS; i++)
		if (s->slots[i])
			last = i;
	/* Every bound up to the last used slot: the same series at every scrape once seen. */
	for (i = 0; i <= last && i < 63; i++) {
		cum += s->slots[i];
		snprintf(le, sizeof(le), "%" PRIu64, gbpf_metric_slot_le(i));
		gbpf_sbuf_printf(b, "%s_bucket", m->name);
		labels(b, m, s, le);
		gbpf_sbuf_printf(b, " %" PRIu64 "\n", cum);
	}
	gbpf_sbuf_printf(b, "%s_bucket", m->name);
	labels(b, m, s, "+Inf");
	gbpf_sbuf_printf(b, " %" PRIu64 "\n", s->count);
	gbpf_sbuf_printf(b, "%s_sum", m->name);
	labels(b, m, s, NULL);
	gbpf_sbuf_printf(b, " %.17g\n", s->sum);
	gbpf_sbuf_printf(b, "%s_count", m->name);
	labels(b, m, s, NULL);
	gbpf_sbuf_printf(b, " %" PRIu64 "\n", s->count);
}

int gbpf_prom_render(const struct gbpf_metric_set *set, char **out, size_t *len)
{
	static const char *const types[] = {"gauge", "counter", "histogram"};
	struct gbpf_sbuf b = {.max = 256u << 20};
	size_t i, j;

	for (i = 0; i < set->cnt; i++) {
		const struct gbpf_metric *m = &set->metrics[i];

		gbpf_sbuf_printf(&b, "# HELP %s ", m->name);
		help_text(&b, m->help);
		gbpf_sbuf_printf(&b, "\n# TYPE %s %s\n", m->name, types[m->type]);
		for (j = 0; j < m->sample_cnt; j++) {
			const struct gbpf_metric_sample *s = &m->samples[j];

			if (m->type == GBPF_METRIC_HISTOGRAM) {
				histogram(&b, m, s);
				continue;
			}
			gbpf_sbuf_printf(&b, "%s", m->name);
			labels(&b, m, s, NULL);
			gbpf_sbuf_printf(&b, " %.17g\n", s->value);
		}
	}
	gbpf_sbuf_printf(&b, "%s", ""); /* an empty set still yields a string */
	if (b.err) {
		int err = b.err;

		gbpf_sbuf_free(&b);
		return err;
	}
	*out = b.p;
	*len = b.len;
	return 0;
}

int gbpf_prom_write_file(const struct gbpf_metric_set *set, const char *path, char *why,
			 size_t why_size)
{
	char tmp[4096], *text = NULL;
	size_t len = 0;
	FILE *f;
	int err;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid()) >= (int)sizeof(tmp)) {
		snprintf(why, why_size, "prom file %s: path too long", path);
		return -ENAMETOOLONG;
	}
	err = gbpf_prom_render(set, &text, &len);
	if (err) {
		snprintf(why, why_size, "prom file %s: %s", path, strerror(-err));
		return err;
	}
	f = fopen(tmp, "w");
	if (!f) {
		err = -errno;
		snprintf(why, why_size, "prom file %s: %s", tmp, strerror(errno));
		free(text);
		return err;
	}
	if (fwrite(text, 1, len, f) != len)
		err = -EIO;
	if (fclose(f) && !err)
		err = -errno;
	free(text);
	if (!err && rename(tmp, path))
		err = -errno;
	if (err) {
		snprintf(why, why_size, "prom file %s: %s", path, strerror(-err));
		unlink(tmp);
	}
	return err;
}

/* ---- HTTP endpoint --------------------------------------------------------------- */

struct gbpf_prom_server {
	int fd;
	int stop_pipe[2];
	int port;
	pthread_t thread;
	gbpf_prom_render_fn render;
	void *ctx;
};

/* Most bytes of a request we read: a GET line and headers, never a body. */
#define PROM_MAX_REQUEST 8192
/* A client gets this long to send its request and read the answer. */
#define PROM_IO_TIMEOUT_S 5

static void send_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		p += w;
		n -= (size_t)w;
	}
}

static void reply(int fd, const char *status, const char *type, const char *body, size_t len)
{
	char head[256];
	int n = snprintf(head, sizeof(head),
			 "HTTP/1.1 %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
			 "Connection: close\r\n\r\n",
			 status, type, len);

	send_all(fd, head, (size_t)n);
	send_all(fd, body, len);
}

static void serve_one(struct gbpf_prom_server *s, int fd)
{
	struct timeval tv = {.tv_sec = PROM_IO_TIMEOUT_S};
	char req[PROM_MAX_REQUEST + 1];
	size_t have = 0;
	char *text = NULL, *sp;
	size_t len = 0;

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	/* Read up to the end of the headers (or the limit). */
	while (have < PROM_MAX_REQUEST) {
		ssize_t r = recv(fd, req + have, PROM_MAX_REQUEST - have, 0);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		have += (size_t)r;
		req[have] = 0;
		if (strstr(req, "\r\n\r\n") || strstr(req, "\n\n"))
			break;
	}
	req[have] = 0;
	if (!strchr(req, '\n')) {
		reply(fd, "400 Bad Request", "text/plain", "bad request\n", 12);
		return;
	}
	if (strncmp(req, "GET ", 4) && strncmp(req, "HEAD ", 5)) {
		reply(fd, "405 Method Not Allowed", "text/plain", "only GET /metrics\n", 18);
		return;
	}
	sp = strchr(req, ' ') + 1;
	if (strncmp(sp, "/metrics", 8) || (sp[8] != ' ' && sp[8] != '?')) {
		reply(fd, "404 Not Found", "text/plain", "only GET /metrics\n", 18);
		return;
	}
	if (s->render(s->ctx, &text, &len)) {
		reply(fd, "500 Internal Server Error", "text/plain", "render failed\n", 14);
		return;
	}
	reply(fd, "200 OK", "text/plain; version=0.0.4; charset=utf-8", text,
	      strncmp(req, "HEAD ", 5) ? len : 0);
	free(text);
}

static void *server_main(void *arg)
{
	struct gbpf_prom_server *s = arg;

	for (;;) {
		struct pollfd pf[2] = {{.fd = s->fd, .events = POLLIN},
				       {.fd = s->stop_pipe[0], .events = POLLIN}};
		int c;

		if (poll(pf, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (pf[1].revents)
			break;
		c = accept4(s->fd, NULL, NULL, SOCK_CLOEXEC);
		if (c < 0)
			continue;
		serve_one(s, c);
		close(c);
	}
	return NULL;
}

/* Split "HOST:PORT", "[V6]:PORT" or "PORT" (host 127.0.0.1). */
static int split_addr(const char *addr, char *host, size_t hcap, char *port, size_t pcap)
{
	const char *colon;

	if (addr[0] == '[') {
		const char *end = strchr(addr, ']');

		if (!end || end[1] != ':' || (size_t)(end - addr - 1) >= hcap)
			return -EINVAL;
		snprintf(host, hcap, "%.*s", (int)(end - addr - 1), addr + 1);
		colon = end + 1;
	} else {
		colon = strrchr(addr, ':');
		if (!colon) {
			snprintf(host, hcap, "127.0.0.1");
			colon = addr - 1;
		} else if ((size_t)(colon - addr) >= hcap) {
			return -EINVAL;
		} else {
			snprintf(host, hcap, "%.*s", (int)(colon - addr), addr);
			if (!host[0])
				snprintf(host, hcap, "127.0.0.1");
		}
	}
	if (!colon[1] || strlen(colon + 1) >= pcap || strspn(colon + 1, "0123456789") != strlen(colon + 1))
		return -EINVAL;
	snprintf(port, pcap, "%s", colon + 1);
	return 0;
}

int gbpf_prom_server_start(const char *addr, gbpf_prom_render_fn render, void *ctx,
			   struct gbpf_prom_server **out, char *why, size_t why_size)
{
	struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
				 .ai_flags = AI_PASSIVE | AI_NUMERICSERV};
	struct addrinfo *res = NULL;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	struct gbpf_prom_server *s;
	char host[256], port[16];
	int one = 1, err, rc;

	if (split_addr(addr, host, sizeof(host), port, sizeof(port))) {
		snprintf(why, why_size, "--prom %s: expected PORT, HOST:PORT or [IPV6]:PORT", addr);
		return -EINVAL;
	}
	rc = getaddrinfo(host, port, &hints, &res);
	if (rc) {
		snprintf(why, why_size, "--prom %s: %s", addr, gai_strerror(rc));
		return -EINVAL;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		freeaddrinfo(res);
		snprintf(why, why_size, "--prom %s: out of memory", addr);
		return -ENOMEM;
	}
	s->render = render;
	s->ctx = ctx;
	s->stop_pipe[0] = s->stop_pipe[1] = -1;
	s->fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s->fd < 0)
		goto fail_errno;
	setsockopt(s->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(s->fd, res->ai_addr, res->ai_addrlen) || listen(s->fd, 16) ||
	    getsockname(s->fd, (struct sockaddr *)&ss, &sl) || pipe2(s->stop_pipe, O_CLOEXEC))
		goto fail_errno;
	s->port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
						 : ((struct sockaddr_in *)&ss)->sin_port);
	err = pthread_create(&s->thread, NULL, server_main, s);
	if (err) {
		errno = err;
		goto fail_errno;
	}
	freeaddrinfo(res);
	*out = s;
	return 0;
fail_errno:
	err = -errno;
	snprintf(why, why_size, "--prom %s: %s", addr, strerror(errno));
	freeaddrinfo(res);
	if (s->fd >= 0)
		close(s->fd);
	if (s->stop_pipe[0] >= 0) {
		close(s->stop_pipe[0]);
		close(s->stop_pipe[1]);
	}
	free(s);
	return err;
}

int gbpf_prom_server_port(const struct gbpf_prom_server *s)
{
	return s->port;
}

void gbpf_prom_server_stop(struct gbpf_prom_server *s)
{
	char c = 1;

	if (!s)
		return;
	if (write(s->stop_pipe[1], &c, 1) == 1)
		pthread_join(s->thread, NULL);
	close(s->stop_pipe[0]);
	close(s->stop_pipe[1]);
	close(s->fd);
	free(s);
}
