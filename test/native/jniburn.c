/* JNI library for java-test-apps/JniBurner.java: burns CPU in a named C function, called through the
 * native method JniBurner.nativeBurn. Built with frame pointers (see the Makefile). */
#include <jni.h>

#ifdef JNIBURN_HIDDEN
/* the stripped variant (libjniburn_stripped.so, see the Makefile): burn_loop is not exported, so only the
 * separate debug file names it */
#define BURN_LOOP_VISIBILITY __attribute__((visibility("hidden")))
#else
#define BURN_LOOP_VISIBILITY
#endif

BURN_LOOP_VISIBILITY long burn_loop(long iterations);
JNIEXPORT jlong JNICALL Java_JniBurner_nativeBurn(JNIEnv *env, jclass cls, jlong iterations);

BURN_LOOP_VISIBILITY __attribute__((noinline)) long burn_loop(long iterations)
{
	volatile long x = 0;
	for (long i = 0; i < iterations; i++)
		x += (i * 31) ^ (x >> 3);
	return x;
}

JNIEXPORT jlong JNICALL Java_JniBurner_nativeBurn(JNIEnv *env, jclass cls, jlong iterations)
{
	(void)env;
	(void)cls;
	return burn_loop(iterations) + 1;
}
