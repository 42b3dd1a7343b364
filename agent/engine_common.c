/* Shared engine plumbing: the signal handler installation and the thread scanner of per-thread
 * engines. Runs at start/stop and on the scanner thread; never in a signal handler. */
#include "engine.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <time.h>

#include "sampler.h"
#include "threads.h"

static pthread_t scanner;
static int scanner_running;
static _Atomic int scanner_stop_flag;
static void (*scanner_cb)(int, void *);

int engine_install_handler(int signo)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = sampler_signal_handler;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(signo, &sa, NULL) != 0)
		return -errno;
	return 0;
}

static void *scanner_main(void *arg)
{
	(void)arg;
	/* the scanner must never be sampled itself into a loop of signals: block the sampling signals */
	sigset_t set;
	sigfillset(&set);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	while (!atomic_load(&scanner_stop_flag)) {
		threads_scan(scanner_cb, NULL);
		scanner_cb(0, NULL);
		struct timespec ts = {0, 200 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
	return NULL;
}

int engine_scanner_start(void (*on_thread)(int tid, void *arg))
{
	scanner_cb = on_thread;
	threads_scan(on_thread, NULL);
	on_thread(0, NULL);
	atomic_store(&scanner_stop_flag, 0);
	int rc = pthread_create(&scanner, NULL, scanner_main, NULL);
	if (rc != 0)
		return -rc;
	pthread_setname_np(scanner, "flameagent scan");
	scanner_running = 1;
	return 0;
}

void engine_scanner_stop(void)
{
	if (!scanner_running)
		return;
	atomic_store(&scanner_stop_flag, 1);
	pthread_join(scanner, NULL);
	scanner_running = 0;
}
