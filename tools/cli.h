/* SPDX-License-Identifier: MIT */
/* tools/cli.h - what the subcommands of the gbpf command share. */
#ifndef GBPF_TOOLS_CLI_H
#define GBPF_TOOLS_CLI_H

#include <stdbool.h>
#include <stddef.h>

#include "json_writer.h"

/** Options common to every subcommand, and the JSON writer of stdout. */
struct gbpf_cli {
	const char *argv0;
	bool json;
	bool pretty;
	bool debug;
	struct json_writer jw;
	/* Library diagnostics collected while in JSON mode, reported with an error. */
	char diag[4096];
	size_t diag_len;
};

extern struct gbpf_cli cli;

/** One subcommand: name and handler (argv[0] is the subcommand's own name). */
struct cli_cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
};

/**
 * Dispatch argv[0] against @p cmds with unambiguous prefix matching, as
 * bpftool does; no argument runs @p help. Returns the handler's result.
 */
int cli_dispatch(const struct cli_cmd *cmds, int argc, char **argv, int (*help)(int, char **));

/** Report an error ("Error: ..." or {"error": "..."}); returns -1. */
int cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/** Report a failed library call: what was attempted, the error code, and its diagnostics. */
int cli_error_code(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/** Read a whole file; returns malloc'ed bytes (NUL-terminated) or NULL with errno. */
char *cli_read_file(const char *path, size_t *size);

/* Subcommand families, one file each. */
int cmd_backends(int argc, char **argv);
int cmd_prog(int argc, char **argv);
int cmd_asm(int argc, char **argv);
int cmd_disasm(int argc, char **argv);
int cmd_conformance(int argc, char **argv);
int cmd_verify(int argc, char **argv);
int cmd_inject(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_attach(int argc, char **argv);
int cmd_detach(int argc, char **argv);

#endif
