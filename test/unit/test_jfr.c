/* Unit tests: the JFR writer's chunk structure; with --write FILE it writes a fixed recording for the
 * integration test that reads it with the JDK's own `jfr` tool (test/integration/t_jfr.sh). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <errno.h>

#include "check.h"
#include "jfr.h"
#include "out.h"

static const struct jfr_frame s1[] = {
	{"Main", "work", "()V", 12, 3, JFR_FRAME_JIT},
	{"Main", "main", "([Ljava/lang/String;)V", 5, 0, JFR_FRAME_INTERPRETED},
};
static const struct jfr_frame s2[] = {
	{"java/lang/String", "split", "(Ljava/lang/String;)[Ljava/lang/String;", 3000, 7, JFR_FRAME_INLINED},
	{"Main", "parse", "()V", 20, 1, JFR_FRAME_C1},
	{"Main", "main", "([Ljava/lang/String;)V", 6, 4, JFR_FRAME_INTERPRETED},
};
static const struct jfr_frame s3[] = {
	{"", "[unknown_Java]", "", -1, -1, JFR_FRAME_NATIVE},
};
static const struct jfr_stack stacks[] = {{2, s1, 0}, {3, s2, 0}, {1, s3, 0}};
static const struct jfr_thread threads[] = {{101, 0, "main", 1, 1}, {102, 0, "worker-1", 1, 12}, {103, 0, "GC Thread#0", 0, 0}};

static struct jfr_event events[64];

static struct jfr_recording fixture(int *n_exec)
{
	int64_t t0 = 1764036000LL * 1000000000LL;
	int n = 0, ex = 0;
	for (int i = 0; i < 30; i++, n++, ex++)
		events[n] = (struct jfr_event){JFR_EXECUTION_SAMPLE, t0 + i * 10000000LL, i % 2 ? 102 : 101,
					       (uint32_t)(i % 3), 1, "", 0};
	events[n++] = (struct jfr_event){JFR_ALLOC_SAMPLE, t0 + 5000000, 101, 0, 524288, "java/lang/String", 0};
	events[n++] = (struct jfr_event){JFR_MONITOR_ENTER, t0 + 7000000, 102, 1, 2000000, "Main$Lock", 0};
	events[n++] = (struct jfr_event){JFR_THREAD_PARK, t0 + 9000000, 102, 1, 3000000,
					 "java/util/concurrent/locks/ReentrantLock$NonfairSync", 0};
	*n_exec = ex;
	struct jfr_recording r = {t0, 400000000, 1000, threads, 3, stacks, 3, events, (uint64_t)n, 4242};
	return r;
}

int main(int argc, char **argv)
{
	int n_exec;
	struct jfr_recording r = fixture(&n_exec);
	if (argc == 3 && strcmp(argv[1], "--write") == 0) {
		FILE *f = fopen(argv[2], "wb");
		int rc = f ? out_jfr(&r, f) : -1;
		if (f)
			fclose(f);
		return rc ? 1 : 0;
	}
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	CHECK_INT(0, out_jfr(&r, f));
	fclose(f);
	CHECK(len > 68);
	CHECK(memcmp(buf, "FLR", 4) == 0);
	uint64_t size = 0;
	for (int i = 0; i < 8; i++)
		size = size << 8 | (unsigned char)buf[8 + i];
	CHECK_INT(len, size); /* the header's chunk size was patched */
	CHECK(memmem(buf, len, "jdk.ExecutionSample", 19) != NULL);
	CHECK(memmem(buf, len, "java/lang/String", 16) != NULL);

	/* read it back: exact counts per stack, names, thread roots, kinds, concatenation, weights */
	char path[] = "/tmp/fa-jfr-XXXXXX";
	int fd = mkstemp(path);
	FILE *w = fdopen(fd, "wb");
	fwrite(buf, 1, len, w);
	fwrite(buf, 1, len, w); /* two chunks, as `cat a.jfr b.jfr` makes */
	fclose(w);
	struct jfr_read_opts o = {1, 0, 0, 0, -1, NULL, 0, NULL, 0, NULL, 0};
	struct model *m = model_create(0);
	uint64_t n = 0;
	char err[256];
	CHECK_INT(0, jfr_read_counted(path, &o, m, &n, err, sizeof(err)));
	CHECK_INT(2 * n_exec, n);
	struct options opts;
	options_init(&opts);
	opts.ann = 1;
	struct render_opts ro;
	out_render_init(&ro, &opts, "samples");
	char *text = NULL;
	size_t tlen = 0;
	FILE *t = open_memstream(&text, &tlen);
	out_collapsed(m, &ro, t);
	fclose(t);
	CHECK(strstr(text, "[main tid=101];Main.main_[0];Main.work_[j] 10\n") != NULL);
	CHECK(strstr(text, "[worker-1 tid=102];Main.main_[0];Main.parse_[1];java/lang/String.split_[i] 10\n") != NULL);
	CHECK(strstr(text, "[main tid=101];[unknown_Java] 10\n") != NULL);
	free(text);
	model_destroy(m);

	o.kind_filter = JFR_ALLOC_SAMPLE;
	o.threads = 0;
	m = model_create(0);
	CHECK_INT(0, jfr_read_counted(path, &o, m, &n, err, sizeof(err)));
	CHECK_INT(2, n);
	CHECK_INT(2 * 524288, model_node_total(model_root(m), 1));
	model_destroy(m);

	/* truncated: the message names the file and the offset */
	CHECK_INT(0, truncate(path, (off_t)len + 100));
	m = model_create(0);
	CHECK(jfr_read_counted(path, &o, m, &n, err, sizeof(err)) == -EINVAL);
	CHECK(strstr(err, "truncated JFR chunk") != NULL);
	model_destroy(m);
	unlink(path);
	free(buf);
	return check_report();
}
