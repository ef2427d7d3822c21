/* SPDX-License-Identifier: BSD-3-Clause */
/* Whether a blocking call that a signal handler interrupted goes on, as the kernel's
 * -ERESTARTSYS does (signal(7), "Interruption of system calls"). */
#include "preload.h"

#include <errno.h>
#include <signal.h>

/* The ppoll that slept does not say which signal woke it, so this asks of every signal
 * the thread does not block whose handler is a function: all of them SA_RESTART. Where
 * some have it and some not, a call that one with it interrupted returns EINTR (the
 * kernel would have gone on); a program can see EINTR there in any case. */
static bool sig_restart_all(void)
{
	sigset_t blocked;
	if (pthread_sigmask(SIG_BLOCK, NULL, &blocked) != 0)
		return false;
	int saved = errno;
	bool all = true;
	for (int sig = 1; sig < NSIG && all; sig++) {
		struct sigaction sa;
		if (sigismember(&blocked, sig) == 1 || sigaction(sig, NULL, &sa) != 0)
			continue;
		bool caught = (sa.sa_flags & SA_SIGINFO) ||
			      (sa.sa_handler != SIG_DFL && sa.sa_handler != SIG_IGN);
		if (caught && !(sa.sa_flags & SA_RESTART))
			all = false;
	}
	errno = saved;
	return all;
}

bool sig_restart(int64_t timeout_ms)
{
	return errno == EINTR && timeout_ms < 0 && sig_restart_all();
}
