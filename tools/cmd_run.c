/* SPDX-License-Identifier: MIT */
/*
 * gbpf run [-i SECONDS] [-c COUNT] [--backend B] [--per-process] [--allow-app-writes]
 *          [--engine ptx|sanitizer|auto] OBJ... -- CMD ARGS
 * gbpf run --idle [--backend B] [--allow-app-writes] [--engine E] -- CMD ARGS
 *
 * The controller: opens and verifies every program, builds the shared map
 * region, starts CMD with libgbpf-agent.so preloaded, then serves the
 * agents and prints what the probes produce (tools/run_loop.c,
 * tools/run_print.c). docs/PROCESS_MODEL.md has the whole picture.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gbpf/verifier.h>

#include "cli.h"
#include "run_internal.h"

static int run_usage(void)
{
	fprintf(stderr,
		"Usage: %s run [OPTIONS] OBJ... -- CMD [ARGS]\n"
		"       %s run --idle [--backend B] [--allow-app-writes] [--engine E] -- CMD [ARGS]\n"
		"  --idle       run CMD (in gbpf's place: same pid) with the agent idle, for\n"
		"               gbpf attach PID OBJ... / gbpf detach PID later; with --idle,\n"
		"               --engine is the engine of attaches that name none, and only\n"
		"               --allow-app-writes lets an attach's probes replace app values\n"
		"  --per-process  each process of CMD's tree counts into its own maps: the sum\n"
		"               is printed, then every process's own (as gbpf attach --per-process)\n"
		"  -i SECONDS   print maps every SECONDS (fractions allowed)\n"
		"  -c COUNT     print at most COUNT intervals\n"
		"  -j, --json   one JSON object per line (bpftrace -f json shapes)\n"
		"  --backend B  backend to instrument with (default: GBPF_BACKEND or detection)\n"
		"  --thread-slots N  GPU threads a per-GPU-thread array holds (default 1048576,\n"
		"               at most 16777216;\n"
		"               launches with more threads are reported)\n"
		"  --allow-app-writes  let gpu/mem probes replace the value the application\n"
		"               stores (ctx->mem_value); refused by the verifier otherwise\n"
		"  --engine E   cuda: ptx (PTX injection only), sanitizer (Compute Sanitizer\n"
		"               patching only) or auto (default: PTX where the kernel has it)\n"
		"GPU timeline (asynchronous work the backend reports):\n"
		"  --trace FILE.json  write a Chrome/Perfetto trace (open in ui.perfetto.dev)\n"
		"  --otlp-traces URL  POST the timeline as OTLP/HTTP JSON spans at exit\n"
		"                     (http://HOST:4318/v1/traces)\n"
		"  --no-summary       do not print the per-stream / per-sync summary at exit\n"
		"Metrics (map contents; docs/OUTPUT.md):\n"
		"  --prom [HOST:]PORT serve Prometheus text on http://HOST:PORT/metrics\n"
		"                     (HOST defaults to 127.0.0.1)\n"
		"  --prom-file PATH   write PATH for node_exporter's textfile collector\n"
		"  --otlp URL         POST OTLP/HTTP JSON metrics (http://HOST:4318/v1/metrics)\n"
		"  --export-interval SECONDS  period of --prom-file and --otlp (default: -i,\n"
		"                     else 15); both are also written when CMD exits\n"
		"Maps are printed at every interval and when CMD exits; ring buffer records\n"
		"as they arrive. gbpf exits with CMD's exit status.\n",
		cli.argv0, cli.argv0);
	return -1;
}

int run_open_objects(struct run_ctx *ctx, char **paths, size_t n)
{
	size_t i, j, total = 0;

	ctx->objs = calloc(n, sizeof(*ctx->objs));
	if (!ctx->objs)
		return cli_error("out of memory");
	for (i = 0; i < n; i++) {
		char errbuf[512] = "";
		GBPF_OPTS(gbpf_object_open_opts, oo, .errbuf = errbuf, .errbuf_size = sizeof(errbuf));

		ctx->objs[i] = gbpf_object__open_file(paths[i], &oo);
		if (!ctx->objs[i])
			return cli_error("%s: %s", paths[i], errbuf[0] ? errbuf : strerror(errno));
		ctx->obj_cnt++;
		total += gbpf_object__map_cnt(ctx->objs[i]);
	}
	ctx->maps = calloc(total ? total : 1, sizeof(*ctx->maps));
	if (!ctx->maps)
		return cli_error("out of memory");
	for (i = 0; i < n; i++)
		for (j = 0; j < gbpf_object__map_cnt(ctx->objs[i]); j++)
			ctx->maps[ctx->map_cnt++] = *gbpf_object__map(ctx->objs[i], j);
	return 0;
}

/* Nothing runs unverified: a rejected program is named, explained and not sent. */
int run_verify_programs(struct run_ctx *ctx)
{
	size_t i, total = 0, base = 0;

	for (i = 0; i < ctx->obj_cnt; i++)
		total += gbpf_object__prog_cnt(ctx->objs[i]);
	ctx->progs = calloc(total ? total : 1, sizeof(*ctx->progs));
	ctx->map_base = calloc(total ? total : 1, sizeof(*ctx->map_base));
	if (!ctx->progs || !ctx->map_base)
		return cli_error("out of memory");
	for (i = 0; i < ctx->obj_cnt; i++) {
		const struct gbpf_prog_desc *p;

		gbpf_object__for_each_prog(p, ctx->objs[i]) {
			struct gbpf_verify_result res = {.sz = sizeof(res)};
			/* The agent derives the same flags from the setup: one verdict on both sides. */
			GBPF_OPTS(gbpf_verify_opts, vo, .log_level = GBPF_VERIFY_LOG_ERROR,
				  .flags = gbpf_agent_verify_flags(ctx->agent_flags));
			int err = gbpf_verify(p, &vo, &res);

			if (err || res.verdict != GBPF_VERDICT_ACCEPT) {
				fprintf(stderr,
					"gbpf %s: %s: section '%s': program '%s': rejected by the "
					"verifier at instruction %lld: %s%s; not attached\n", ctx->who,
					gbpf_object__name(ctx->objs[i]), p->section ? p->section : "?",
					p->name, (long long)res.error_insn,
					res.reason[0] ? res.reason : "rejected",
					(ctx->agent_flags & GBPF_AGENT_F_ALLOW_APP_WRITES)
						? ""
						: gbpf_agent_app_write_hint(p, res.reason));
				ctx->rejected++;
				continue;
			}
			if (p->attach.kind == GBPF_ATTACH_NONE)
				fprintf(stderr,
					"gbpf %s: %s: program '%s' (section '%s') has no attach point; "
					"it is sent but never runs\n", ctx->who,
					gbpf_object__name(ctx->objs[i]), p->name,
					p->section ? p->section : "?");
			ctx->progs[ctx->prog_cnt] = *p;
			ctx->map_base[ctx->prog_cnt] = (uint32_t)base;
			ctx->prog_cnt++;
		}
		base += gbpf_object__map_cnt(ctx->objs[i]);
	}
	return 0;
}

int run_shared_option(struct run_ctx *ctx, int opt, const char *arg)
{
	char *end;

	switch (opt) {
	case 'i':
		ctx->interval_s = strtod(arg, &end);
		if (*end || !(ctx->interval_s > 0) || ctx->interval_s > 86400)
			return cli_error("-i %s: not a number of seconds in (0, 86400]", arg);
		return 1;
	case 'c':
		ctx->count = strtol(arg, &end, 10);
		if (*end || ctx->count < 1)
			return cli_error("-c %s: not a positive count", arg);
		return 1;
	case 'b': ctx->backend_name = arg; return 1;
	case 'j': cli.json = true; return 1;
	case 'W': ctx->agent_flags |= GBPF_AGENT_F_ALLOW_APP_WRITES; return 1;
	case 'G':
		ctx->agent_flags &= ~(GBPF_AGENT_F_ENGINE_PTX | GBPF_AGENT_F_ENGINE_SANITIZER);
		if (!strcmp(arg, "ptx"))
			ctx->agent_flags |= GBPF_AGENT_F_ENGINE_PTX;
		else if (!strcmp(arg, "sanitizer"))
			ctx->agent_flags |= GBPF_AGENT_F_ENGINE_SANITIZER;
		else if (strcmp(arg, "auto"))
			return cli_error("--engine %s: not an engine (ptx, sanitizer or auto)", arg);
		return 1;
	default:
		return 0;
	}
}

/*
 * The backend is chosen here, once, so that every agent uses the same one
 * and so that its plugin file can be preloaded when it intercepts a runtime.
 * Not finding one is reported; the application runs anyway.
 */
void run_choose_backend(struct run_ctx *ctx)
{
	char why[512] = "";
	int err = gbpf_registry_new(NULL, &ctx->reg);

	if (!err)
		err = gbpf_registry_select(ctx->reg, ctx->backend_name, &ctx->plugin, why,
					   sizeof(why));
	if (err) {
		fprintf(stderr, "gbpf %s: backend%s%s: %s; the application runs uninstrumented\n", ctx->who,
			ctx->backend_name ? " " : "", ctx->backend_name ? ctx->backend_name : "",
			why[0] ? why : strerror(-err));
		ctx->plugin = NULL;
		return;
	}
	ctx->backend_name = gbpf_plugin__name(ctx->plugin);
	ctx->plugin_path = gbpf_plugin__path(ctx->plugin);
	ctx->intercept = gbpf_plugin__caps(ctx->plugin) &&
			 (gbpf_plugin__caps(ctx->plugin)->flags & GBPF_CAP_INTERCEPT);
}

/* Per-CPU copies: one per CPU, or per SM of the backend's device (docs/MAPS.md). */
static uint32_t slots_for(struct run_ctx *ctx, const struct gbpf_map_desc *d)
{
	const struct gbpf_device_info *devs;
	const char *why;
	uint32_t cnt = 0, units;
	long cpus;

	switch (d->type) {
	case GBPF_MAP_TYPE_PERCPU_ARRAY:
	case GBPF_MAP_TYPE_PERCPU_HASH:
	case GBPF_MAP_TYPE_PERF_EVENT_ARRAY:
		/*
		 * Host probes use CPU slots, device probes SM slots: cover both, and
		 * the SMs of every device the application may launch on (device code
		 * clamps its SM id to the slots, so a device with more SMs than the
		 * map has slots would crowd its extra SMs into the last one).
		 */
		cpus = sysconf(_SC_NPROCESSORS_CONF);
		units = cpus > 0 ? (uint32_t)cpus : 1;
		if (ctx->plugin && !gbpf_plugin__devices(ctx->plugin, &devs, &cnt, &why))
			for (uint32_t i = 0; i < cnt; i++)
				units = devs[i].compute_units > units ? devs[i].compute_units : units;
		return units;
	case GBPF_MAP_TYPE_PERGPUTHREAD_ARRAY: {
		/*
		 * Launches differ in size and are not known yet: the region holds
		 * --thread-slots threads (memfd pages stay unallocated until a
		 * slot is written), at most 256 MiB per map; the agent reports any
		 * launch with more threads.
		 */
		uint64_t per_thread = (uint64_t)(d->max_entries ? d->max_entries : 1) *
				      ((d->value_size + 7u) & ~7u);
		uint64_t most = per_thread ? (256ull << 20) / per_thread : 1;
		uint32_t want = ctx->thread_slots ? ctx->thread_slots : (1u << 20);

		return most < want ? (uint32_t)(most ? most : 1) : want;
	}
	default:
		return 1;
	}
}

int run_build_region(struct run_ctx *ctx)
{
	uint32_t *slots = calloc(ctx->map_cnt ? ctx->map_cnt : 1, sizeof(*slots));
	char why[512] = "";
	size_t i;
	int err;

	ctx->hdr_copy = calloc(ctx->map_cnt ? ctx->map_cnt : 1, sizeof(*ctx->hdr_copy));
	ctx->lost_seen = calloc(ctx->map_cnt ? ctx->map_cnt : 1, sizeof(*ctx->lost_seen));
	if (!slots || !ctx->hdr_copy || !ctx->lost_seen) {
		free(slots);
		return cli_error("out of memory");
	}
	for (i = 0; i < ctx->map_cnt; i++)
		slots[i] = slots_for(ctx, &ctx->maps[i]);
	err = gbpf_shm_create(&ctx->shm, ctx->maps, slots, ctx->map_cnt, why, sizeof(why));
	ctx->slots = slots;
	if (err)
		return cli_error("map memory: %s", why);
	for (i = 0; i < ctx->map_cnt; i++)
		memcpy(&ctx->hdr_copy[i], ctx->shm.maps[i].mem, sizeof(struct gbpf_map_hdr));
	return 0;
}

bool run_map_intact(struct run_ctx *ctx, size_t i)
{
	/* Everything before the atomic counters is written once at creation. */
	return memcmp(ctx->shm.maps[i].mem, &ctx->hdr_copy[i],
		      offsetof(struct gbpf_map_hdr, count)) == 0;
}

int run_make_socket(struct run_ctx *ctx)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	const char *tmp = getenv("TMPDIR");

	if (!tmp || !tmp[0] || strlen(tmp) > 100)
		tmp = "/tmp";
	snprintf(ctx->dir, sizeof(ctx->dir), "%s/gbpf-run-XXXXXX", tmp);
	/* mkdtemp makes the directory 0700: only our uid can reach the socket. */
	if (!mkdtemp(ctx->dir)) {
		ctx->dir[0] = 0;
		return cli_error("cannot create a socket directory in %s: %s", tmp, strerror(errno));
	}
	snprintf(ctx->sock, sizeof(ctx->sock), "%s/ctl.sock", ctx->dir);
	if (strlen(ctx->sock) >= sizeof(sa.sun_path))
		return cli_error("socket path %s is too long", ctx->sock);
	memcpy(sa.sun_path, ctx->sock, strlen(ctx->sock) + 1);
	ctx->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (ctx->listen_fd < 0 || bind(ctx->listen_fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    chmod(ctx->sock, 0600) || listen(ctx->listen_fd, 64))
		return cli_error("socket %s: %s", ctx->sock, strerror(errno));
	return 0;
}

void run_cleanup(struct run_ctx *ctx)
{
	size_t i;

	run_export_stop(ctx); /* its thread reads the maps: stop it before they go */
	for (i = 0; i < ctx->agent_cnt; i++) {
		close(ctx->agents[i].fd);
		free(ctx->agents[i].buf);
	}
	if (ctx->listen_fd >= 0)
		close(ctx->listen_fd);
	if (ctx->sock[0])
		unlink(ctx->sock);
	if (ctx->dir[0])
		rmdir(ctx->dir);
	gbpf_shm_destroy(&ctx->shm);
	run_procs_free(ctx);
	free(ctx->slots);
	for (i = 0; i < ctx->obj_cnt; i++)
		gbpf_object__close(ctx->objs[i]);
	if (ctx->reg)
		gbpf_registry_free(ctx->reg);
	free(ctx->objs);
	free(ctx->maps);
	free(ctx->progs);
	free(ctx->map_base);
	free(ctx->hdr_copy);
	free(ctx->lost_seen);
	free(ctx->procs);
	gbpf_tl_free(&ctx->tl);
}

/*
 * --idle: CMD replaces gbpf (same pid, for `gbpf attach PID`) with the
 * agent preloaded and listening, the backend chosen here prepared by the
 * agent at start (and its plugin preloaded when it intercepts a runtime).
 */
static int run_idle(struct run_ctx *ctx)
{
	const char *agent = gbpf_agent_library_path();
	const char *old = getenv("LD_PRELOAD");
	char preload[4096], flags[16];

	if (access(agent, R_OK))
		return cli_error("agent library %s: %s (set %s)", agent, strerror(errno),
				 GBPF_AGENT_ENV_LIB);
	run_choose_backend(ctx);
	if (snprintf(preload, sizeof(preload), "%s%s%s%s%s", agent,
		     ctx->intercept ? ":" : "", ctx->intercept ? ctx->plugin_path : "",
		     old && old[0] ? ":" : "", old && old[0] ? old : "") >= (int)sizeof(preload))
		return cli_error("LD_PRELOAD would be longer than %zu bytes", sizeof(preload));
	if (setenv("LD_PRELOAD", preload, 1) || setenv(GBPF_AGENT_ENV_LISTEN, "1", 1) ||
	    unsetenv(GBPF_AGENT_ENV_SOCK))
		return cli_error("environment: %s", strerror(errno));
	if (ctx->plugin && (setenv(GBPF_AGENT_ENV_BACKEND, ctx->backend_name, 1) ||
			    setenv(GBPF_AGENT_ENV_BACKEND_PATH, ctx->plugin_path, 1)))
		return cli_error("environment: %s", strerror(errno));
	/*
	 * The start's options stay with the process: the agent applies them to
	 * every attach (docs/PROCESS_MODEL.md), and the cuda plugin's
	 * constructor reads the engine before any context exists (no Compute
	 * Sanitizer subscription, and its cost, under ptx).
	 */
	snprintf(flags, sizeof(flags), "%u", ctx->agent_flags);
	if (setenv(GBPF_AGENT_ENV_IDLE_FLAGS, flags, 1) ||
	    (ctx->agent_flags & (GBPF_AGENT_F_ENGINE_PTX | GBPF_AGENT_F_ENGINE_SANITIZER) &&
	     setenv("GBPF_CUDA_ENGINE",
		    ctx->agent_flags & GBPF_AGENT_F_ENGINE_PTX ? "ptx" : "sanitizer", 1)))
		return cli_error("environment: %s", strerror(errno));
	fflush(NULL);
	execvp(ctx->cmd[0], ctx->cmd);
	return cli_error("cannot run %s: %s", ctx->cmd[0], strerror(errno));
}

int cmd_run(int argc, char **argv)
{
	static const struct option opts[] = {
		{"interval", required_argument, NULL, 'i'},
		{"count", required_argument, NULL, 'c'},
		{"backend", required_argument, NULL, 'b'},
		{"json", no_argument, NULL, 'j'},
		{"trace", required_argument, NULL, 'T'},
		{"no-summary", no_argument, NULL, 'S'},
		{"prom", required_argument, NULL, 'P'},
		{"prom-file", required_argument, NULL, 'F'},
		{"otlp", required_argument, NULL, 'O'},
		{"otlp-traces", required_argument, NULL, 'R'},
		{"export-interval", required_argument, NULL, 'E'},
		{"thread-slots", required_argument, NULL, 'N'},
		{"idle", no_argument, NULL, 'I'},
		{"allow-app-writes", no_argument, NULL, 'W'},
		{"engine", required_argument, NULL, 'G'},
		{"per-process", no_argument, NULL, 'p'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	static struct run_ctx ctx; /* large (agent table): not on the stack */
	int opt, dash = -1, i, ret = -1;
	bool idle = false;
	char *end;

	memset(&ctx, 0, sizeof(ctx));
	ctx.who = "run";
	gbpf_tl_init(&ctx.tl, 0);
	ctx.listen_fd = -1;
	ctx.shm.fd = -1;
	ctx.count = -1;
	/* Everything after "--" is the application's, options included. */
	for (i = 1; i < argc; i++)
		if (strcmp(argv[i], "--") == 0) {
			dash = i;
			break;
		}
	for (i = 1; i < (dash < 0 ? argc : dash); i++)
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			run_usage();
			return 0;
		}
	if (dash < 0 || dash + 1 >= argc)
		return run_usage();
	while ((opt = getopt_long(dash, argv, "i:c:b:j", opts, NULL)) >= 0) {
		int shared = run_shared_option(&ctx, opt, optarg);

		if (shared < 0)
			return -1;
		if (shared)
			continue;
		switch (opt) {
		case 'T': ctx.trace_path = optarg; break;
		case 'S': ctx.no_summary = true; break;
		case 'P': ctx.prom_addr = optarg; break;
		case 'F': ctx.prom_file = optarg; break;
		case 'O': ctx.otlp_url = optarg; break;
		case 'R': ctx.otlp_traces_url = optarg; break;
		case 'E':
			ctx.export_s = strtod(optarg, &end);
			if (*end || !(ctx.export_s > 0) || ctx.export_s > 86400)
				return cli_error("--export-interval %s: not a number of seconds in "
						 "(0, 86400]", optarg);
			break;
		case 'N': {
			unsigned long v = strtoul(optarg, &end, 10);

			if (*end || v < 1 || v > GBPF_MAP_MAX_SLOTS)
				return cli_error("--thread-slots %s: not a thread count in [1, %u]", optarg,
						 GBPF_MAP_MAX_SLOTS);
			ctx.thread_slots = (uint32_t)v;
			break;
		}
		case 'I': idle = true; break;
		case 'p': ctx.per_process = true; break;
		case 'h': run_usage(); return 0;
		default: return run_usage();
		}
	}
	if (idle) {
		if (optind < dash)
			return cli_error("--idle starts CMD without programs: attach them later with "
					 "gbpf attach PID OBJ...");
		if (ctx.per_process)
			return cli_error("--idle with --per-process: give --per-process to gbpf attach");
		ctx.cmd = &argv[dash + 1];
		return run_idle(&ctx);
	}
	if (optind >= dash)
		return cli_error("no object given (gbpf run OBJ... -- CMD)");
	/*
	 * The aggregate is rebuilt from the process regions when maps print;
	 * the exporters read ctx->shm on their own schedule (--prom on its own
	 * thread) and would see it half rebuilt.
	 */
	if (ctx.per_process && (ctx.prom_addr || ctx.prom_file || ctx.otlp_url))
		return cli_error("--per-process cannot be combined with --prom, --prom-file or --otlp "
				 "(they export the job's sum: run without --per-process)");
	ctx.cmd = &argv[dash + 1];
	/* Files and collectors follow -i, else a usual scrape period. */
	if (!ctx.export_s)
		ctx.export_s = ctx.interval_s > 0 ? ctx.interval_s : 15;
	if (run_open_objects(&ctx, &argv[optind], (size_t)(dash - optind)) || run_verify_programs(&ctx))
		goto out;
	run_choose_backend(&ctx);
	if (run_build_region(&ctx) || run_make_socket(&ctx) || run_export_start(&ctx))
		goto out;
	if (run_spawn(&ctx))
		goto out;
	ret = run_loop(&ctx);
out:
	run_cleanup(&ctx);
	if (ret < 0)
		return ret;
	/* gbpf's status is the application's: as a shell reports it. */
	if (WIFEXITED(ctx.child_status))
		return WEXITSTATUS(ctx.child_status);
	if (WIFSIGNALED(ctx.child_status))
		return 128 + WTERMSIG(ctx.child_status);
	return 1;
}
