/* Unit tests: Java frame and class naming (dot, simple, sig, lambdas, arrays). */
#include <errno.h>

#include "check.h"
#include "frames.h"

static char out[512];

static const char *jn(const char *cls, const char *m, const char *sig, unsigned flags)
{
	frames_java_name(cls, m, sig, flags, out, sizeof(out));
	return out;
}

static const char *cn(const char *sig)
{
	frames_class_name(sig, out, sizeof(out));
	return out;
}

int main(void)
{
	const char *sig = "(Ljava/lang/String;I)[Ljava/lang/String;";
	CHECK_STR("java/lang/String.split", jn("Ljava/lang/String;", "split", sig, 0));
	CHECK_STR("java.lang.String.split", jn("Ljava/lang/String;", "split", sig, FRAMES_DOT));
	CHECK_STR("String.split", jn("Ljava/lang/String;", "split", sig, FRAMES_SIMPLE));
	CHECK_STR("String.split", jn("Ljava/lang/String;", "split", sig, FRAMES_SIMPLE | FRAMES_DOT));
	CHECK_STR("java/lang/String.split(Ljava/lang/String|I)[Ljava/lang/String|",
		  jn("Ljava/lang/String;", "split", sig, FRAMES_SIG));
	CHECK_STR("Main.main", jn("LMain;", "main", "([Ljava/lang/String;)V", 0));
	CHECK_STR("java/util/HashMap$Node.<init>", jn("Ljava/util/HashMap$Node;", "<init>", "()V", 0));
	CHECK_STR("com/x/Foo$$Lambda.run", jn("Lcom/x/Foo$$Lambda+0x0000000800c01234;", "run", "()V", 0));
	CHECK_STR("com/x/Foo$$Lambda.run", jn("Lcom/x/Foo$$Lambda$14/0x0000000800c0a000;", "run", "()V", 0));
	CHECK_STR("Foo$$Lambda.run", jn("Lcom/x/Foo$$Lambda$14/0x0000000800c0a000;", "run", "()V", FRAMES_SIMPLE));
	CHECK_STR("java/lang/invoke/LambdaForm$MH.invoke",
		  jn("Ljava/lang/invoke/LambdaForm$MH/0x0000000800c0b400;", "invoke", "()V", 0));
	CHECK_STR("int[].clone", jn("[I", "clone", "()Ljava/lang/Object;", 0));

	CHECK_STR("java.lang.String[]", cn("[Ljava/lang/String;"));
	CHECK_STR("int[][]", cn("[[I"));
	CHECK_STR("long", cn("J"));
	CHECK_STR("java.lang.Object", cn("Ljava/lang/Object;"));
	CHECK_STR("byte[]", cn("[B"));

	char tiny[8];
	CHECK_INT(-ENAMETOOLONG, frames_java_name("Ljava/lang/String;", "split", "", 0, tiny, sizeof(tiny)));
	CHECK_INT(7, (long long)strlen(tiny));
	return check_report();
}
