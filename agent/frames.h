/* Java frame and class names from JVMTI signatures (ARCHITECTURE.md section 4 naming rules).
 * Pure C; dump time and flameconv. */
#ifndef FRAMES_H
#define FRAMES_H

#include <stddef.h>

#define FRAMES_DOT 1u    /* java.lang.String.split */
#define FRAMES_SIMPLE 2u /* String.split */
#define FRAMES_SIG 4u    /* with the method descriptor, ';' written as '|' */

/* "java/lang/String.split" from class signature "Ljava/lang/String;", method "split" and its
 * descriptor, per flags. Hidden classes keep a stable name: "Foo$$Lambda+0x..." -> "Foo$$Lambda",
 * "Foo$$Lambda$14/0x..." -> "Foo$$Lambda", other "/0x..." suffixes dropped. 0 or -ENAMETOOLONG
 * (truncated, NUL-terminated). */
int frames_java_name(const char *class_sig, const char *method, const char *method_sig, unsigned flags, char *out,
		     size_t outlen);

/* Dotted class name for alloc/lock leaf frames: "java.lang.String[]", "int[][]". Same return. */
int frames_class_name(const char *class_sig, char *out, size_t outlen);

#endif
