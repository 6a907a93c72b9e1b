/* SPDX-License-Identifier: MIT */
/*
 * OTLP/HTTP with the JSON encoding (opentelemetry-proto's JSON mapping):
 * 64-bit integers are decimal strings, enums are numbers, cumulative
 * temporality (2) since the run started. Sent with a tiny HTTP/1.1 client
 * (plain http only: collectors sit on localhost:4318 or behind a sidecar).
 */
#include "core/export/metrics.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "core/export/export_util.h"
#include "core/export/timeline.h"

static void point_head(struct gbpf_sbuf *b, const struct gbpf_metric *m,
		       const struct gbpf_metric_sample *s, const struct gbpf_otlp_opts *o)
{
	int any = 0;

	gbpf_sbuf_printf(b, "{\"attributes\":[");
	if (s->key[0]) {
		gbpf_sbuf_printf(b, "{\"key\":");
		gbpf_sbuf_json_str(b, m->label);
		gbpf_sbuf_printf(b, ",\"value\":{\"stringValue\":");
		gbpf_sbuf_json_str(b, s->key);
		gbpf_sbuf_printf(b, "}}");
		any = 1;
	}
	if (s->word >= 0)
		gbpf_sbuf_printf(b, "%s{\"key\":\"word\",\"value\":{\"intValue\":\"%d\"}}",
				 any ? "," : "", s->word);
	gbpf_sbuf_printf(b, "],\"startTimeUnixNano\":\"%" PRIu64 "\",\"timeUnixNano\":\"%" PRIu64 "\"",
			 o->start_time_ns, o->time_ns);
}

static void hist_point(struct gbpf_sbuf *b, const struct gbpf_metric *m,
		       const struct gbpf_metric_sample *s, const struct gbpf_otlp_opts *o)
{
	size_t i, last = 0;

	for (i = 0; i < GBPF_METRIC_HIST_SLOTS; i++)
		if (s->slots[i])
			last = i;
	if (last > 62)
		last = 62; /* slot 63 ends at UINT64_MAX: it is the overflow bucket */
	point_head(b, m, s, o);
	gbpf_sbuf_printf(b, ",\"count\":\"%" PRIu64 "\",\"sum\":%.17g,\"bucketCounts\":[", s->count,
			 s->sum);
	/* bucket i holds values <= explicitBounds[i]; the last one everything above */
	for (i = 0; i <= last; i++)
		gbpf_sbuf_printf(b, "%s\"%" PRIu64 "\"", i ? "," : "", s->slots[i]);
	/* The overflow bucket: values above the last bound (only slot 63 can be there). */
	gbpf_sbuf_printf(b, ",\"%" PRIu64 "\"],\"explicitBounds\":[", last == 62 ? s->slots[63] : 0);
	for (i = 0; i <= last; i++)
		gbpf_sbuf_printf(b, "%s%" PRIu64, i ? "," : "", gbpf_metric_slot_le(i));
	gbpf_sbuf_printf(b, "]}");
}

int gbpf_otlp_render_metrics(const struct gbpf_metric_set *set, const struct gbpf_otlp_opts *o,
			     char **out, size_t *len)
{
	struct gbpf_sbuf b = {.max = 256u << 20};
	size_t i, j;

	gbpf_sbuf_printf(&b, "{\"resourceMetrics\":[{\"resource\":{\"attributes\":["
			     "{\"key\":\"service.name\",\"value\":{\"stringValue\":");
	gbpf_sbuf_json_str(&b, o->service_name ? o->service_name : "gbpf");
	gbpf_sbuf_printf(&b, "}}]},\"scopeMetrics\":[{\"scope\":{\"name\":\"gbpf\"},\"metrics\":[");
	for (i = 0; i < set->cnt; i++) {
		const struct gbpf_metric *m = &set->metrics[i];
		char name[160];
		size_t nl;

		/* OTLP sums carry no _total: exporters to Prometheus add it back. */
		snprintf(name, sizeof(name), "%s", m->name);
		nl = strlen(name);
		if (m->type == GBPF_METRIC_COUNTER && nl > 6 && !strcmp(name + nl - 6, "_total"))
			name[nl - 6] = 0;
		gbpf_sbuf_printf(&b, "%s{\"name\":", i ? "," : "");
		gbpf_sbuf_json_str(&b, name);
		gbpf_sbuf_printf(&b, ",\"description\":");
		gbpf_sbuf_json_str(&b, m->help);
		gbpf_sbuf_printf(&b, ",\"unit\":\"1\",");
		if (m->type == GBPF_METRIC_HISTOGRAM)
			gbpf_sbuf_printf(&b, "\"histogram\":{\"aggregationTemporality\":2,");
		else if (m->type == GBPF_METRIC_COUNTER)
			gbpf_sbuf_printf(&b, "\"sum\":{\"aggregationTemporality\":2,\"isMonotonic\":true,");
		else
			gbpf_sbuf_printf(&b, "\"gauge\":{");
		gbpf_sbuf_printf(&b, "\"dataPoints\":[");
		for (j = 0; j < m->sample_cnt; j++) {
			const struct gbpf_metric_sample *s = &m->samples[j];

			if (j)
				gbpf_sbuf_printf(&b, ",");
			if (m->type == GBPF_METRIC_HISTOGRAM) {
				hist_point(&b, m, s, o);
				continue;
			}
			point_head(&b, m, s, o);
			gbpf_sbuf_printf(&b, ",\"asInt\":\"%" PRIu64 "\"}", (uint64_t)s->value);
		}
		gbpf_sbuf_printf(&b, "]}}");
	}
	gbpf_sbuf_printf(&b, "]}]}]}");
	if (b.err) {
		int err = b.err;

		gbpf_sbuf_free(&b);
		return err;
	}
	*out = b.p;
	*len = b.len;
	return 0;
}

/* ---- HTTP POST --------------------------------------------------------------------- */

static int parse_url(const char *url, char *host, size_t hcap, char *port, size_t pcap,
		     const char **path)
{
	const char *h, *end, *colon;

	if (strncmp(url, "http://", 7))
		return -EINVAL;
	h = url + 7;
	end = strchr(h, '/');
	*path = end ? end : "/";
	if (!end)
		end = h + strlen(h);
	colon = memchr(h, ':', (size_t)(end - h));
	if (h[0] == '[') {
		const char *rb = memchr(h, ']', (size_t)(end - h));

		if (!rb)
			return -EINVAL;
		colon = rb[1] == ':' ? rb + 1 : NULL;
		if ((size_t)(rb - h - 1) >= hcap)
			return -EINVAL;
		snprintf(host, hcap, "%.*s", (int)(rb - h - 1), h + 1);
	} else {
		const char *he = colon ? colon : end;

		if (he == h || (size_t)(he - h) >= hcap)
			return -EINVAL;
		snprintf(host, hcap, "%.*s", (int)(he - h), h);
	}
	if (colon) {
		if ((size_t)(end - colon - 1) >= pcap || end == colon + 1)
			return -EINVAL;
		snprintf(port, pcap, "%.*s", (int)(end - colon - 1), colon + 1);
	} else {
		snprintf(port, pcap, "80");
	}
	return 0;
}

static long ms_left(const struct timespec *deadline)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (deadline->tv_sec - now.tv_sec) * 1000 + (deadline->tv_nsec - now.tv_nsec) / 1000000;
}

/* Wait for @p ev on @p fd until the deadline; 0 or -ETIMEDOUT / -errno. */
static int wait_fd(int fd, short ev, const struct timespec *deadline)
{
	for (;;) {
		struct pollfd pf = {.fd = fd, .events = ev};
		long left = ms_left(deadline);
		int r;

		if (left <= 0)
			return -ETIMEDOUT;
		r = poll(&pf, 1, (int)left);
		if (r > 0)
			return 0;
		if (r == 0)
			return -ETIMEDOUT;
		if (errno != EINTR)
			return -errno;
	}
}

static int connect_to(const char *host, const char *port, const struct timespec *deadline,
		      char *why, size_t why_size)
{
	struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
				 .ai_flags = AI_NUMERICSERV};
	struct addrinfo *res = NULL, *ai;
	int fd = -1, err = -ECONNREFUSED, rc;

	rc = getaddrinfo(host, port, &hints, &res);
	if (rc) {
		snprintf(why, why_size, "%s:%s: %s", host, port, gai_strerror(rc));
		return -EHOSTUNREACH;
	}
	for (ai = res; ai; ai = ai->ai_next) {
		int soerr = 0;
		socklen_t sl = sizeof(soerr);

		fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
		if (fd < 0)
			continue;
		if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
			break;
		if (errno == EINPROGRESS && !(err = wait_fd(fd, POLLOUT, deadline)) &&
		    !getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) && !soerr)
			break;
		err = soerr ? -soerr : err ? err : -errno;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd < 0)
		snprintf(why, why_size, "connect to %s:%s: %s", host, port, strerror(-err));
	return fd < 0 ? err : fd;
}

static int send_all_until(int fd, const char *p, size_t n, const struct timespec *deadline)
{
	while (n) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
		int err;

		if (w > 0) {
			p += w;
			n -= (size_t)w;
			continue;
		}
		if (w < 0 && errno != EAGAIN && errno != EINTR)
			return -errno;
		err = wait_fd(fd, POLLOUT, deadline);
		if (err)
			return err;
	}
	return 0;
}

int gbpf_otlp_post(const char *url, const char *body, size_t len, int timeout_ms, char *why,
		   size_t why_size)
{
	char host[256], port[16], head[1024], resp[512];
	struct timespec deadline;
	const char *path;
	size_t have = 0;
	int fd, err, n, status = 0;

	if (parse_url(url, host, sizeof(host), port, sizeof(port), &path)) {
		snprintf(why, why_size, "--otlp %s: expected http://HOST[:PORT]/PATH (https is not "
			 "supported)", url);
		return -EINVAL;
	}
	clock_gettime(CLOCK_MONOTONIC, &deadline);
	deadline.tv_sec += timeout_ms / 1000;
	deadline.tv_nsec += (long)(timeout_ms % 1000) * 1000000;
	if (deadline.tv_nsec >= 1000000000) {
		deadline.tv_sec++;
		deadline.tv_nsec -= 1000000000;
	}
	fd = connect_to(host, port, &deadline, why, why_size);
	if (fd < 0)
		return fd;
	n = snprintf(head, sizeof(head),
		     "POST %s HTTP/1.1\r\nHost: %s:%s\r\nContent-Type: application/json\r\n"
		     "Content-Length: %zu\r\nConnection: close\r\nUser-Agent: gbpf\r\n\r\n",
		     path, host, port, len);
	if (n >= (int)sizeof(head)) {
		close(fd);
		snprintf(why, why_size, "--otlp %s: URL too long", url);
		return -EINVAL;
	}
	err = send_all_until(fd, head, (size_t)n, &deadline);
	if (!err)
		err = send_all_until(fd, body, len, &deadline);
	/* The status line is all we need: "HTTP/1.1 200 OK". */
	while (!err && have < sizeof(resp) - 1 && !memchr(resp, '\n', have)) {
		ssize_t r = recv(fd, resp + have, sizeof(resp) - 1 - have, 0);

		if (r > 0) {
			have += (size_t)r;
			continue;
		}
		if (r == 0)
			break;
		if (errno != EAGAIN && errno != EINTR)
			err = -errno;
		else
			err = wait_fd(fd, POLLIN, &deadline);
	}
	close(fd);
	resp[have] = 0;
	if (err) {
		snprintf(why, why_size, "--otlp %s: %s", url, strerror(-err));
		return err;
	}
	if (sscanf(resp, "HTTP/%*d.%*d %d", &status) != 1) {
		snprintf(why, why_size, "--otlp %s: no HTTP status in the answer", url);
		return -EPROTO;
	}
	if (status < 200 || status > 299) {
		resp[strcspn(resp, "\r\n")] = 0;
		snprintf(why, why_size, "--otlp %s: collector answered '%s'", url, resp);
		return -EPROTO;
	}
	return 0;
}

/* ---- the timeline as spans ---------------------------------------------------------- */

static int by_pid_corr_rec(const void *a, const void *b)
{
	const struct gbpf_tl_rec *x = *(const struct gbpf_tl_rec *const *)a;
	const struct gbpf_tl_rec *y = *(const struct gbpf_tl_rec *const *)b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->corr < y->corr ? -1 : x->corr > y->corr;
}

static void span_attr_str(struct gbpf_sbuf *b, const char *key, const char *v, int *first)
{
	gbpf_sbuf_printf(b, "%s{\"key\":\"%s\",\"value\":{\"stringValue\":", *first ? "" : ",", key);
	gbpf_sbuf_json_str(b, v);
	gbpf_sbuf_printf(b, "}}");
	*first = 0;
}

static void span_attr_int(struct gbpf_sbuf *b, const char *key, int64_t v, int *first)
{
	gbpf_sbuf_printf(b, "%s{\"key\":\"%s\",\"value\":{\"intValue\":\"%" PRId64 "\"}}",
			 *first ? "" : ",", key, v);
	*first = 0;
}

/* One span: host part and GPU part of a record are separate spans (ids 2i+1, 2i+2). */
static void one_span(struct gbpf_sbuf *b, const struct gbpf_tl *tl, const struct gbpf_tl_rec *r,
		     int gpu, uint64_t parent, int64_t to_unix, uint64_t run_id, int *first_span)
{
	uint64_t id = 2 * (uint64_t)(r - tl->recs) + 1 + (uint64_t)gpu;
	uint64_t s = gpu ? r->gb : r->hb, e = gpu ? r->ge : r->he;
	int first = 1;

	gbpf_sbuf_printf(b, "%s{\"traceId\":\"%016" PRIx64 "%016" PRIx64 "\",\"spanId\":\"%016" PRIx64
			    "\",", *first_span ? "" : ",", run_id, (uint64_t)r->pid, id);
	*first_span = 0;
	if (parent)
		gbpf_sbuf_printf(b, "\"parentSpanId\":\"%016" PRIx64 "\",", parent);
	gbpf_sbuf_printf(b, "\"name\":");
	gbpf_sbuf_json_str(b, gbpf_tl_name(tl, r));
	/* API calls are the app calling the runtime (CLIENT); GPU work is internal to it. */
	gbpf_sbuf_printf(b, ",\"kind\":%d,\"startTimeUnixNano\":\"%" PRIu64 "\",\"endTimeUnixNano\":\"%"
			    PRIu64 "\",\"attributes\":[", gpu ? 1 : 3, (uint64_t)((int64_t)s + to_unix),
			 (uint64_t)((int64_t)e + to_unix));
	span_attr_str(b, "gbpf.kind", gbpf_tl_kind_label(r->kind), &first);
	span_attr_int(b, "gbpf.on_gpu", gpu, &first);
	span_attr_int(b, "process.pid", r->pid, &first);
	span_attr_int(b, "thread.id", (int64_t)r->tid, &first);
	span_attr_int(b, "gbpf.device", r->device, &first);
	span_attr_int(b, "gbpf.stream", (int64_t)r->stream, &first);
	span_attr_int(b, "gbpf.correlation_id", (int64_t)r->corr, &first);
	if (r->bytes)
		span_attr_int(b, "gbpf.bytes", (int64_t)r->bytes, &first);
	gbpf_sbuf_printf(b, "]}");
}

int gbpf_otlp_render_spans(const struct gbpf_tl *tl, size_t from, size_t count,
			   const struct gbpf_otlp_opts *o, int64_t mono_to_unix_ns, char **out,
			   size_t *len)
{
	struct gbpf_sbuf b = {.max = 256u << 20};
	const struct gbpf_tl_rec **calls = malloc((tl->n ? tl->n : 1) * sizeof(*calls));
	size_t i, nc = 0, end = from < tl->n && count < tl->n - from ? from + count : tl->n;
	int first = 1;

	if (!calls)
		return -ENOMEM;
	for (i = 0; i < tl->n; i++)
		if ((tl->recs[i].flags & GBPF_TL_F_HOST) && tl->recs[i].corr)
			calls[nc++] = &tl->recs[i];
	qsort(calls, nc, sizeof(*calls), by_pid_corr_rec);
	gbpf_sbuf_printf(&b, "{\"resourceSpans\":[{\"resource\":{\"attributes\":["
			     "{\"key\":\"service.name\",\"value\":{\"stringValue\":");
	gbpf_sbuf_json_str(&b, o->service_name ? o->service_name : "gbpf");
	gbpf_sbuf_printf(&b, "}}]},\"scopeSpans\":[{\"scope\":{\"name\":\"gbpf\"},\"spans\":[");
	for (i = from; i < end; i++) {
		const struct gbpf_tl_rec *r = &tl->recs[i];
		uint64_t host_span = 0;

		if (r->flags & GBPF_TL_F_HOST) {
			one_span(&b, tl, r, 0, 0, mono_to_unix_ns, o->start_time_ns, &first);
			host_span = 2 * (uint64_t)i + 1;
		}
		if (!(r->flags & GBPF_TL_F_GPU))
			continue;
		/* The GPU work is a child of the API call that caused it. */
		if (!host_span && r->corr) {
			const struct gbpf_tl_rec *const *h =
				bsearch(&r, calls, nc, sizeof(*calls), by_pid_corr_rec);

			if (h)
				host_span = 2 * (uint64_t)(*h - tl->recs) + 1;
		}
		one_span(&b, tl, r, 1, host_span, mono_to_unix_ns, o->start_time_ns, &first);
	}
	gbpf_sbuf_printf(&b, "]}]}]}");
	free(calls);
	if (b.err) {
		int err = b.err;

		gbpf_sbuf_free(&b);
		return err;
	}
	*out = b.p;
	*len = b.len;
	return 0;
}
