/* Engine "lock": contended `synchronized` monitors (JVMTI MonitorContendedEnter/Entered) and time parked
 * in java.util.concurrent (Unsafe.park rebound to a timing wrapper); the lock's class is the leaf frame,
 * the weight is nanoseconds waited. Start/stop, JVMTI callbacks and the park wrapper (waiting threads). */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "engine.h"
#include "log.h"
#include "sampler.h"
#include "vm.h"

typedef void(JNICALL *park_fn)(JNIEnv *env, jobject unsafe, jboolean absolute, jlong time);

static int64_t threshold_ns;
static int depth;
static _Atomic int active;
static park_fn original_park;
static jfieldID park_blocker;
static uint64_t no_blocker_id;
static _Thread_local int64_t enter_ns;

static int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void record(uint64_t class_id, int64_t waited_ns)
{
	struct raw_frame frames[256 + 4];
	frames[0].bci = 0;
	frames[0].kind = RAW_CLASS;
	frames[0].id = class_id;
	int n = 1 + vm_stack(frames + 1, depth);
	sampler_record_frames(frames, n, (uint64_t)waited_ns, SK_LOCK);
}

static void on_enter(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jobject object)
{
	(void)jvmti, (void)jni, (void)thread, (void)object;
	enter_ns = now_ns();
}

static void on_entered(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jobject object)
{
	(void)jvmti, (void)thread;
	int64_t waited = enter_ns ? now_ns() - enter_ns : 0;
	enter_ns = 0;
	if (waited < threshold_ns)
		return;
	jclass k = (*jni)->GetObjectClass(jni, object);
	record(vm_class_id(k), waited);
	(*jni)->DeleteLocalRef(jni, k);
}

static void JNICALL park_wrapper(JNIEnv *env, jobject unsafe, jboolean absolute, jlong time)
{
	int64_t t0 = atomic_load_explicit(&active, memory_order_relaxed) ? now_ns() : 0;
	original_park(env, unsafe, absolute, time);
	if (!t0 || !atomic_load_explicit(&active, memory_order_relaxed))
		return;
	int64_t waited = now_ns() - t0;
	if (waited < threshold_ns)
		return;
	/* the parked-on object is java.lang.Thread.parkBlocker of this thread, set by LockSupport */
	uint64_t id = no_blocker_id;
	jthread self = NULL;
	if (park_blocker && (*vm_jvmti())->GetCurrentThread(vm_jvmti(), &self) == JVMTI_ERROR_NONE && self) {
		jobject blocker = (*env)->GetObjectField(env, self, park_blocker);
		if (blocker) {
			jclass k = (*env)->GetObjectClass(env, blocker);
			id = vm_class_id(k);
			(*env)->DeleteLocalRef(env, k);
			(*env)->DeleteLocalRef(env, blocker);
		}
		(*env)->DeleteLocalRef(env, self);
	}
	record(id, waited);
}

static int bind_park(park_fn fn)
{
	JNIEnv *jni = vm_jni();
	if (!jni)
		return -1;
	jclass unsafe = (*jni)->FindClass(jni, "jdk/internal/misc/Unsafe");
	if (!unsafe) {
		(*jni)->ExceptionClear(jni);
		return -1;
	}
	JNINativeMethod m = {"park", "(ZJ)V", (void *)fn};
	int rc = (*jni)->RegisterNatives(jni, unsafe, &m, 1) == 0 ? 0 : -1;
	if (rc)
		(*jni)->ExceptionClear(jni);
	(*jni)->DeleteLocalRef(jni, unsafe);
	return rc;
}

static int lock_start(const struct engine_config *c, char *err, unsigned errlen)
{
	threshold_ns = c->interval;
	depth = c->depth > 0 && c->depth < 256 ? c->depth : 256;
	no_blocker_id = vm_class_id_of("[no_blocker]");
	if (vm_enable_monitor(on_enter, on_entered) != 0) {
		snprintf(err, errlen, "JVMTI monitor events are not available in this JVM");
		return -1;
	}
	JNIEnv *jni = vm_jni();
	if (jni && !park_blocker) {
		jclass t = (*jni)->FindClass(jni, "java/lang/Thread");
		park_blocker = t ? (*jni)->GetFieldID(jni, t, "parkBlocker", "Ljava/lang/Object;") : NULL;
		if (!park_blocker)
			(*jni)->ExceptionClear(jni);
		if (t)
			(*jni)->DeleteLocalRef(jni, t);
	}
	if (!original_park)
		original_park = (park_fn)vm_jvm_symbol("Unsafe_Park");
	if (!original_park || bind_park(park_wrapper) != 0)
		log_warn("event=lock: time parked in java.util.concurrent locks is not recorded (Unsafe_Park not "
			 "found in libjvm.so's symbol table); contended synchronized blocks are");
	atomic_store(&active, 1);
	return 0;
}

static void lock_stop(void)
{
	atomic_store(&active, 0);
	vm_enable_monitor(NULL, NULL);
	if (original_park)
		bind_park(original_park);
}

const struct engine engine_lock = {
	.name = "lock",
	.description = "contended monitors and parking (JVMTI + Unsafe.park)",
	.start = lock_start,
	.stop = lock_stop,
	.thread_started = NULL,
};
