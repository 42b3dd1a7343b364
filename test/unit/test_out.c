/* Unit tests: the model (trie, reverse, selection, kinds) and the collapsed and text writers against
 * golden files in test/golden/ (FA_UPDATE_GOLDEN=1 rewrites them: scripts/update-golden.sh). */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "model.h"
#include "out.h"

struct t {
	const char *frames; /* root first, ';' separated, kinds by prefix: j: i: 0: 1: n: c: k: t: e: */
	uint64_t samples, weight;
};

static const struct t fixture[] = {
	{"t:[main tid=1];j:Main.main;j:Main.work;i:Main.inner", 50, 500},
	{"t:[main tid=1];j:Main.main;j:Main.work", 20, 200},
	{"t:[main tid=1];j:Main.main;0:Main.parse;j:java/lang/String.split", 15, 150},
	{"t:[worker tid=2];j:Worker.run;n:Java_Worker_nativeBurn;n:burn_loop;k:do_syscall_64_[k]", 10, 100},
	{"t:[worker tid=2];j:Worker.run;c:G1RemSet::refine_card(unsigned long)", 3, 30},
	{"t:[GC Thread#0 tid=3];e:[unknown_Java]", 2, 20},
	{"t:[main tid=1];j:Main.main;1:Main.sig(Ljava/lang/String|)V", 1, 10},
};

static struct model *build(int reverse)
{
	struct model *m = model_create(reverse);
	for (size_t i = 0; i < sizeof(fixture) / sizeof(fixture[0]); i++) {
		struct model_frame f[16];
		char buf[512], *save = NULL;
		int n = 0;
		snprintf(buf, sizeof(buf), "%s", fixture[i].frames);
		for (char *tok = strtok_r(buf, ";", &save); tok; tok = strtok_r(NULL, ";", &save)) {
			static const char kinds[] = "ji01nckte";
			static const enum frame_kind map[] = {FK_JAVA, FK_INLINED, FK_INTERPRETED, FK_C1, FK_NATIVE,
							      FK_CPP, FK_KERNEL, FK_THREAD, FK_ERROR};
			f[n].kind = map[strchr(kinds, tok[0]) - kinds];
			f[n].name = strdup(tok + 2);
			n++;
		}
		CHECK_INT(0, model_add(m, f, n, fixture[i].samples, fixture[i].weight));
		for (int k = 0; k < n; k++)
			free((char *)f[k].name);
	}
	return m;
}

static void golden(const char *name, const char *text)
{
	char path[256];
	snprintf(path, sizeof(path), "test/golden/%s", name);
	if (getenv("FA_UPDATE_GOLDEN")) {
		FILE *f = fopen(path, "w");
		fputs(text, f);
		fclose(f);
		printf("updated %s\n", path);
		return;
	}
	FILE *f = fopen(path, "r");
	if (!f) {
		check_failed++;
		fprintf(stderr, "%s: missing (run scripts/update-golden.sh)\n", path);
		return;
	}
	static char want[65536];
	size_t n = fread(want, 1, sizeof(want) - 1, f);
	want[n] = 0;
	fclose(f);
	if (strcmp(want, text) == 0) {
		check_passed++;
	} else {
		check_failed++;
		fprintf(stderr, "%s differs from the writer's output:\n--- expected\n%s--- got\n%s", path, want, text);
	}
}

static char *render(const struct model *m, const struct render_opts *r, unsigned bits,
		    const struct profile_stats *st)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int rc = bits ? out_text(m, r, st, bits, f) : out_collapsed(m, r, f);
	CHECK_INT(0, rc);
	fclose(f);
	return buf;
}

static void test_writers(void)
{
	struct options o;
	options_init(&o);
	struct render_opts r;
	out_render_init(&r, &o, "ns");
	struct model *m = build(0);
	char *s;
	golden("plain.collapsed", s = render(m, &r, 0, NULL));
	free(s);
	r.ann = 1;
	golden("ann.collapsed", s = render(m, &r, 0, NULL));
	free(s);
	r.ann = 0;
	r.total = 1;
	golden("total.collapsed", s = render(m, &r, 0, NULL));
	free(s);
	r.total = 0;
	struct profile_stats st;
	memset(&st, 0, sizeof(st));
	st.samples = 101;
	st.weight = 1010;
	st.errors[ERR_UNKNOWN_JAVA] = 2;
	st.errors[ERR_TRUNCATED] = 1;
	st.dropped = 4;
	st.overflow = 0;
	st.cost_ns = 101 * 1500;
	st.cost_samples = 101;
	st.duration_ns = 2500000000ull;
	st.threads_seen = 3;
	st.interval = 10000000;
	snprintf(st.event, sizeof(st.event), "cpu");
	snprintf(st.engine, sizeof(st.engine), "perf_events cpu-clock per thread");
	r.flat_n = 5;
	r.traces_n = 3;
	golden("text.txt", s = render(m, &r, OUT_SUMMARY | OUT_TRACES | OUT_FLAT, &st));
	free(s);
	model_destroy(m);

	m = build(1);
	golden("reverse.collapsed", s = render(m, &r, 0, NULL));
	free(s);
	model_destroy(m);
}

static void test_model(void)
{
	struct model *m = build(0);
	const struct model_node *root = model_root(m);
	CHECK_INT(101, model_node_total(root, 0));
	CHECK_INT(1010, model_node_total(root, 1));
	const struct model_node *const *ch;
	size_t n = model_node_children(root, &ch);
	CHECK_INT(3, n);
	CHECK_STR("[GC Thread#0 tid=3]", model_node_name(ch[0])); /* sorted by name */
	CHECK_STR("[main tid=1]", model_node_name(ch[1]));
	CHECK_INT(86, model_node_total(ch[1], 0));
	CHECK_INT(0, model_node_self(ch[1], 0));
	CHECK(model_node_parent(ch[1]) == root);
	model_destroy(m);

	struct model_frame f[2] = {{"Main.main", FK_JAVA}, {"Main.work", FK_JAVA}};
	char inc[2][256] = {"*work"}, exc[2][256] = {"Main.main"}, none[1][256] = {""};
	CHECK(model_trace_selected(f, 2, inc, 1, none, 0));
	CHECK(!model_trace_selected(f, 2, none, 0, exc, 1));
	char inc2[1][256] = {"*nothing*"};
	CHECK(!model_trace_selected(f, 2, inc2, 1, none, 0));
	char glob[1][256] = {"M*n.m*n"};
	CHECK(model_trace_selected(f, 2, glob, 1, none, 0));

	const char *names[] = {"Main.work_[j]", "Main.inner_[i]", "x_[0]", "y_[1]", "do_sys_k_[k]", "[main tid=1]",
			       "[unknown_Java]", "G1RemSet::refine_card", "burn_loop", "java/lang/String.split",
			       "[libjvm.so]", "libc.so.6"};
	enum frame_kind kinds[] = {FK_JAVA, FK_INLINED, FK_INTERPRETED, FK_C1, FK_KERNEL, FK_THREAD,
				   FK_ERROR, FK_CPP, FK_NATIVE, FK_JAVA, FK_ERROR, FK_NATIVE};
	size_t lens[] = {9, 10, 1, 1, 12, 12, 14, 21, 9, 22, 11, 9};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		size_t len = strlen(names[i]);
		CHECK_INT(kinds[i], model_kind_from_name(names[i], &len));
		CHECK_INT(lens[i], len);
	}
	CHECK_STR("_[j]", model_kind_suffix(FK_JAVA));
	CHECK_STR("", model_kind_suffix(FK_NATIVE));
}

static void test_big(void)
{
	/* 300k distinct stacks load quickly and count exactly */
	struct model *m = model_create(0);
	char a[32], b[32], c[32];
	for (int i = 0; i < 300000; i++) {
		snprintf(a, sizeof(a), "pkg/A%d.m", i % 100);
		snprintf(b, sizeof(b), "pkg/B%d.m", (i / 100) % 100);
		snprintf(c, sizeof(c), "pkg/C%d.m", i);
		struct model_frame f[3] = {{a, FK_JAVA}, {b, FK_JAVA}, {c, FK_JAVA}};
		model_add(m, f, 3, 1, 10);
	}
	CHECK_INT(300000, model_node_total(model_root(m), 0));
	const struct model_node *const *ch;
	CHECK_INT(100, model_node_children(model_root(m), &ch));
	model_destroy(m);
}

static void test_files(void)
{
	struct out_file of;
	char err[512];
	CHECK(out_open(&of, "/nonexistent-dir/x/out.txt", err, sizeof(err)) != 0);
	CHECK(strstr(err, "cannot write /nonexistent-dir/x/out.txt: No such file or directory") != NULL);
	char path[] = "/tmp/fa-test-out-XXXXXX";
	CHECK(mkdtemp(path) != NULL);
	char file[300];
	snprintf(file, sizeof(file), "%s/p.txt", path);
	CHECK_INT(0, out_open(&of, file, err, sizeof(err)));
	fputs("hello\n", of.f);
	CHECK(access(file, F_OK) != 0); /* nothing at the final path until commit */
	CHECK_INT(0, out_commit(&of, err, sizeof(err)));
	CHECK(access(file, F_OK) == 0);
	CHECK(access(of.tmp, F_OK) != 0);
	CHECK_INT(0, out_open(&of, file, err, sizeof(err)));
	fputs("half", of.f);
	out_abort(&of);
	FILE *f = fopen(file, "r");
	char line[32] = "";
	CHECK(f && fgets(line, sizeof(line), f));
	CHECK_STR("hello\n", line);
	if (f)
		fclose(f);
	unlink(file);
	rmdir(path);
}

static char *render_fmt(const struct model *m, const struct render_opts *r,
			int (*fn)(const struct model *, const struct render_opts *, FILE *))
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	CHECK_INT(0, fn(m, r, f));
	fclose(f);
	return buf;
}

static void test_graphs(void)
{
	struct options o;
	options_init(&o);
	struct render_opts r;
	out_render_init(&r, &o, "ns");
	struct model *m = build(0);
	struct model_frame evil[2] = {{"Main.main", FK_JAVA}, {"</script><script>window.pwned=1</script>&\"'", FK_NATIVE}};
	model_add(m, evil, 2, 1, 10);
	char *html = render_fmt(m, &r, out_flamegraph_html);
	CHECK(strstr(html, "<!DOCTYPE html>") == html);
	CHECK(strstr(html, "window.pwned") != NULL);
	CHECK(strstr(html, "<script>window.pwned") == NULL); /* '<' escaped inside the data */
	CHECK(strstr(html, "\\u003c/script\\u003e") != NULL);
	CHECK(strstr(html, "\"Main.inner\"") != NULL);
	CHECK(strstr(html, "/*DATA*/") == NULL);
	char *svg = render_fmt(m, &r, out_flamegraph_svg);
	CHECK(strstr(svg, "<svg ") != NULL);
	CHECK(strstr(svg, "&lt;/script&gt;&lt;script&gt;window.pwned=1") != NULL);
	CHECK(strstr(svg, "Main.inner (50 samples, 49.02%)") != NULL);
	char *tree = render_fmt(m, &r, out_tree);
	CHECK(strstr(tree, "&lt;/script&gt;") != NULL);
	CHECK(strstr(tree, "<script>window") == NULL);
	/* children by weight: main (86) before worker (13) */
	CHECK(strstr(tree, "[main tid=1]") < strstr(tree, "[worker tid=2]"));
	/* minwidth prunes frames under the threshold */
	struct model *gm = build(0);
	r.minwidth = 0;
	char *ghtml = render_fmt(gm, &r, out_flamegraph_html);
	/* the page's data part (the template is tested in the browser) */
	char *data = strstr(ghtml, "const P = ");
	char *end = data ? strstr(data, "};") : NULL;
	if (data && end)
		end[2] = 0;
	golden("fixture-data.js", data ? data : "");
	free(ghtml);
	model_destroy(gm);
	r.minwidth = 5;
	char *pruned = render_fmt(m, &r, out_flamegraph_svg);
	CHECK(strstr(pruned, "G1RemSet") == NULL);
	CHECK(strstr(pruned, "Main.inner") != NULL);
	/* deterministic documents: golden files too */
	golden("fixture.svg", svg);
	golden("fixture-tree.html", tree);
	const char *dir = getenv("FA_RENDER_DIR");
	if (dir) {
		/* pages for the browser test (test/integration/t_browser.sh) */
		const char *names[3] = {"fixture.html", "fixture.svg", "fixture-tree.html"};
		char *docs[3] = {html, svg, tree};
		for (int i = 0; i < 3; i++) {
			char path[512];
			snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
			FILE *f = fopen(path, "w");
			if (f) {
				fputs(docs[i], f);
				fclose(f);
			}
		}
	}
	free(html);
	free(svg);
	free(tree);
	free(pruned);
	model_destroy(m);
}

int main(void)
{
	test_graphs();
	test_model();
	test_writers();
	test_big();
	test_files();
	return check_report();
}
