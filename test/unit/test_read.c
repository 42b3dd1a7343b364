/* Unit tests: flameconv's collapsed reader (plain, gzip, merge, kinds, filters, labels, thread
 * grouping, diff base counts, malformed input). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "check.h"
#include "model.h"
#include "out.h"
#include "read.h"

static char dir[] = "/tmp/fa-read-XXXXXX";

static const char *write_file(const char *name, const char *text, int gz)
{
	static char path[4][256];
	static int k;
	char *p = path[k++ & 3];
	snprintf(p, 256, "%s/%s", dir, name);
	if (gz) {
		gzFile g = gzopen(p, "wb");
		gzputs(g, text);
		gzclose(g);
	} else {
		FILE *f = fopen(p, "w");
		fputs(text, f);
		fclose(f);
	}
	return p;
}

static char *collapsed(const struct model *m)
{
	struct options o;
	options_init(&o);
	struct render_opts r;
	out_render_init(&r, &o, "samples");
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	out_collapsed(m, &r, f);
	fclose(f);
	return buf;
}

int main(void)
{
	CHECK(mkdtemp(dir) != NULL);
	const char *text = "[main tid=1];Main.main_[j];Main.work_[i] 5\n"
			   "[main tid=1];Main.main_[j] 3\n"
			   "\n# a comment\n"
			   "[w tid=2];Worker.run;burn_loop;do_syscall_64_[k] 2\n";
	const char *plain = write_file("a.collapsed", text, 0);
	const char *gz = write_file("b.collapsed.gz", text, 1);
	struct read_opts ro;
	memset(&ro, 0, sizeof(ro));
	char err[512], warn[512];
	uint64_t n = 0, ig = 0;

	struct model *m = model_create(0);
	CHECK_INT(0, read_collapsed(plain, &ro, m, &n, &ig, warn, sizeof(warn), err, sizeof(err)));
	CHECK_INT(10, n);
	CHECK_INT(0, read_collapsed(gz, &ro, m, &n, &ig, warn, sizeof(warn), err, sizeof(err)));
	CHECK_INT(10, n);
	CHECK_INT(20, model_node_total(model_root(m), 0));
	char *s = collapsed(m);
	CHECK_STR("Main.main 6\nMain.main;Main.work 10\nWorker.run;burn_loop;do_syscall_64_[k] 4\n", s);
	free(s);
	/* kinds come back from the suffixes */
	const struct model_node *const *ch;
	model_node_children(model_root(m), &ch);
	const struct model_node *const *gc;
	model_node_children(ch[0], &gc);
	CHECK_INT(FK_INLINED, model_node_kind(gc[0]));
	model_destroy(m);

	m = model_create(0);
	ro.threads = 1;
	ro.label = "[exec-1]";
	CHECK_INT(0, read_collapsed(plain, &ro, m, &n, &ig, warn, sizeof(warn), err, sizeof(err)));
	s = collapsed(m);
	CHECK(strstr(s, "[exec-1];[main tid=1];Main.main;Main.work 5\n") != NULL);
	free(s);
	model_destroy(m);

	memset(&ro, 0, sizeof(ro));
	snprintf(ro.include[0], 256, "*burn*");
	ro.n_include = 1;
	m = model_create(0);
	CHECK_INT(0, read_collapsed(plain, &ro, m, &n, &ig, warn, sizeof(warn), err, sizeof(err)));
	CHECK_INT(2, n);
	model_destroy(m);

	/* diff: base counts on NEW's shape */
	memset(&ro, 0, sizeof(ro));
	m = model_create(0);
	CHECK_INT(0, read_collapsed(plain, &ro, m, &n, &ig, warn, sizeof(warn), err, sizeof(err)));
	ro.base = 1;
	const char *base = write_file("base.collapsed", "Main.main;Main.work 1\nOnly.inBase 7\n", 0);
	CHECK_INT(0, read_collapsed(base, &ro, m, &n, &ig, warn, sizeof(warn), err, sizeof(err)));
	CHECK_INT(8, model_base_total(m));
	s = collapsed(m);
	CHECK_STR("Main.main 0 3\nMain.main;Main.work 1 5\nWorker.run;burn_loop;do_syscall_64_[k] 0 2\n", s);
	free(s);
	model_destroy(m);

	/* malformed input names file and line */
	memset(&ro, 0, sizeof(ro));
	const char *bad = write_file("bad.collapsed", "a;b 1\nno count here\nx;y zz\n;;; \n", 0);
	m = model_create(0);
	CHECK_INT(0, read_collapsed(bad, &ro, m, &n, &ig, warn, sizeof(warn), err, sizeof(err)));
	CHECK_INT(1, n); /* the good line counts, the bad ones are skipped and counted */
	CHECK_INT(3, ig);
	CHECK(strstr(warn, "line 2: not a collapsed stack line") != NULL);
	const char *bin = write_file("bin.collapsed", "\x7f" "ELF\x02\x01\x01\x01\x02\x03", 0);
	CHECK(read_collapsed(bin, &ro, m, &n, &ig, warn, sizeof(warn), err, sizeof(err)) == -EINVAL);
	CHECK(strstr(err, "binary data: not a collapsed stack file") != NULL);
	CHECK(read_collapsed("/nonexistent/x.collapsed", &ro, m, &n, &ig, warn, sizeof(warn), err, sizeof(err)) != 0);
	CHECK(strstr(err, "cannot read /nonexistent/x.collapsed") != NULL);
	model_destroy(m);

	char out[256];
	read_group_thread("[Executor task launch worker for task 12.0 in stage 3.0 (TID 45) tid=99]", READ_GROUP_STAGE, out, sizeof(out));
	CHECK_STR("[Executor task launch worker (stage 3.0)]", out);
	read_group_thread("[Executor task launch worker for task 12.0 in stage 3.0 (TID 45) tid=99]", READ_GROUP_POOL, out, sizeof(out));
	CHECK_STR("[Executor task launch worker]", out);
	read_group_thread("[pool-3-thread-17 tid=5]", READ_GROUP_POOL, out, sizeof(out));
	CHECK_STR("[pool-N-thread-N]", out);
	read_group_thread("[main tid=5]", READ_GROUP_STAGE, out, sizeof(out));
	CHECK_STR("[main]", out);
	CHECK(read_is_jfr(plain) == 0);

	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	CHECK_INT(0, system(cmd));
	return check_report();
}
