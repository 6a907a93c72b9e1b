/* SPDX-License-Identifier: MIT */
/*
 * Where idle agents listen (`gbpf attach`): one owner-only directory per
 * user, one socket per process. Both sides compute the same path; the
 * directory's owner and mode are checked every time because a directory
 * under /tmp could have been created by another user first, and a socket in
 * a directory others can write could be replaced by theirs.
 */
#include "core/agent/proto.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int gbpf_agent_sock_dir(char *out, size_t out_size, int create, char *why, size_t why_size)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	struct stat st;
	int n;

	if (xdg && xdg[0] == '/' && strlen(xdg) < 100)
		n = snprintf(out, out_size, "%s/gbpf", xdg);
	else
		n = snprintf(out, out_size, "/tmp/gbpf-%u", (unsigned)geteuid());
	if (n < 0 || (size_t)n >= out_size) {
		snprintf(why, why_size, "agent socket directory: path too long");
		return -ENAMETOOLONG;
	}
	if (create && mkdir(out, 0700) && errno != EEXIST) {
		int err = -errno;

		snprintf(why, why_size, "agent socket directory %s: mkdir: %s", out, strerror(errno));
		return err;
	}
	if (lstat(out, &st)) {
		int err = -errno;

		snprintf(why, why_size, "agent socket directory %s: %s", out, strerror(errno));
		return err;
	}
	if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077)) {
		snprintf(why, why_size,
			 "agent socket directory %s: not a directory of uid %u with mode 0700 "
			 "(owner %u, mode %04o): refused",
			 out, (unsigned)geteuid(), (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777));
		return -EPERM;
	}
	return 0;
}

static int file_in_dir(pid_t pid, const char *suffix, char *out, size_t out_size, char *why,
		       size_t why_size)
{
	char dir[160];
	int err = gbpf_agent_sock_dir(dir, sizeof(dir), 0, why, why_size);
	int n;

	if (err)
		return err;
	n = snprintf(out, out_size, "%s/%d.%s", dir, (int)pid, suffix);
	if (n < 0 || (size_t)n >= out_size || (size_t)n >= 108 /* sun_path */) {
		snprintf(why, why_size, "%s/%d.%s: path too long for a unix socket", dir, (int)pid,
			 suffix);
		return -ENAMETOOLONG;
	}
	return 0;
}

int gbpf_agent_listen_path(pid_t pid, char *out, size_t out_size, char *why, size_t why_size)
{
	return file_in_dir(pid, "sock", out, out_size, why, why_size);
}

int gbpf_agent_job_path(pid_t pid, char *out, size_t out_size, char *why, size_t why_size)
{
	return file_in_dir(pid, "job", out, out_size, why, why_size);
}

const char *gbpf_agent_msg_name(uint32_t type)
{
	static const char *const names[] = {
		[GBPF_AGENT_MSG_HELLO] = "hello",   [GBPF_AGENT_MSG_SETUP] = "setup",
		[GBPF_AGENT_MSG_REPORT] = "report", [GBPF_AGENT_MSG_PRINT] = "print",
		[GBPF_AGENT_MSG_TIMELINE] = "timeline", [GBPF_AGENT_MSG_JOB] = "job",
		[GBPF_AGENT_MSG_DETACH] = "detach", [GBPF_AGENT_MSG_WAKE] = "wake",
	};

	return type && type <= GBPF_AGENT_MSG_MAX ? names[type] : "unknown";
}

int gbpf_agent_msg_from_agent(uint32_t type)
{
	return type == GBPF_AGENT_MSG_HELLO || type == GBPF_AGENT_MSG_REPORT ||
	       type == GBPF_AGENT_MSG_PRINT || type == GBPF_AGENT_MSG_TIMELINE ||
	       type == GBPF_AGENT_MSG_WAKE;
}
