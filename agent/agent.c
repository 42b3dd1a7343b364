/* The agent's entry points: Agent_OnLoad / Agent_OnAttach / Agent_OnUnload parse the option string and
 * hand the command to the profiler. JVM load/attach threads. */
#include <jvmti.h>
#include <stdio.h>
#include <string.h>

#include "flameagent.h"
#include "log.h"
#include "options.h"
#include "profiler.h"
#include "vm.h"

static const struct vm_hooks hooks = {
	.vm_init = profiler_vm_init,
	.vm_death = profiler_vm_death,
	.thread_start = profiler_thread_start,
};

static int parse(const char *str, struct options *o)
{
	char err[512] = "";
	options_init(o);
	if (options_parse(o, str, err, sizeof(err)) != 0) {
		/* parsing stopped at the bad item: find log= anywhere so the message reaches its reader
		 * (flameattach shows that file); the JVM's stderr gets it too */
		char log[OPTIONS_MAX_STR] = "";
		for (const char *p = str; p && (p = strstr(p, "log=")) != NULL; p += 4) {
			if (p == str || p[-1] == ',') {
				size_t n = strcspn(p + 4, ",");
				if (n < sizeof(log))
					snprintf(log, sizeof(log), "%.*s", (int)n, p + 4);
			}
		}
		log_configure(log, LOG_INFO, 0);
		log_error("%s", err);
		if (log[0])
			fprintf(stderr, "flameagent: %s\n", err);
		return -1;
	}
	log_configure(o->log, o->loglevel, o->quiet);
	return 0;
}

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved)
{
	(void)reserved;
	struct options o;
	if (parse(options, &o) != 0)
		return JNI_ERR; /* the JVM refuses to start; the message above says why */
	if (vm_init(vm, 0, &hooks) != 0)
		return JNI_ERR;
	if (profiler_command(&o, 1) != FA_RC_OK)
		return JNI_ERR;
	return JNI_OK;
}

JNIEXPORT jint JNICALL Agent_OnAttach(JavaVM *vm, char *options, void *reserved)
{
	(void)reserved;
	struct options o;
	if (parse(options, &o) != 0)
		return FA_RC_BAD_OPTION; /* the JVM runs on */
	if (vm_init(vm, 1, &hooks) != 0)
		return FA_RC_ENGINE;
	return profiler_command(&o, 0);
}

JNIEXPORT void JNICALL Agent_OnUnload(JavaVM *vm)
{
	(void)vm;
}
