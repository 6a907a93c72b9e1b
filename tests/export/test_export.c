/* SPDX-License-Identifier: MIT */
/*
 * core/export on synthetic inputs: the timeline store and summary (exact
 * numbers), the trace writer, maps -> metrics -> Prometheus text (exact
 * text) and OTLP JSON, the HTTP endpoint and the OTLP client against
 * sockets of this test. No GPU, no agent.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <unistd.h>

#include <gbpf/maps.h>

#include "core/export/metrics.h"
#include "core/export/timeline.h"
#include "tap.h"

static struct gbpf_timeline_event ev(uint32_t kind, uint32_t flags, uint64_t stream, uint64_t corr,
				     uint64_t b, uint64_t e, const char *name)
{
	struct gbpf_timeline_event x;

	memset(&x, 0, sizeof(x));
	x.sz = sizeof(x);
	x.kind = kind;
	x.flags = flags;
	x.stream = stream;
	x.correlation_id = corr;
	x.host_tid = 7;
	if (flags & GBPF_TL_F_HOST) {
		x.host_begin_ns = b;
		x.host_end_ns = e;
	} else {
		x.gpu_begin_ns = b;
		x.gpu_end_ns = e;
	}
	x.bytes = kind == GBPF_TL_MEMCPY_H2D ? 4096 : 0;
	snprintf(x.name, sizeof(x.name), "%s", name);
	return x;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = calloc(1, (size_t)n + 1);
	if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

static void test_timeline(void)
{
	struct gbpf_tl tl;
	struct gbpf_tl_summary s;
	struct gbpf_timeline_event e;
	char why[256] = "", path[] = "/tmp/gbpf-test-trace-XXXXXX";
	char *text;
	int fd, i, ok_all = 1;

	gbpf_tl_init(&tl, 8);
	/* Host: copy call 0-10, launch 10-20, sync 20-1000 on stream 5. GPU: copy 10-110, kernel 110-610. */
	e = ev(GBPF_TL_MEMCPY_H2D, GBPF_TL_F_HOST | GBPF_TL_F_ASYNC, 5, 1, 0, 10, "cudaMemcpyAsync");
	ok_all &= gbpf_tl_add(&tl, 100, &e) == 0;
	e = ev(GBPF_TL_MEMCPY_H2D, GBPF_TL_F_GPU, 5, 1, 10, 110, "");
	ok_all &= gbpf_tl_add(&tl, 100, &e) == 0;
	e = ev(GBPF_TL_LAUNCH, GBPF_TL_F_HOST | GBPF_TL_F_ASYNC, 5, 2, 10, 20, "cudaLaunchKernel");
	ok_all &= gbpf_tl_add(&tl, 100, &e) == 0;
	e = ev(GBPF_TL_KERNEL, GBPF_TL_F_GPU, 5, 2, 110, 610, "k(int)");
	ok_all &= gbpf_tl_add(&tl, 100, &e) == 0;
	e = ev(GBPF_TL_SYNC, GBPF_TL_F_HOST, 5, 0, 20, 1000, "cudaStreamSynchronize");
	ok_all &= gbpf_tl_add(&tl, 100, &e) == 0;
	tap_ok(ok_all && tl.n == 5 && tl.name_cnt == 5, "timeline: 5 events stored, 5 names (an empty name takes its kind)");
	tap_ok(strcmp(gbpf_tl_name(&tl, &tl.recs[1]), "H2D") == 0, "timeline: unnamed copy is called 'H2D'");
	for (i = 0; i < 5; i++) {
		e = ev(GBPF_TL_KERNEL, GBPF_TL_F_GPU, 6, 0, 2000, 2001, "k(int)");
		gbpf_tl_add(&tl, 100, &e);
	}
	tap_ok(tl.n == 8 && tl.dropped_store == 2, "timeline: bounded at 8 events, 2 counted as dropped");
	tap_ok(gbpf_tl_summarize(&tl, &s) == 0 && s.stream_cnt == 2 && s.sync_cnt == 1,
	       "summary: 2 streams, 1 sync site");
	tap_ok(s.streams[0].stream == 5 && s.streams[0].kernel_ns == 500 && s.streams[0].copy_ns[0] == 100 &&
		       s.streams[0].copy_bytes[0] == 4096 && s.streams[0].busy_ns == 600 &&
		       s.streams[0].window_ns == 2001 && s.streams[0].idle_ns == 1401,
	       "summary: stream 5 kernel 500 ns, H2D 100 ns (4096 B), busy 600, idle 1401 of 2001");
	tap_ok(s.syncs[0].calls == 1 && s.syncs[0].waited_ns == 980 && s.syncs[0].gpu_kernel_ns == 500 &&
		       s.syncs[0].gpu_copy_ns == 90,
	       "summary: the sync absorbed 980 ns while kernel 500 ns and copy 90 ns ran");
	gbpf_tl_summary_free(&s);
	fd = mkstemp(path);
	if (fd >= 0)
		close(fd);
	tap_ok(gbpf_tl_write_trace(&tl, path, NULL, NULL, why, sizeof(why)) == 0, "trace written (%s)", why);
	text = slurp(path);
	tap_ok(text && strstr(text, "\"name\":\"k(int)\",\"cat\":\"kernel\",\"ph\":\"X\",\"ts\":0.110,\"dur\":0.500,\"pid\":100000000,\"tid\":1") &&
		       strstr(text, "\"name\":\"wait for GPU\",\"cat\":\"wait\",\"ph\":\"X\",\"ts\":0.020,\"dur\":0.980,\"pid\":100,\"tid\":7") &&
		       strstr(text, "\"ph\":\"s\",\"id\":1,\"ts\":0.000,\"pid\":100,\"tid\":7") &&
		       strstr(text, "\"ph\":\"f\",\"id\":1,\"ts\":0.010,\"pid\":100000000,\"tid\":1,\"bp\":\"e\"") &&
		       strstr(text, "\"dropped_events\":2"),
	       "trace: kernel slice on the GPU track, wait slice on the host thread, launch flow paired");
	free(text);
	unlink(path);
	tap_ok(gbpf_tl_write_trace(&tl, "/nonexistent-dir/x.json", NULL, NULL, why, sizeof(why)) == -ENOENT &&
		       strstr(why, "/nonexistent-dir/x.json.tmp"),
	       "trace: unwritable path fails with the path in the reason: %s", why);
	gbpf_tl_free(&tl);
}

/* Maps through libgbpf's host map code: a histogram array, a hash of counters, a ring. */
static struct gbpf_map_desc descs[] = {
	{.sz = sizeof(struct gbpf_map_desc), .name = "lat_hist", .type = GBPF_MAP_TYPE_ARRAY,
	 .key_size = 4, .value_size = 8, .max_entries = 16},
	{.sz = sizeof(struct gbpf_map_desc), .name = "call_count", .type = GBPF_MAP_TYPE_HASH,
	 .key_size = 16, .value_size = 8, .max_entries = 8},
	{.sz = sizeof(struct gbpf_map_desc), .name = "events", .type = GBPF_MAP_TYPE_RINGBUF,
	 .max_entries = 4096},
	{.sz = sizeof(struct gbpf_map_desc), .name = ".rodata", .type = GBPF_MAP_TYPE_ARRAY,
	 .key_size = 4, .value_size = 8, .max_entries = 1, .origin = GBPF_MAP_ORIGIN_RODATA},
};

static const char prom_want[] =
	"# HELP gbpf_lat_hist log2 histogram of map lat_hist (_sum approximate: slot midpoints)\n"
	"# TYPE gbpf_lat_hist histogram\n"
	"gbpf_lat_hist_bucket{le=\"1\"} 2\n"
	"gbpf_lat_hist_bucket{le=\"3\"} 2\n"
	"gbpf_lat_hist_bucket{le=\"7\"} 5\n"
	"gbpf_lat_hist_bucket{le=\"+Inf\"} 5\n"
	"gbpf_lat_hist_sum 17.5\n"
	"gbpf_lat_hist_count 5\n"
	"# HELP gbpf_call_count_total values of map call_count\n"
	"# TYPE gbpf_call_count_total counter\n"
	"gbpf_call_count_total{key=\"a\\\"b\\\\c\"} 7\n"
	"# HELP gbpf_lost_events_total Records lost because a ring buffer map was full\n"
	"# TYPE gbpf_lost_events_total counter\n"
	"gbpf_lost_events_total{map=\"events\"} 0\n";

struct srv {
	int fd;
	char req[4096];
	const char *answer;
};

static void *one_shot_server(void *arg)
{
	struct srv *s = arg;
	int c = accept(s->fd, NULL, NULL);
	size_t have = 0;

	if (c < 0)
		return NULL;
	while (have < sizeof(s->req) - 1) {
		ssize_t r = recv(c, s->req + have, sizeof(s->req) - 1 - have, 0);

		if (r <= 0)
			break;
		have += (size_t)r;
		s->req[have] = 0;
		if (strstr(s->req, "\r\n\r\n") && strstr(s->req, "}]}]}]}"))
			break;
	}
	send(c, s->answer, strlen(s->answer), MSG_NOSIGNAL);
	close(c);
	return NULL;
}

static int listen_any(int *port)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t sl = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 4) ||
	    getsockname(fd, (struct sockaddr *)&sa, &sl))
		return -1;
	*port = ntohs(sa.sin_port);
	return fd;
}

static int render_static(void *ctx, char **text, size_t *len)
{
	*text = strdup(ctx);
	*len = strlen(ctx);
	return *text ? 0 : -ENOMEM;
}

/* GET @p path from 127.0.0.1:@p port; the whole answer into @p out. */
static void http_get(int port, const char *method, const char *path, char *out, size_t cap)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	char req[256];
	size_t have = 0;

	out[0] = 0;
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		if (fd >= 0)
			close(fd);
		return;
	}
	snprintf(req, sizeof(req), "%s %s HTTP/1.1\r\nHost: x\r\n\r\n", method, path);
	send(fd, req, strlen(req), MSG_NOSIGNAL);
	for (;;) {
		ssize_t r = recv(fd, out + have, cap - 1 - have, 0);

		if (r <= 0 || have + (size_t)r >= cap - 1)
			break;
		have += (size_t)r;
	}
	out[have] = 0;
	close(fd);
}

static void test_metrics(void)
{
	struct gbpf_prog_desc prog = {.sz = sizeof(prog), .name = "p", .maps = descs, .map_cnt = 4};
	struct gbpf_map_instance *maps = NULL;
	struct gbpf_metric_set set;
	struct gbpf_prom_server *srv = NULL;
	struct gbpf_otlp_opts oo = {.service_name = "svc", .start_time_ns = 5, .time_ns = 9};
	char log[256] = "", key[16] = "a\"b\\c", why[256] = "", resp[8192];
	uint64_t v;
	uint32_t k;
	char *text = NULL;
	size_t len = 0;
	int port = 0, sfd;
	pthread_t th;
	struct srv s = {0};

	if (gbpf_plugin__maps_create(NULL, &prog, 1, &maps, log, sizeof(log))) {
		tap_ok(0, "maps created: %s", log);
		return;
	}
	/* lat_hist: slot 0 = 2, slot 2 = 3 -> approximate sum 2 * 0.5 + 3 * 5.5 = 17.5 */
	k = 0, v = 2;
	gbpf_map__update(&maps[0], &k, &v, 0, 0);
	k = 2, v = 3;
	gbpf_map__update(&maps[0], &k, &v, 0, 0);
	v = 7;
	gbpf_map__update(&maps[1], key, &v, 0, 0);
	tap_ok(gbpf_metrics_from_maps(&set, descs, maps, 4) == 0 && set.cnt == 3,
	       "metrics: 3 families (histogram, counter, ring losses; .rodata left out)");
	tap_ok(set.cnt == 3 && set.metrics[0].samples[0].count == 5 && set.metrics[0].samples[0].sum == 17.5,
	       "metrics: histogram count 5, approximate sum 17.5 (slot midpoints)");
	tap_ok(gbpf_prom_render(&set, &text, &len) == 0, "prometheus text rendered");
	tap_ok(text && strcmp(text, prom_want) == 0,
	       "prometheus text exact: cumulative buckets le=1,3,7,+Inf; escaped label; _total counter");
	if (!text || strcmp(text, prom_want))
		tap_diag("%s", text ? text : "(none)");
	free(text);
	text = NULL;
	tap_ok(gbpf_otlp_render_metrics(&set, &oo, &text, &len) == 0 && text &&
		       strstr(text, "\"explicitBounds\":[1,3,7]") &&
		       strstr(text, "\"bucketCounts\":[\"2\",\"0\",\"3\",\"0\"]") &&
		       strstr(text, "\"name\":\"gbpf_call_count\"") &&
		       strstr(text, "\"isMonotonic\":true") &&
		       strstr(text, "\"stringValue\":\"a\\\"b\\\\c\"") &&
		       strstr(text, "\"startTimeUnixNano\":\"5\",\"timeUnixNano\":\"9\""),
	       "OTLP JSON: histogram bounds/bucket counts, monotonic sum without _total, escaped key");
	/* The client against a one-shot server of ours. */
	sfd = listen_any(&port);
	s.fd = sfd;
	s.answer = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";
	if (sfd >= 0 && !pthread_create(&th, NULL, one_shot_server, &s)) {
		char url[128];

		snprintf(url, sizeof(url), "http://127.0.0.1:%d/v1/metrics", port);
		tap_ok(gbpf_otlp_post(url, text, len, 5000, why, sizeof(why)) == 0, "OTLP POST: 200 accepted (%s)", why);
		pthread_join(th, NULL);
		tap_ok(strncmp(s.req, "POST /v1/metrics HTTP/1.1\r\n", 27) == 0 &&
			       strstr(s.req, "Content-Type: application/json\r\n") &&
			       strstr(s.req, "\"resourceMetrics\""),
		       "OTLP POST: request line, content type and body as sent");
		s.answer = "HTTP/1.1 400 Bad Request\r\n\r\n";
		pthread_create(&th, NULL, one_shot_server, &s);
		tap_ok(gbpf_otlp_post(url, text, len, 5000, why, sizeof(why)) == -EPROTO &&
			       strstr(why, "400 Bad Request"),
		       "OTLP POST: a 400 is an error with the status: %s", why);
		pthread_join(th, NULL);
	} else {
		tap_ok(0, "test server socket");
	}
	if (sfd >= 0)
		close(sfd);
	tap_ok(gbpf_otlp_post("http://127.0.0.1:1/x", "{}", 2, 2000, why, sizeof(why)) == -ECONNREFUSED,
	       "OTLP POST: refused connection reported: %s", why);
	tap_ok(gbpf_otlp_post("ftp://x/", "{}", 2, 100, why, sizeof(why)) == -EINVAL, "OTLP: bad URL refused");
	free(text);
	/* The endpoint. */
	tap_ok(gbpf_prom_server_start("127.0.0.1:0", render_static, (void *)prom_want, &srv, why,
				      sizeof(why)) == 0 && gbpf_prom_server_port(srv) > 0,
	       "prometheus endpoint on 127.0.0.1, port %d", srv ? gbpf_prom_server_port(srv) : 0);
	if (srv) {
		http_get(gbpf_prom_server_port(srv), "GET", "/metrics", resp, sizeof(resp));
		tap_ok(strncmp(resp, "HTTP/1.1 200 OK\r\n", 17) == 0 &&
			       strstr(resp, "Content-Type: text/plain; version=0.0.4") &&
			       strstr(resp, "\r\n\r\n# HELP gbpf_lat_hist"),
		       "GET /metrics: 200, version 0.0.4, the text");
		http_get(gbpf_prom_server_port(srv), "GET", "/metricsx", resp, sizeof(resp));
		tap_ok(strncmp(resp, "HTTP/1.1 404", 12) == 0, "GET /metricsx: 404");
		http_get(gbpf_prom_server_port(srv), "DELETE", "/metrics", resp, sizeof(resp));
		tap_ok(strncmp(resp, "HTTP/1.1 405", 12) == 0, "DELETE /metrics: 405");
		gbpf_prom_server_stop(srv);
	}
	tap_ok(gbpf_prom_server_start("localhost:http", render_static, NULL, &srv, why, sizeof(why)) == -EINVAL &&
		       strstr(why, "expected PORT"),
	       "--prom with a service name refused: %s", why);
	gbpf_metrics_free(&set);
	gbpf_maps__destroy(maps, 4);
}

int main(void)
{
	test_timeline();
	test_metrics();
	return tap_done();
}
