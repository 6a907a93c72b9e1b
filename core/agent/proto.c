/* SPDX-License-Identifier: MIT */
/*
 * Encoding and bounds-checked decoding of the controller <-> agent messages.
 * The decoder is the agent's first line of defence: it must never read past
 * the payload, never allocate more than the payload can justify, and name
 * the field that is wrong (fuzzed by tests/agent/fuzz_proto.c).
 */
#include "core/agent/proto.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gbpf/plugin.h>

/* ---- frames ---------------------------------------------------------------------- */

int gbpf_agent_frame_check(const struct gbpf_agent_frame *f, char *why, size_t why_size)
{
	if (f->magic != GBPF_AGENT_MAGIC) {
		snprintf(why, why_size, "frame: bad magic 0x%08x", f->magic);
		return -EINVAL;
	}
	if (f->version != GBPF_AGENT_PROTO_VERSION) {
		snprintf(why, why_size, "frame: protocol version %u, expected %u", f->version,
			 GBPF_AGENT_PROTO_VERSION);
		return -EPROTONOSUPPORT;
	}
	if (f->type < GBPF_AGENT_MSG_HELLO || f->type > GBPF_AGENT_MSG_MAX) {
		snprintf(why, why_size, "frame: unknown message type %u", f->type);
		return -EINVAL;
	}
	if (f->len > GBPF_AGENT_MAX_PAYLOAD) {
		snprintf(why, why_size, "frame: payload of %u bytes exceeds the limit of %u", f->len,
			 GBPF_AGENT_MAX_PAYLOAD);
		return -EMSGSIZE;
	}
	if (f->reserved) {
		snprintf(why, why_size, "frame: reserved field is %u, not 0", f->reserved);
		return -EINVAL;
	}
	return 0;
}

void gbpf_agent_frame_init(struct gbpf_agent_frame *f, uint16_t type, uint32_t len)
{
	memset(f, 0, sizeof(*f));
	f->magic = GBPF_AGENT_MAGIC;
	f->version = GBPF_AGENT_PROTO_VERSION;
	f->type = type;
	f->len = len;
}

/* ---- encoder --------------------------------------------------------------------- */

static int buf_reserve(struct gbpf_agent_buf *b, size_t n)
{
	size_t cap;
	unsigned char *p;

	if (b->err)
		return b->err;
	if (n > GBPF_AGENT_MAX_PAYLOAD || b->len > GBPF_AGENT_MAX_PAYLOAD - n)
		return b->err = -EMSGSIZE;
	if (b->len + n <= b->cap)
		return 0;
	cap = b->cap ? b->cap : 256;
	while (cap < b->len + n)
		cap *= 2;
	p = realloc(b->data, cap);
	if (!p)
		return b->err = -ENOMEM;
	b->data = p;
	b->cap = cap;
	return 0;
}

void gbpf_agent_buf_put_bytes(struct gbpf_agent_buf *b, const void *p, size_t n)
{
	if (!n || buf_reserve(b, n))
		return;
	memcpy(b->data + b->len, p, n);
	b->len += n;
}

void gbpf_agent_buf_put_u32(struct gbpf_agent_buf *b, uint32_t v)
{
	unsigned char le[4] = {(unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16),
			       (unsigned char)(v >> 24)};

	gbpf_agent_buf_put_bytes(b, le, sizeof(le));
}

void gbpf_agent_buf_put_u64(struct gbpf_agent_buf *b, uint64_t v)
{
	gbpf_agent_buf_put_u32(b, (uint32_t)v);
	gbpf_agent_buf_put_u32(b, (uint32_t)(v >> 32));
}

void gbpf_agent_buf_put_str(struct gbpf_agent_buf *b, const char *s)
{
	size_t n = s ? strlen(s) : 0;

	if (n > GBPF_AGENT_MAX_STR)
		n = GBPF_AGENT_MAX_STR; /* messages are truncated, never refused */
	gbpf_agent_buf_put_u32(b, (uint32_t)n);
	gbpf_agent_buf_put_bytes(b, s, n);
}

void gbpf_agent_buf_free(struct gbpf_agent_buf *b)
{
	free(b->data);
	memset(b, 0, sizeof(*b));
}

int gbpf_agent_encode_hello(struct gbpf_agent_buf *b, uint32_t pid, uint32_t ppid,
			    const char *exe)
{
	gbpf_agent_buf_put_u32(b, GBPF_AGENT_PROTO_VERSION);
	gbpf_agent_buf_put_u32(b, pid);
	gbpf_agent_buf_put_u32(b, ppid);
	gbpf_agent_buf_put_str(b, exe);
	return b->err;
}

int gbpf_agent_encode_report(struct gbpf_agent_buf *b, uint32_t event, uint32_t dropped,
			     const char *kernel, const char *msg)
{
	gbpf_agent_buf_put_u32(b, event);
	gbpf_agent_buf_put_u32(b, dropped);
	gbpf_agent_buf_put_str(b, kernel);
	gbpf_agent_buf_put_str(b, msg);
	return b->err;
}

int gbpf_agent_encode_timeline(struct gbpf_agent_buf *b, uint64_t dropped,
			       const struct gbpf_timeline_event *ev, size_t count)
{
	size_t i;

	if (count > GBPF_AGENT_MAX_TL_BATCH)
		return b->err = -E2BIG;
	gbpf_agent_buf_put_u64(b, dropped);
	gbpf_agent_buf_put_u32(b, (uint32_t)count);
	for (i = 0; i < count; i++) {
		const struct gbpf_timeline_event *e = &ev[i];

		gbpf_agent_buf_put_u32(b, e->kind);
		gbpf_agent_buf_put_u32(b, e->flags);
		gbpf_agent_buf_put_u32(b, (uint32_t)e->device);
		gbpf_agent_buf_put_u64(b, e->stream);
		gbpf_agent_buf_put_u64(b, e->correlation_id);
		gbpf_agent_buf_put_u64(b, e->host_tid);
		gbpf_agent_buf_put_u64(b, e->host_begin_ns);
		gbpf_agent_buf_put_u64(b, e->host_end_ns);
		gbpf_agent_buf_put_u64(b, e->gpu_begin_ns);
		gbpf_agent_buf_put_u64(b, e->gpu_end_ns);
		gbpf_agent_buf_put_u64(b, e->bytes);
		gbpf_agent_buf_put_str(b, e->name);
	}
	return b->err;
}

int gbpf_agent_encode_setup(struct gbpf_agent_buf *b, const char *backend,
			    const char *backend_path, uint32_t flags,
			    const struct gbpf_map_desc *maps, size_t map_cnt,
			    const struct gbpf_prog_desc *progs, const uint32_t *map_base,
			    size_t prog_cnt)
{
	size_t i;

	if (map_cnt > GBPF_AGENT_MAX_MAPS || prog_cnt > GBPF_AGENT_MAX_PROGS)
		return -E2BIG;
	gbpf_agent_buf_put_str(b, backend);
	gbpf_agent_buf_put_str(b, backend_path);
	gbpf_agent_buf_put_u32(b, flags);
	gbpf_agent_buf_put_u32(b, (uint32_t)map_cnt);
	for (i = 0; i < map_cnt; i++) {
		const struct gbpf_map_desc *m = &maps[i];

		gbpf_agent_buf_put_str(b, m->name);
		gbpf_agent_buf_put_u32(b, m->type);
		gbpf_agent_buf_put_u32(b, m->key_size);
		gbpf_agent_buf_put_u32(b, m->value_size);
		gbpf_agent_buf_put_u32(b, m->max_entries);
		gbpf_agent_buf_put_u32(b, m->map_flags);
		gbpf_agent_buf_put_u32(b, m->origin);
		if (m->init_data && m->init_size > UINT32_MAX)
			return b->err = -E2BIG;
		/* What the verifier reads (.rodata strings) travels with the map. */
		gbpf_agent_buf_put_u32(b, m->init_data ? (uint32_t)m->init_size : 0);
		if (m->init_data)
			gbpf_agent_buf_put_bytes(b, m->init_data, m->init_size);
	}
	gbpf_agent_buf_put_u32(b, (uint32_t)prog_cnt);
	for (i = 0; i < prog_cnt; i++) {
		const struct gbpf_prog_desc *p = &progs[i];

		if (p->insn_cnt > GBPF_AGENT_MAX_INSNS)
			return b->err = -E2BIG;
		gbpf_agent_buf_put_str(b, p->name);
		gbpf_agent_buf_put_str(b, p->section);
		gbpf_agent_buf_put_u32(b, p->attach.kind);
		gbpf_agent_buf_put_str(b, p->attach.target);
		gbpf_agent_buf_put_str(b, p->attach.symbol);
		gbpf_agent_buf_put_str(b, p->license);
		gbpf_agent_buf_put_str(b, p->source_file);
		gbpf_agent_buf_put_u32(b, map_base[i]);
		gbpf_agent_buf_put_u32(b, (uint32_t)p->map_cnt);
		gbpf_agent_buf_put_u32(b, (uint32_t)p->insn_cnt);
		gbpf_agent_buf_put_bytes(b, p->insns, p->insn_cnt * sizeof(struct gbpf_insn));
	}
	return b->err;
}

/* ---- decoder --------------------------------------------------------------------- */

/* Read cursor over one payload; the first failure sticks and keeps its reason. */
struct rd {
	const unsigned char *p;
	size_t len, off;
	int err;
	char *why;
	size_t why_size;
};

static __attribute__((format(printf, 2, 3))) void rd_fail(struct rd *r, const char *fmt, ...)
{
	va_list ap;

	if (r->err)
		return;
	r->err = -EINVAL;
	va_start(ap, fmt);
	vsnprintf(r->why, r->why_size, fmt, ap);
	va_end(ap);
}

static int rd_need(struct rd *r, size_t n, const char *what)
{
	if (r->err)
		return 0;
	if (n > r->len - r->off) {
		rd_fail(r, "%s at payload offset %zu: needs %zu bytes, %zu left", what, r->off, n,
			r->len - r->off);
		return 0;
	}
	return 1;
}

static uint32_t rd_u32(struct rd *r, const char *what)
{
	const unsigned char *q;

	if (!rd_need(r, 4, what))
		return 0;
	q = r->p + r->off;
	r->off += 4;
	return (uint32_t)q[0] | (uint32_t)q[1] << 8 | (uint32_t)q[2] << 16 | (uint32_t)q[3] << 24;
}

static uint64_t rd_u64(struct rd *r, const char *what)
{
	uint64_t lo = rd_u32(r, what);

	return lo | (uint64_t)rd_u32(r, what) << 32;
}

/* A string into a fixed buffer of cap bytes (NUL included). */
static void rd_str_into(struct rd *r, char *dst, size_t cap, const char *what)
{
	uint32_t n = rd_u32(r, what);

	dst[0] = 0;
	if (r->err)
		return;
	if (n >= cap || n > GBPF_AGENT_MAX_STR) {
		rd_fail(r, "%s at payload offset %zu: length %u exceeds %zu", what, r->off - 4, n,
			cap - 1);
		return;
	}
	if (!rd_need(r, n, what))
		return;
	if (memchr(r->p + r->off, 0, n)) {
		rd_fail(r, "%s at payload offset %zu: contains a NUL byte", what, r->off);
		return;
	}
	memcpy(dst, r->p + r->off, n);
	dst[n] = 0;
	r->off += n;
}

/* A string, malloc'ed (NULL result only on error). */
static char *rd_str(struct rd *r, const char *what)
{
	char *s;
	uint32_t n;
	size_t save = r->off;

	n = rd_u32(r, what);
	if (r->err)
		return NULL;
	if (n > GBPF_AGENT_MAX_STR) {
		rd_fail(r, "%s at payload offset %zu: length %u exceeds %u", what, save, n,
			GBPF_AGENT_MAX_STR);
		return NULL;
	}
	if (!rd_need(r, n, what))
		return NULL;
	if (memchr(r->p + r->off, 0, n)) {
		rd_fail(r, "%s at payload offset %zu: contains a NUL byte", what, r->off);
		return NULL;
	}
	s = malloc((size_t)n + 1);
	if (!s) {
		r->err = -ENOMEM;
		snprintf(r->why, r->why_size, "%s: out of memory", what);
		return NULL;
	}
	memcpy(s, r->p + r->off, n);
	s[n] = 0;
	r->off += n;
	return s;
}

static int rd_end(struct rd *r, const char *msg)
{
	if (!r->err && r->off != r->len)
		rd_fail(r, "%s: %zu unexpected trailing bytes at payload offset %zu", msg,
			r->len - r->off, r->off);
	return r->err;
}

int gbpf_agent_decode_hello(const void *p, size_t len, struct gbpf_agent_hello *out, char *why,
			    size_t why_size)
{
	struct rd r = {.p = p, .len = len, .why = why, .why_size = why_size};

	memset(out, 0, sizeof(*out));
	out->version = rd_u32(&r, "hello.version");
	out->pid = rd_u32(&r, "hello.pid");
	out->ppid = rd_u32(&r, "hello.ppid");
	rd_str_into(&r, out->exe, sizeof(out->exe), "hello.exe");
	if (!r.err && out->version != GBPF_AGENT_PROTO_VERSION)
		rd_fail(&r, "hello: agent speaks protocol %u, controller %u", out->version,
			GBPF_AGENT_PROTO_VERSION);
	return rd_end(&r, "hello");
}

int gbpf_agent_decode_job(const void *p, size_t len, char *path, size_t path_size, char *why,
			  size_t why_size)
{
	struct rd r = {.p = p, .len = len, .why = why, .why_size = why_size};

	rd_str_into(&r, path, path_size, "job.path");
	return rd_end(&r, "job");
}

int gbpf_agent_decode_report(uint16_t type, const void *p, size_t len,
			     struct gbpf_agent_report *out, char *why, size_t why_size)
{
	struct rd r = {.p = p, .len = len, .why = why, .why_size = why_size};

	memset(out, 0, sizeof(*out));
	if (type == GBPF_AGENT_MSG_PRINT) {
		out->event = GBPF_AGENT_EVENT_INFO;
		out->dropped = rd_u32(&r, "print.dropped");
		rd_str_into(&r, out->msg, sizeof(out->msg), "print.text");
		return rd_end(&r, "print");
	}
	out->event = rd_u32(&r, "report.event");
	out->dropped = rd_u32(&r, "report.dropped");
	rd_str_into(&r, out->kernel, sizeof(out->kernel), "report.kernel");
	rd_str_into(&r, out->msg, sizeof(out->msg), "report.msg");
	if (!r.err && out->event > GBPF_AGENT_EVENT_ERROR)
		rd_fail(&r, "report: unknown event kind %u", out->event);
	return rd_end(&r, "report");
}

/* Every event field is 4 or 8 bytes, plus the name's length: 80 bytes at least. */
#define TL_EVENT_MIN_BYTES 80u

int gbpf_agent_decode_timeline(const void *p, size_t len, uint64_t *dropped,
			       struct gbpf_timeline_event *out, size_t *count, char *why,
			       size_t why_size)
{
	struct rd r = {.p = p, .len = len, .why = why, .why_size = why_size};
	uint32_t n, i;

	*count = 0;
	*dropped = rd_u64(&r, "timeline.dropped");
	n = rd_u32(&r, "timeline.count");
	if (!r.err && (n > GBPF_AGENT_MAX_TL_BATCH || (size_t)n * TL_EVENT_MIN_BYTES > r.len - r.off))
		rd_fail(&r, "timeline: event count %u does not fit the %zu bytes left (limit %u)", n,
			r.len - r.off, GBPF_AGENT_MAX_TL_BATCH);
	for (i = 0; i < n && !r.err; i++) {
		struct gbpf_timeline_event *e = &out[i];

		memset(e, 0, sizeof(*e));
		e->sz = sizeof(*e);
		e->kind = rd_u32(&r, "timeline.kind");
		e->flags = rd_u32(&r, "timeline.flags");
		e->device = (int32_t)rd_u32(&r, "timeline.device");
		e->stream = rd_u64(&r, "timeline.stream");
		e->correlation_id = rd_u64(&r, "timeline.correlation_id");
		e->host_tid = rd_u64(&r, "timeline.host_tid");
		e->host_begin_ns = rd_u64(&r, "timeline.host_begin_ns");
		e->host_end_ns = rd_u64(&r, "timeline.host_end_ns");
		e->gpu_begin_ns = rd_u64(&r, "timeline.gpu_begin_ns");
		e->gpu_end_ns = rd_u64(&r, "timeline.gpu_end_ns");
		e->bytes = rd_u64(&r, "timeline.bytes");
		rd_str_into(&r, e->name, sizeof(e->name), "timeline.name");
		if (r.err)
			break;
		if (e->kind < GBPF_TL_LAUNCH || e->kind > GBPF_TL_KIND_MAX)
			rd_fail(&r, "timeline event #%u: unknown kind %u", i, e->kind);
		else if (e->flags & ~GBPF_TL_F_ALL)
			rd_fail(&r, "timeline event #%u: unknown flags 0x%x", i, e->flags);
		else if (!(e->flags & (GBPF_TL_F_HOST | GBPF_TL_F_GPU)))
			rd_fail(&r, "timeline event #%u: neither a host nor a GPU interval", i);
		else if ((e->flags & GBPF_TL_F_HOST) && e->host_end_ns < e->host_begin_ns)
			rd_fail(&r, "timeline event #%u: host interval ends before it begins", i);
		else if ((e->flags & GBPF_TL_F_GPU) && e->gpu_end_ns < e->gpu_begin_ns)
			rd_fail(&r, "timeline event #%u: GPU interval ends before it begins", i);
	}
	if (rd_end(&r, "timeline"))
		return r.err;
	*count = n;
	return 0;
}

static int map_type_known(uint32_t t)
{
	switch (t) {
	case GBPF_MAP_TYPE_HASH:
	case GBPF_MAP_TYPE_ARRAY:
	case GBPF_MAP_TYPE_PERF_EVENT_ARRAY:
	case GBPF_MAP_TYPE_PERCPU_HASH:
	case GBPF_MAP_TYPE_PERCPU_ARRAY:
	case GBPF_MAP_TYPE_LRU_HASH:
	case GBPF_MAP_TYPE_RINGBUF:
	case GBPF_MAP_TYPE_GPU_HASH:
	case GBPF_MAP_TYPE_PERGPUTHREAD_ARRAY:
	case GBPF_MAP_TYPE_GPU_ARRAY:
	case GBPF_MAP_TYPE_GPU_THREAD_LOCAL:
	case GBPF_MAP_TYPE_GPU_RINGBUF:
		return 1;
	default:
		return 0;
	}
}

static int attach_kind_known(uint32_t k)
{
	return k <= GBPF_ATTACH_GPU_BLOCK ||
	       (k >= GBPF_ATTACH_HOST_LAUNCH && k <= GBPF_ATTACH_HOST_MODULE_LOAD) ||
	       k == GBPF_ATTACH_UPROBE || k == GBPF_ATTACH_URETPROBE;
}

/* Strings that are optional in gbpf_prog_desc come back as NULL when empty. */
static const char *null_if_empty(char *s)
{
	if (s && !s[0]) {
		free(s);
		return NULL;
	}
	return s;
}

static void decode_map(struct rd *r, size_t i, struct gbpf_map_desc *m)
{
	char what[48];
	uint32_t init_size;
	void *init;

	snprintf(what, sizeof(what), "map #%zu name", i);
	m->sz = sizeof(*m);
	m->name = rd_str(r, what);
	m->type = rd_u32(r, "map.type");
	m->key_size = rd_u32(r, "map.key_size");
	m->value_size = rd_u32(r, "map.value_size");
	m->max_entries = rd_u32(r, "map.max_entries");
	m->map_flags = rd_u32(r, "map.map_flags");
	m->origin = rd_u32(r, "map.origin");
	init_size = rd_u32(r, "map.init_size");
	if (r->err)
		return;
	if (!m->name[0])
		rd_fail(r, "map #%zu: empty name", i);
	else if (!map_type_known(m->type))
		rd_fail(r, "map #%zu '%s': unknown type %u", i, m->name, m->type);
	else if (m->origin > GBPF_MAP_ORIGIN_BSS)
		rd_fail(r, "map #%zu '%s': unknown origin %u", i, m->name, m->origin);
	else if (init_size && m->origin != GBPF_MAP_ORIGIN_DATA &&
		 m->origin != GBPF_MAP_ORIGIN_RODATA)
		rd_fail(r, "map #%zu '%s': %u initial bytes for a map that is not .data or .rodata",
			i, m->name, init_size);
	else if (init_size > m->value_size)
		rd_fail(r, "map #%zu '%s': %u initial bytes exceed its value size %u", i, m->name,
			init_size, m->value_size);
	/* The bytes must be in the payload before anything is allocated for them. */
	if (r->err || !init_size || !rd_need(r, init_size, "map.init_data"))
		return;
	init = malloc(init_size);
	if (!init) {
		r->err = -ENOMEM;
		snprintf(r->why, r->why_size, "map '%s': out of memory for %u initial bytes", m->name,
			 init_size);
		return;
	}
	memcpy(init, r->p + r->off, init_size);
	r->off += init_size;
	m->init_data = init;
	m->init_size = init_size;
	/* Other sizes are checked against the map memory itself in gbpf_shm_attach. */
}

/* Map references and wide loads of a decoded program (the verifier checks the rest). */
static void check_insns(struct rd *r, size_t i, const struct gbpf_prog_desc *p)
{
	size_t k;

	for (k = 0; k < p->insn_cnt && !r->err; k++) {
		const struct gbpf_insn *in = &p->insns[k];

		if (!gbpf_insn_is_wide(in))
			continue;
		if (k + 1 >= p->insn_cnt) {
			rd_fail(r, "program #%zu '%s': instruction %zu: wide load cut off at the end", i,
				p->name, k);
			return;
		}
		if ((in->src == GBPF_PSEUDO_MAP_IDX || in->src == GBPF_PSEUDO_MAP_IDX_VALUE) &&
		    (in->imm < 0 || (size_t)in->imm >= p->map_cnt))
			rd_fail(r, "program #%zu '%s': instruction %zu: map index %d outside its %zu maps",
				i, p->name, k, in->imm, p->map_cnt);
		k++; /* the second slot is data */
	}
}

static void decode_prog(struct rd *r, size_t i, struct gbpf_prog_desc *p,
			const struct gbpf_agent_setup *s)
{
	uint32_t base, cnt, insn_cnt;
	struct gbpf_insn *insns;
	char *target, *symbol;

	p->sz = sizeof(*p);
	p->name = rd_str(r, "program.name");
	p->section = null_if_empty(rd_str(r, "program.section"));
	p->attach.kind = rd_u32(r, "program.attach_kind");
	target = rd_str(r, "program.target");
	symbol = rd_str(r, "program.symbol");
	p->attach.target = null_if_empty(target);
	p->attach.symbol = null_if_empty(symbol);
	p->license = null_if_empty(rd_str(r, "program.license"));
	p->source_file = null_if_empty(rd_str(r, "program.source_file"));
	base = rd_u32(r, "program.map_base");
	cnt = rd_u32(r, "program.map_cnt");
	insn_cnt = rd_u32(r, "program.insn_cnt");
	if (r->err)
		return;
	if (!p->name[0]) {
		rd_fail(r, "program #%zu: empty name", i);
		return;
	}
	if (!attach_kind_known(p->attach.kind)) {
		rd_fail(r, "program #%zu '%s': unknown attach kind %u", i, p->name, p->attach.kind);
		return;
	}
	if (base > s->map_cnt || cnt > s->map_cnt - base) {
		rd_fail(r, "program #%zu '%s': maps [%u, %u+%u) outside the %zu maps sent", i,
			p->name, base, base, cnt, s->map_cnt);
		return;
	}
	if (insn_cnt == 0 || insn_cnt > GBPF_AGENT_MAX_INSNS) {
		rd_fail(r, "program #%zu '%s': %u instructions (must be 1..%u)", i, p->name,
			insn_cnt, GBPF_AGENT_MAX_INSNS);
		return;
	}
	/* Check the bytes are there before allocating for them. */
	if (!rd_need(r, (size_t)insn_cnt * sizeof(struct gbpf_insn), "program.insns"))
		return;
	insns = malloc((size_t)insn_cnt * sizeof(*insns));
	if (!insns) {
		r->err = -ENOMEM;
		snprintf(r->why, r->why_size, "program '%s': out of memory", p->name);
		return;
	}
	memcpy(insns, r->p + r->off, (size_t)insn_cnt * sizeof(*insns));
	r->off += (size_t)insn_cnt * sizeof(*insns);
	p->insns = insns;
	p->insn_cnt = insn_cnt;
	p->maps = cnt ? &s->maps[base] : NULL;
	p->map_cnt = cnt;
	check_insns(r, i, p);
}

int gbpf_agent_decode_setup(const void *p, size_t len, struct gbpf_agent_setup *out, char *why,
			    size_t why_size)
{
	struct rd r = {.p = p, .len = len, .why = why, .why_size = why_size};
	uint32_t n;
	size_t i;

	memset(out, 0, sizeof(*out));
	out->backend = rd_str(&r, "setup.backend");
	out->backend_path = rd_str(&r, "setup.backend_path");
	out->flags = rd_u32(&r, "setup.flags");
	if (!r.err && (out->flags & ~GBPF_AGENT_F_KNOWN))
		rd_fail(&r, "setup: unknown flags 0x%x (known: 0x%x)", out->flags & ~GBPF_AGENT_F_KNOWN,
			GBPF_AGENT_F_KNOWN);
	if (!r.err && (out->flags & GBPF_AGENT_F_ENGINE_PTX) &&
	    (out->flags & GBPF_AGENT_F_ENGINE_SANITIZER))
		rd_fail(&r, "setup: flags 0x%x ask for both the PTX and the sanitizer engine",
			out->flags);
	n = rd_u32(&r, "setup.map_cnt");
	/* Each map takes at least 32 bytes: a count beyond that is a lie. */
	if (!r.err && (n > GBPF_AGENT_MAX_MAPS || (size_t)n * 32 > r.len - r.off))
		rd_fail(&r, "setup: map count %u does not fit the %zu bytes left", n, r.len - r.off);
	if (!r.err && n) {
		out->maps = calloc(n, sizeof(*out->maps));
		if (!out->maps) {
			r.err = -ENOMEM;
			snprintf(why, why_size, "setup: out of memory for %u maps", n);
		}
	}
	for (i = 0; i < n && !r.err; i++) {
		decode_map(&r, i, &out->maps[i]);
		out->map_cnt = i + 1; /* so setup_free frees what was decoded */
	}
	n = rd_u32(&r, "setup.prog_cnt");
	/* Each program takes at least 48 bytes (strings, numbers, one instruction). */
	if (!r.err && (n > GBPF_AGENT_MAX_PROGS || (size_t)n * 48 > r.len - r.off))
		rd_fail(&r, "setup: program count %u does not fit the %zu bytes left", n,
			r.len - r.off);
	if (!r.err && n) {
		out->progs = calloc(n, sizeof(*out->progs));
		if (!out->progs) {
			r.err = -ENOMEM;
			snprintf(why, why_size, "setup: out of memory for %u programs", n);
		}
	}
	for (i = 0; i < n && !r.err; i++) {
		out->prog_cnt = i + 1;
		decode_prog(&r, i, &out->progs[i], out);
	}
	if (rd_end(&r, "setup")) {
		int err = r.err;

		gbpf_agent_setup_free(out);
		return err;
	}
	return 0;
}

void gbpf_agent_setup_free(struct gbpf_agent_setup *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->map_cnt; i++) {
		free((char *)s->maps[i].name);
		free((void *)s->maps[i].init_data);
	}
	for (i = 0; i < s->prog_cnt; i++) {
		struct gbpf_prog_desc *p = &s->progs[i];

		free((char *)p->name);
		free((char *)p->section);
		free((char *)p->attach.target);
		free((char *)p->attach.symbol);
		free((char *)p->license);
		free((char *)p->source_file);
		free((void *)p->insns);
	}
	free(s->maps);
	free(s->progs);
	free(s->backend);
	free(s->backend_path);
	memset(s, 0, sizeof(*s));
}
