/* The JVM side: JVMTI environment, capabilities and callbacks, AsyncGetCallTrace lookup, jmethodID
 * preloading, Java thread registration and method names. JVMTI callback threads and dump time only. */
#ifndef VM_H
#define VM_H

#include <jvmti.h>

#include "sampler.h"

/* Hooks the profiler gives the VM layer. */
struct vm_hooks {
	void (*vm_init)(jvmtiEnv *jvmti, JNIEnv *jni); /* VMInit (agentpath) */
	void (*vm_death)(jvmtiEnv *jvmti, JNIEnv *jni);
	void (*thread_start)(int tid);                 /* a Java thread began (tid registered) */
};

/* Gets the JVMTI env, adds capabilities, sets callbacks, enables ClassLoad/ClassPrepare/Thread events.
 * live = attach time (the VM is running: also preloads jmethodIDs of every loaded class and registers
 * existing Java threads). Idempotent. 0 or -1 with a message logged. */
int vm_init(JavaVM *vm, int live, const struct vm_hooks *hooks);

jvmtiEnv *vm_jvmti(void);
/* AsyncGetCallTrace from libjvm, or NULL. */
sampler_agct_fn vm_agct(void);
/* A JNIEnv for the calling thread (outside signal handlers only), or NULL. */
JNIEnv *vm_jni(void);

/* Registers every live Java thread's tid, JNIEnv and name (at start and attach; JNIEnv found through
 * java.lang.Thread.eetop and HotSpot's vmStructs). Returns how many got a JNIEnv. */
int vm_register_java_threads(void);
/* Refreshes names of live Java threads (renames after start). */
void vm_refresh_thread_names(void);

/* Writes the display name of a method into out per the FRAMES_* flags: "java/lang/String.split".
 * Cached; dump time only. Returns out. */
const char *vm_method_name(jmethodID m, unsigned flags, char *out, size_t outlen);
/* Forgets cached method names (new session). */
void vm_forget_names(void);

#endif
