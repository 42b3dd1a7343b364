/* Engine "alloc": sampled heap allocations through JVMTI SampledObjectAlloc (JDK 11+); the allocated
 * class is the leaf frame, the weight is bytes. Start/stop and the JVMTI callback (allocating thread). */
#include <stdio.h>
#include <string.h>

#include "engine.h"
#include "sampler.h"
#include "vm.h"

static int64_t interval_bytes;
static int depth;

static void on_alloc(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jobject object, jclass klass, jlong size)
{
	(void)jvmti, (void)jni, (void)thread, (void)object;
	struct raw_frame frames[256 + 4];
	frames[0].bci = 0;
	frames[0].kind = RAW_CLASS;
	frames[0].id = vm_class_id(klass);
	int n = 1 + vm_stack(frames + 1, depth);
	/* a sample stands for about interval bytes of allocation; a bigger object stands for itself */
	uint64_t weight = (uint64_t)(size > interval_bytes ? size : interval_bytes);
	sampler_record_frames(frames, n, weight, SK_ALLOC);
}

static int alloc_start(const struct engine_config *c, char *err, unsigned errlen)
{
	interval_bytes = c->interval;
	depth = c->depth > 0 && c->depth < 256 ? c->depth : 256;
	if (vm_enable_alloc(on_alloc, interval_bytes) != 0) {
		snprintf(err, errlen, "JVMTI SampledObjectAlloc is not available in this JVM");
		return -1;
	}
	return 0;
}

static void alloc_stop(void)
{
	vm_enable_alloc(NULL, 0);
}

const struct engine engine_alloc = {
	.name = "alloc",
	.description = "sampled allocations (JVMTI SampledObjectAlloc)",
	.start = alloc_start,
	.stop = alloc_stop,
	.thread_started = NULL,
};
