/* JNI library for java-test-apps/JniBurner.java: burns CPU in a named C function, called through the
 * native method JniBurner.nativeBurn. Built with frame pointers (see the Makefile). */
#include <jni.h>

long burn_loop(long iterations);
JNIEXPORT jlong JNICALL Java_JniBurner_nativeBurn(JNIEnv *env, jclass cls, jlong iterations);

__attribute__((noinline)) long burn_loop(long iterations)
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
