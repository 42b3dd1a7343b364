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
/* Attaches the calling native thread to the JVM as a daemon (so it may use JVMTI), or detaches it. */
int vm_attach_current_thread(const char *name);
void vm_detach_current_thread(void);

/* Registers every live Java thread's tid, JNIEnv and name (at start and attach; JNIEnv found through
 * java.lang.Thread.eetop and HotSpot's vmStructs). Returns how many got a JNIEnv. */
int vm_register_java_threads(void);
/* Refreshes names of live Java threads (renames after start). */
void vm_refresh_thread_names(void);

/* Hooks for the JVMTI-event engines (alloc, lock); NULL clears. Enabling adds the capability and
 * turns the event on; returns 0 or -1 with a message logged. */
typedef void (*vm_alloc_hook)(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jobject object, jclass klass,
			      jlong size);
typedef void (*vm_monitor_hook)(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jobject object);
int vm_enable_alloc(vm_alloc_hook hook, jlong interval_bytes);
int vm_enable_monitor(vm_monitor_hook enter, vm_monitor_hook entered);

/* The calling thread's Java stack as raw frames, leaf first, at most max; 0 if none. JVMTI callbacks
 * and native methods only. */
int vm_stack(struct raw_frame *frames, int max);

/* Interns a class (JVMTI signature) under a small id for RAW_CLASS frames; 0 on failure. */
uint64_t vm_class_id(jclass klass);
/* Interns a display name directly ("[no_blocker]"). */
uint64_t vm_class_id_of(const char *name);
/* The dotted display name of a class id ("java.lang.String[]"). */
const char *vm_class_name(uint64_t id);

/* Address of a function or data symbol of libjvm.so from its ELF .symtab (local symbols too, e.g.
 * "Unsafe_Park", "_ZTV7nmethod"), or NULL. */
void *vm_jvm_symbol(const char *name);

/* Name of the JIT runtime stub containing pc ("vtable stub", "StubRoutines (1)", ...), or NULL. */
const char *vm_stub_name(uintptr_t pc);
/* HotSpot's code cache bounds from vmStructs; both 0 when unknown. */
void vm_code_cache(uintptr_t *lo, uintptr_t *hi);

/* Fills hotspot_layout (hotspot.h) from vmStructs once; 0, or -1 when a field is missing (the handler then
 * does without). */
int vm_hotspot_setup(void);

/* Writes the display name of a method into out per the FRAMES_* flags: "java/lang/String.split".
 * Cached; dump time only. Returns out. */
const char *vm_method_name(jmethodID m, unsigned flags, char *out, size_t outlen);
/* A method's parts for JFR: class in internal form ("java/lang/String"), name, descriptor, and the source
 * line of bci (-1 unknown). Strings are malloc'd (free them). 0, or -1 when the method is gone. */
int vm_method_parts(jmethodID m, int bci, char **cls, char **name, char **desc, int *line);

/* Forgets cached method names (new session). */
void vm_forget_names(void);

#endif
