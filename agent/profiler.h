/* The session state machine (idle / running): picks the engine, owns storage, resolves names and calls
 * the writers. Runs on JVMTI callback threads and the attach thread; never in a signal handler. */
#ifndef PROFILER_H
#define PROFILER_H

#include <jvmti.h>
#include <stddef.h>

#include "options.h"

/* Carries out one command (options parsed already). Returns FA_RC_OK or an FA_RC_* code with the message
 * already logged. at_load: called from Agent_OnLoad (start waits for VMInit). */
int profiler_command(const struct options *o, int at_load);

/* VM lifecycle hooks (from vm.c). */
void profiler_vm_init(jvmtiEnv *jvmti, JNIEnv *jni);
void profiler_vm_death(jvmtiEnv *jvmti, JNIEnv *jni);
void profiler_thread_start(int tid);

#endif
