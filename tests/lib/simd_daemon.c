/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bus/simd_proto.h"
#include "simd_daemon.h"
#include "wall_clock.h"

bool simd_stalled(struct simd_progress *pr, uint64_t got)
{
	uint64_t now = wall_ns();
	if (!pr->at || got != pr->got) {
		pr->got = got;
		pr->at = now;
		return false;
	}
	return now - pr->at > 5000000000ull;
}

void simd_die_with_parent(void)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
}

void simd_daemon_path(char *out, size_t cap)
{
	const char *given = getenv("MYRIO_TEST_SIMD");
	if (given && given[0]) {
		snprintf(out, cap, "%s", given);
		return;
	}
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		n = 0;
	self[n] = '\0';
	snprintf(out, cap, "%s/../myrio-simd", dirname(self));
}

int simd_wait_socket(const char *path, pid_t pid)
{
	for (int i = 0; i < 500; i++) {
		int s, st;
		if (access(path, F_OK) == 0 && simd_connect(path, &s) == 0) {
			close(s);
			return 0;
		}
		if (waitpid(pid, &st, WNOHANG) == pid)
			return -ECHILD;
		usleep(10000);
	}
	return -ETIMEDOUT;
}

int simd_daemon_start(struct simd_daemon_proc *d, const char *tag, const char *const *args)
{
	char exe[PATH_MAX + 32];
	const char *argv[32];
	unsigned n = 0;
	simd_daemon_path(exe, sizeof(exe));
	snprintf(d->sock, sizeof(d->sock), "/tmp/myrio-simd-%s-%d.sock", tag, (int)getpid());
	argv[n++] = "myrio-simd";
	argv[n++] = "--socket";
	argv[n++] = d->sock;
	for (; args && *args && n < 31; args++)
		argv[n++] = *args;
	argv[n] = NULL;
	d->pid = fork();
	if (d->pid == 0) {
		simd_die_with_parent();
		execv(exe, (char *const *)argv);
		_exit(127);
	}
	if (d->pid < 0)
		return -errno;
	int rc = simd_wait_socket(d->sock, d->pid);
	if (rc < 0) {
		kill(d->pid, SIGKILL);
		waitpid(d->pid, NULL, 0);
		d->pid = 0;
	}
	return rc;
}

int simd_daemon_stop(struct simd_daemon_proc *d)
{
	int st = 0;
	if (d->pid <= 0)
		return -ESRCH;
	kill(d->pid, SIGTERM);
	waitpid(d->pid, &st, 0);
	d->pid = 0;
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0 || access(d->sock, F_OK) == 0) {
		unlink(d->sock);
		return -EIO;
	}
	return 0;
}

int simd_daemon_alive(const struct simd_daemon_proc *d)
{
	int st;
	return d->pid > 0 && waitpid(d->pid, &st, WNOHANG) == 0;
}
