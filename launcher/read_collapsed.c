/* Collapsed stack reader for flameconv: "frame;frame;frame COUNT" lines (Brendan Gregg's folded format,
 * what the agent writes), plain or gzip, into the shared model. flameconv only. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "read.h"

#define MAX_FRAMES 8192

static void simplify(char *name)
{
	/* java/lang/String.split -> String.split (Java names only: a '/' before the method's '.') */
	char *dot = strrchr(name, '.');
	char *slash = NULL;
	for (char *p = name; dot && p < dot; p++)
		if (*p == '/')
			slash = p;
	if (slash && !strchr(name, '(') && !strstr(name, "::"))
		memmove(name, slash + 1, strlen(slash + 1) + 1);
}

void read_group_thread(const char *name, int mode, char *out, size_t outlen)
{
	/* name is "[text tid=N]" */
	char text[1024];
	snprintf(text, sizeof(text), "%s", name[0] == '[' ? name + 1 : name);
	char *tid = strstr(text, " tid=");
	if (tid)
		*tid = 0;
	else if (text[0] && text[strlen(text) - 1] == ']')
		text[strlen(text) - 1] = 0;
	const char *task = strstr(text, " for task ");
	const char *stage = strstr(text, " in stage ");
	if (task && stage) {
		char st[64] = "";
		sscanf(stage + 10, "%63[0-9.]", st);
		if (mode == READ_GROUP_STAGE)
			snprintf(out, outlen, "[%.*s (stage %s)]", (int)(task - text), text, st);
		else
			snprintf(out, outlen, "[%.*s]", (int)(task - text), text);
		return;
	}
	if (mode == READ_GROUP_POOL) {
		size_t k = 0;
		out[k++] = '[';
		for (const char *p = text; *p && k + 3 < outlen; p++) {
			if (*p >= '0' && *p <= '9') {
				while (p[1] >= '0' && p[1] <= '9')
					p++;
				out[k++] = 'N';
			} else {
				out[k++] = *p;
			}
		}
		out[k++] = ']';
		out[k] = 0;
		return;
	}
	snprintf(out, outlen, "[%s]", text);
}

static int add_line(char *line, size_t lineno, const char *path, const struct read_opts *o, struct model *m,
		    struct model_frame *frames, uint64_t *samples, char *err, size_t errlen)
{
	size_t len = strlen(line);
	while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
		line[--len] = 0;
	if (!len || line[0] == '#')
		return 0;
	char *space = strrchr(line, ' ');
	char *end = NULL;
	unsigned long long count = space ? strtoull(space + 1, &end, 10) : 0;
	if (!space || space == line || !end || *end || end == space + 1) {
		snprintf(err, errlen, "line %zu: not a collapsed stack line (expected frames;separated;by;semicolons COUNT): %.60s",
			 lineno, line);
		return 1; /* skipped, counted by the caller */
	}
	*space = 0;
	int n = 0, n_grouped = 0;
	char grouped[4][1024];
	if (o->label)
		frames[n++] = (struct model_frame){o->label, FK_THREAD};
	char *save = NULL;
	for (char *tok = strtok_r(line, ";", &save); tok && n < MAX_FRAMES; tok = strtok_r(NULL, ";", &save)) {
		size_t tl = strlen(tok);
		enum frame_kind k = model_kind_from_name(tok, &tl);
		tok[tl] = 0;
		if (k == FK_THREAD && !o->threads)
			continue;
		if (k == FK_THREAD && o->group_threads && n_grouped < 4) {
			/* model_add copies names: a buffer per thread frame of this line is enough */
			read_group_thread(tok, o->group_threads, grouped[n_grouped], sizeof(grouped[0]));
			frames[n++] = (struct model_frame){grouped[n_grouped++], k};
			continue;
		}
		if (o->simple && k == FK_JAVA)
			simplify(tok);
		frames[n++] = (struct model_frame){tok, k};
	}
	if (n == 0)
		return 0;
	if (!model_trace_selected(frames, n, (char(*)[256])o->include, o->n_include, (char(*)[256])o->exclude,
				  o->n_exclude))
		return 0;
	*samples += count;
	int rc = o->base ? model_add_base(m, frames, n, count) : model_add(m, frames, n, count, count);
	if (rc) {
		snprintf(err, errlen, "%s: out of memory", path);
		return rc;
	}
	return 0;
}

int read_collapsed(const char *path, const struct read_opts *o, struct model *m, uint64_t *samples,
		   uint64_t *ignored, char *warn, size_t warnlen, char *err, size_t errlen)
{
	*ignored = 0;
	if (warnlen)
		warn[0] = 0;
	gzFile gz = strcmp(path, "-") == 0 ? gzdopen(0, "rb") : gzopen(path, "rb");
	if (!gz) {
		snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno ? errno : ENOMEM));
		return -(errno ? errno : ENOMEM);
	}
	if (strcmp(path, "-") != 0) {
		/* a foreign binary file: say so instead of ignoring every line of it */
		unsigned char head[4096];
		int n = gzread(gz, head, sizeof(head)), odd = 0;
		for (int i = 0; i < n; i++)
			odd += head[i] == 0 || (head[i] < 32 && head[i] != '\n' && head[i] != '\r' && head[i] != '\t');
		if (n > 0 && (memchr(head, 0, (size_t)n) || odd * 10 > n)) {
			snprintf(err, errlen, "%s: binary data: not a collapsed stack file (nor JFR)", path);
			gzclose(gz);
			return -EINVAL;
		}
		gzrewind(gz);
	}
	size_t cap = 1 << 16, lineno = 0;
	char *line = malloc(cap);
	struct model_frame *frames = malloc(sizeof(*frames) * (MAX_FRAMES + 1));
	int rc = line && frames ? 0 : -ENOMEM;
	*samples = 0;
	while (rc == 0) {
		size_t len = 0;
		int got = 0;
		/* lines may be longer than the buffer: grow until a newline or the end */
		while (gzgets(gz, line + len, (int)(cap - len))) {
			got = 1;
			len += strlen(line + len);
			if (len && line[len - 1] == '\n')
				break;
			if (len + 1 >= cap) {
				char *grown = realloc(line, cap * 2);
				if (!grown) {
					rc = -ENOMEM;
					break;
				}
				line = grown;
				cap *= 2;
			}
		}
		if (!got || rc)
			break;
		lineno++;
		char msg[256];
		rc = add_line(line, lineno, path, o, m, frames, samples, msg, sizeof(msg));
		if (rc == 1) {
			if (!*ignored)
				snprintf(warn, warnlen, "%s", msg);
			(*ignored)++;
			rc = 0;
		}
	}
	int zerr = 0;
	const char *zmsg = gzerror(gz, &zerr);
	if (rc == 0 && zerr != Z_OK && zerr != Z_STREAM_END) {
		snprintf(err, errlen, "cannot read %s: %s", path, zmsg);
		rc = -EIO;
	}
	gzclose(gz);
	free(line);
	free(frames);
	return rc;
}

int read_is_jfr(const char *path)
{
	if (strcmp(path, "-") == 0)
		return 0;
	gzFile gz = gzopen(path, "rb");
	if (!gz)
		return 0;
	char magic[4] = {0};
	int n = gzread(gz, magic, 4);
	gzclose(gz);
	return n == 4 && memcmp(magic, "FLR", 4) == 0;
}
