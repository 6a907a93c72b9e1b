/* SPDX-License-Identifier: MIT */
/*
 * core/agent/proto.h - the wire protocol between `gbpf run` (the
 * controller) and libgbpf-agent.so (the agent preloaded into the
 * application), and the shared memory region that holds the maps.
 *
 * Transport: a SOCK_STREAM unix socket; every message is a frame
 *   struct gbpf_agent_frame (16 bytes, little endian) + payload.
 * Payload fields are little-endian integers and strings (u32 length, then
 * the bytes, no NUL). Everything a decoder reads is bounds-checked against
 * the payload length; a malformed message is rejected with a reason.
 *
 * Messages (docs/PROCESS_MODEL.md has the sequence):
 *   HELLO  agent -> controller: u32 version, u32 pid, u32 ppid, str exe
 *   SETUP  controller -> agent (+ the map memfd via SCM_RIGHTS, then the
 *          memfd of the agent's print ring, core/agent/print_ring.h, which
 *          an agent may do without: its lines then come as PRINT):
 *          str backend, str backend_path, u32 flags,
 *          u32 map_cnt, map_cnt x { str name, u32 type, key_size, value_size,
 *                                   max_entries, map_flags, origin,
 *                                   u32 init_size, init_size bytes },
 *          u32 prog_cnt, prog_cnt x { str name, str section, u32 attach_kind,
 *                                     str target, str symbol, str license,
 *                                     str source_file, u32 map_base,
 *                                     u32 map_cnt, u32 insn_cnt,
 *                                     insn_cnt x 8 bytes }
 *          init bytes: the initial value of a .data / .rodata map as the
 *          controller's loader read it (0 bytes for other maps). The verifier
 *          proves string arguments (puts, trace_printk formats) against the
 *          .rodata bytes, so the agent must verify with the very bytes the
 *          controller verified with, not with whatever the region holds now.
 *   REPORT agent -> controller: u32 event, u32 dropped, str kernel, str msg
 *   PRINT  agent -> controller: u32 dropped, str text (trace_printk output)
 *   TIMELINE agent -> controller: u64 dropped (timeline events the agent
 *          dropped since it started: a running total), u32 count,
 *          count x { u32 kind, u32 flags, u32 device (two's complement),
 *                    u64 stream, correlation_id, host_tid, host_begin_ns,
 *                    host_end_ns, gpu_begin_ns, gpu_end_ns, bytes, str name }
 *   JOB    controller -> agent (`gbpf attach`, before SETUP): str path of the
 *          controller's own socket, where the agent's children connect
 *          ("" = none)
 *   DETACH controller -> agent (`gbpf detach`, instead of SETUP): end the
 *          current session, stay idle; empty payload
 *   WAKE   agent -> controller: lines wait in the print ring of a controller
 *          that asked to be woken (print_ring.h); empty payload
 *
 * `gbpf run` connects agents to the controller (GBPF_AGENT_SOCK); `gbpf
 * attach` connects the controller to an idle agent's own socket
 * (GBPF_AGENT_LISTEN, gbpf_agent_listen_path()): the agent still speaks
 * first (HELLO), then gets JOB and SETUP, or DETACH.
 */
#ifndef GBPF_CORE_AGENT_PROTO_H
#define GBPF_CORE_AGENT_PROTO_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#include <gbpf/plugin.h>
#include <gbpf/prog.h>
#include <gbpf/verifier.h>

/** Environment variable naming the controller's socket (unset: agent idle). */
#define GBPF_AGENT_ENV_SOCK "GBPF_AGENT_SOCK"
/**
 * Environment variable: "1" makes the agent listen on its own socket
 * (gbpf_agent_listen_path) for `gbpf attach` / `gbpf detach`.
 */
#define GBPF_AGENT_ENV_LISTEN "GBPF_AGENT_LISTEN"
/** Environment variable naming the backend an idle agent prepares at start (`gbpf run --idle`). */
#define GBPF_AGENT_ENV_BACKEND "GBPF_AGENT_BACKEND"
/** Environment variable naming that backend's plugin file (optional). */
#define GBPF_AGENT_ENV_BACKEND_PATH "GBPF_AGENT_BACKEND_PATH"
/** Environment variable overriding the path of libgbpf-agent.so (controller). */
#define GBPF_AGENT_ENV_LIB "GBPF_AGENT_LIB"
/**
 * Environment variable: the GBPF_AGENT_F_* options an idle agent was started
 * with (`gbpf run --idle --engine E --allow-app-writes`), a decimal number.
 * An attach that names no engine gets this one; an attach asking for
 * GBPF_AGENT_F_ALLOW_APP_WRITES is refused unless it is here (whoever
 * started the application decides whether probes may change its values).
 */
#define GBPF_AGENT_ENV_IDLE_FLAGS "GBPF_AGENT_IDLE_FLAGS"

#define GBPF_AGENT_MAGIC 0x41504247u /* "GBPA" */
/* 2: SETUP carries the initial bytes of .data / .rodata maps. */
#define GBPF_AGENT_PROTO_VERSION 2u

/** Largest payload either side accepts (bounds every allocation). */
#define GBPF_AGENT_MAX_PAYLOAD (64u << 20)
/** Longest string field (names, paths, messages). */
#define GBPF_AGENT_MAX_STR 4096u
/** Most maps / programs in one SETUP. */
#define GBPF_AGENT_MAX_MAPS 4096u
#define GBPF_AGENT_MAX_PROGS 4096u
/** Most instruction slots of one program (as the loader's limit). */
#define GBPF_AGENT_MAX_INSNS (1u << 20)

enum gbpf_agent_msg_type {
	GBPF_AGENT_MSG_HELLO = 1,
	GBPF_AGENT_MSG_SETUP = 2,
	GBPF_AGENT_MSG_REPORT = 3,
	GBPF_AGENT_MSG_PRINT = 4,
	GBPF_AGENT_MSG_TIMELINE = 5,
	GBPF_AGENT_MSG_JOB = 6,
	GBPF_AGENT_MSG_DETACH = 7,
	GBPF_AGENT_MSG_WAKE = 8,
};
/** Highest message type a frame may carry. */
#define GBPF_AGENT_MSG_MAX GBPF_AGENT_MSG_WAKE
/** Name of a message type for error messages ("unknown" past the table). */
const char *gbpf_agent_msg_name(uint32_t type);
/** 1 when agents send @p type (HELLO, REPORT, PRINT, TIMELINE, WAKE), 0 for the controller's. */
int gbpf_agent_msg_from_agent(uint32_t type);
/** Most events in one TIMELINE message (bounds the decoder's allocation). */
#define GBPF_AGENT_MAX_TL_BATCH 256u

/** Frame header preceding every payload. */
struct gbpf_agent_frame {
	uint32_t magic;   /**< GBPF_AGENT_MAGIC */
	uint16_t version; /**< GBPF_AGENT_PROTO_VERSION */
	uint16_t type;    /**< enum gbpf_agent_msg_type */
	uint32_t len;     /**< payload bytes, <= GBPF_AGENT_MAX_PAYLOAD */
	uint32_t reserved; /**< zero */
};
_Static_assert(sizeof(struct gbpf_agent_frame) == 16, "frame header is 16 bytes");

/** Check a received frame header; writes the reason into why. */
int gbpf_agent_frame_check(const struct gbpf_agent_frame *f, char *why, size_t why_size);
/** Fill a frame header for @p type and @p len payload bytes. */
void gbpf_agent_frame_init(struct gbpf_agent_frame *f, uint16_t type, uint32_t len);

/** Growable payload under construction (bounded by GBPF_AGENT_MAX_PAYLOAD). */
struct gbpf_agent_buf {
	unsigned char *data;
	size_t len, cap;
	int err; /**< sticky: first -errno of a failed append */
};

void gbpf_agent_buf_put_u32(struct gbpf_agent_buf *b, uint32_t v);
void gbpf_agent_buf_put_u64(struct gbpf_agent_buf *b, uint64_t v);
/** Append a string (NULL is encoded as the empty string). */
void gbpf_agent_buf_put_str(struct gbpf_agent_buf *b, const char *s);
void gbpf_agent_buf_put_bytes(struct gbpf_agent_buf *b, const void *p, size_t n);
void gbpf_agent_buf_free(struct gbpf_agent_buf *b);

/** HELLO as decoded. */
struct gbpf_agent_hello {
	uint32_t version;
	uint32_t pid;
	uint32_t ppid;
	char exe[GBPF_AGENT_MAX_STR + 1];
};

/** REPORT / PRINT as decoded (kernel empty for PRINT). */
struct gbpf_agent_report {
	uint32_t event;   /**< enum gbpf_agent_event */
	uint32_t dropped; /**< messages the agent dropped before this one */
	char kernel[256];
	char msg[GBPF_AGENT_MAX_STR + 1];
};

/** Every GBPF_AGENT_F_* flag a SETUP may carry; any other bit is refused. */
#define GBPF_AGENT_F_KNOWN                                                                 \
	(GBPF_AGENT_F_ALLOW_APP_WRITES | GBPF_AGENT_F_GPU_TIMELINE | GBPF_AGENT_F_ENGINE_PTX | \
	 GBPF_AGENT_F_ENGINE_SANITIZER)

/**
 * Verifier flags (GBPF_VERIFY_F_*) for programs sent with SETUP flags
 * @p agent_flags. The controller and the agent both derive them here, so the
 * agent verifies exactly as the controller did (--allow-app-writes lets
 * gpu/mem probes write ctx->mem_value, on both sides or on neither).
 */
static inline uint32_t gbpf_agent_verify_flags(uint32_t agent_flags)
{
	return (agent_flags & GBPF_AGENT_F_ALLOW_APP_WRITES) ? GBPF_VERIFY_F_ALLOW_MEM_WRITE : 0;
}

/**
 * The hint both sides add to a verifier rejection when the program is a
 * gpu/mem probe refused for writing its context (ctx->mem_value) and the
 * user did not allow app writes; "" otherwise.
 */
static inline const char *gbpf_agent_app_write_hint(const struct gbpf_prog_desc *p,
						     const char *reason)
{
	if (p->attach.kind != GBPF_ATTACH_GPU_MEM || !reason || !strstr(reason, "cannot write into ctx"))
		return "";
	return " (a gpu/mem probe may replace the stored value only with --allow-app-writes)";
}

/** SETUP as decoded: every pointer is owned by the struct (maps' init_data included). */
struct gbpf_agent_setup {
	char *backend;      /**< backend name ("" = none: stay idle) */
	char *backend_path; /**< plugin file the controller chose, or "" */
	uint32_t flags;     /**< GBPF_AGENT_F_* */
	struct gbpf_map_desc *maps;
	size_t map_cnt;
	struct gbpf_prog_desc *progs;
	size_t prog_cnt;
};

int gbpf_agent_encode_hello(struct gbpf_agent_buf *b, uint32_t pid, uint32_t ppid,
			    const char *exe);
int gbpf_agent_decode_hello(const void *p, size_t len, struct gbpf_agent_hello *out, char *why,
			    size_t why_size);

/**
 * Decode JOB: the controller's socket path into @p path (NUL-terminated,
 * @p path_size bytes at most, longer is an error).
 * @return 0 or -EINVAL with the field in why
 */
int gbpf_agent_decode_job(const void *p, size_t len, char *path, size_t path_size, char *why,
			  size_t why_size);

int gbpf_agent_encode_report(struct gbpf_agent_buf *b, uint32_t event, uint32_t dropped,
			     const char *kernel, const char *msg);
/** Decode REPORT (or PRINT when @p type says so: event 0, no kernel). */
int gbpf_agent_decode_report(uint16_t type, const void *p, size_t len,
			     struct gbpf_agent_report *out, char *why, size_t why_size);

struct gbpf_timeline_event;

/** Append one TIMELINE message: @p count events (at most GBPF_AGENT_MAX_TL_BATCH). */
int gbpf_agent_encode_timeline(struct gbpf_agent_buf *b, uint64_t dropped,
			       const struct gbpf_timeline_event *ev, size_t count);
/**
 * Decode TIMELINE into @p out (room for GBPF_AGENT_MAX_TL_BATCH events):
 * kinds and flags known, intervals not reversed (end >= begin), names
 * without NUL bytes and shorter than GBPF_TL_NAME_LEN.
 * @return 0 (count in *count, running drop total in *dropped) or -EINVAL
 *         with the field and event index in why
 */
int gbpf_agent_decode_timeline(const void *p, size_t len, uint64_t *dropped,
			       struct gbpf_timeline_event *out, size_t *count, char *why,
			       size_t why_size);

/**
 * Encode SETUP. Program i uses maps [map_base[i], map_base[i] + progs[i].map_cnt)
 * of @p maps.
 */
int gbpf_agent_encode_setup(struct gbpf_agent_buf *b, const char *backend,
			    const char *backend_path, uint32_t flags,
			    const struct gbpf_map_desc *maps, size_t map_cnt,
			    const struct gbpf_prog_desc *progs, const uint32_t *map_base,
			    size_t prog_cnt);
/**
 * Decode and validate SETUP: sizes and counts within limits, known flags
 * (GBPF_AGENT_F_KNOWN, never both engines), known map types and attach
 * kinds, initial bytes only for .data / .rodata maps and never more than
 * the value size, map ranges inside the map table, every wide load of a map
 * index inside its program's maps, no wide load cut in half.
 * On success out->progs[i].maps points into out->maps.
 * @return 0, -EINVAL (malformed; reason in why), -ENOMEM
 */
int gbpf_agent_decode_setup(const void *p, size_t len, struct gbpf_agent_setup *out, char *why,
			    size_t why_size);
void gbpf_agent_setup_free(struct gbpf_agent_setup *s);

/* ---- the shared map region ---------------------------------------------------- */

#define GBPF_SHM_MAGIC 0x53504247u /* "GBPS" */
#define GBPF_SHM_VERSION 1u
/** Alignment of every map block in the region (a cache line). */
#define GBPF_SHM_ALIGN 64u

/** Start of the region; an offset table of map_cnt entries follows. */
struct gbpf_shm_hdr {
	uint32_t magic;    /**< GBPF_SHM_MAGIC */
	uint32_t version;  /**< GBPF_SHM_VERSION */
	uint32_t map_cnt;
	uint32_t hdr_size; /**< bytes of this header and the table */
	uint64_t total_size;
	uint64_t reserved;
};
struct gbpf_shm_entry {
	uint64_t off;  /**< offset of the map block in the region */
	uint64_t size; /**< bytes of the map block */
};

/** A region created (controller) or attached (agent). */
struct gbpf_shm {
	int fd;
	void *base;
	size_t size;
	struct gbpf_map_instance *maps; /**< map_cnt instances into base */
	size_t map_cnt;
};

/**
 * Controller: create a sealed memfd holding every map of @p descs, map i
 * with @p slots[i] per-CPU slots, initialised (init_data copied).
 */
int gbpf_shm_create(struct gbpf_shm *shm, const struct gbpf_map_desc *descs, const uint32_t *slots,
		    size_t count, char *why, size_t why_size);
/**
 * Agent: map @p fd, check the header and offset table against the file
 * size, gbpf_map_mem_validate() each block and compare it with @p descs.
 * Takes ownership of fd.
 */
int gbpf_shm_attach(struct gbpf_shm *shm, int fd, const struct gbpf_map_desc *descs,
		    size_t count, char *why, size_t why_size);
/** Unmap and close (controller at exit; the agent keeps its mapping). */
void gbpf_shm_destroy(struct gbpf_shm *shm);

/**
 * Directory of the idle agents' sockets for this user: $XDG_RUNTIME_DIR/gbpf
 * when XDG_RUNTIME_DIR is set, else /tmp/gbpf-UID. @p create: make it (0700)
 * when missing. Either way it must be a directory (not a link) owned by the
 * effective uid with no group/other access, else -EPERM with the reason.
 * @return 0, or -errno with what and where in why
 */
int gbpf_agent_sock_dir(char *out, size_t out_size, int create, char *why, size_t why_size);
/** Socket of the idle agent of process @p pid: DIR/PID.sock. */
int gbpf_agent_listen_path(pid_t pid, char *out, size_t out_size, char *why, size_t why_size);
/** File where an attached agent names its controller's socket for its children: DIR/PID.job. */
int gbpf_agent_job_path(pid_t pid, char *out, size_t out_size, char *why, size_t why_size);

/** Path of libgbpf-agent.so: $GBPF_AGENT_LIB, the build tree, or the install dir. */
const char *gbpf_agent_library_path(void);

#endif /* GBPF_CORE_AGENT_PROTO_H */
