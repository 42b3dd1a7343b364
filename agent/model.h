/* The profile model: one trie of resolved frames (root first, or leaf first with reverse) with sample
 * counts and weights, plus the session's counters. Shared by every writer and by flameconv. Dump time. */
#ifndef MODEL_H
#define MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "calltrace.h"
#include "options.h"

enum frame_kind {
	FK_JAVA = 0,      /* Java, compiled or kind unknown: "_[j]" with ann */
	FK_INLINED,       /* "_[i]" */
	FK_INTERPRETED,   /* "_[0]" */
	FK_C1,            /* "_[1]" */
	FK_NATIVE,        /* C symbol */
	FK_CPP,           /* C++ symbol (demangled) */
	FK_KERNEL,        /* "_[k]", part of the name itself */
	FK_THREAD,        /* "[name tid=N]" root */
	FK_ERROR,         /* "[unknown_Java]" ... */
	FK_CLASS,         /* allocated / contended class leaf */
	FK_STATE,         /* thread state frame */
	FK_COUNT
};

/* Kernel frames always carry this suffix in their name ("do_syscall_64_[k]", with or without `ann`). */
#define MODEL_KERNEL_SUFFIX "_[k]"
/* Suffix for a kind with `ann`: "_[j]", "_[i]", "_[0]", "_[1]", or "" for kinds without one and for
 * FK_KERNEL (whose names already end in "_[k]", so `ann` does not double it). */
const char *model_kind_suffix(enum frame_kind k);
/* Kind from a frame name's suffix, for readers of collapsed text: strips a known "_[x]" suffix by
 * setting *name_len shorter, except "_[k]", which stays part of a kernel frame's name (FK_KERNEL).
 * Names like "[..]" are FK_ERROR or FK_THREAD ("tid=" inside), C++ ("::") FK_CPP, names with '/' or '.'
 * and no '(' FK_JAVA, else FK_NATIVE. */
enum frame_kind model_kind_from_name(const char *name, size_t *name_len);

struct model_frame {
	const char *name; /* copied by model_add */
	enum frame_kind kind;
};

/* Session counters, shown by summary and the launcher. */
struct profile_stats {
	uint64_t samples;        /* samples taken (stored + overflowed) */
	uint64_t weight;         /* sum of weights */
	uint64_t errors[ERR_COUNT]; /* failed or cut walks by reason (those samples are still counted) */
	uint64_t recovered[ERR_COUNT]; /* of errors[], how many got their stack back by unwinding a stub */
	uint64_t dropped;        /* samples lost before storage (all stripes busy, ...) */
	uint64_t overflow;       /* samples counted in [storage_overflow] */
	uint64_t cost_ns;        /* total time spent in the sampler, for mean cost per sample */
	uint64_t cost_samples;   /* samples cost_ns covers */
	uint64_t duration_ns;    /* wall time profiled */
	uint64_t threads_seen;
	char event[64];          /* "cpu", ... ; what was sampled */
	char engine[128];        /* engine actually used ("perf_events cpu-clock", "ctimer (fallback)") */
	int64_t interval;        /* ns or bytes */
	/* cstack=dwarf (all 0 otherwise) */
	uint64_t dwarf_walks;    /* native walks */
	uint64_t dwarf_failed;   /* of them, stopped at a failed check or a rule the tables cannot express */
	uint64_t dwarf_fp_steps; /* frames stepped by frame pointer for want of a table */
	uint64_t dwarf_bytes;    /* unwind table memory */
	uint32_t dwarf_objects;  /* objects with tables */
};

struct model;

/* Empty model; reverse builds the trie leaf first (callers of hot leaves). NULL on ENOMEM. */
struct model *model_create(int reverse);
void model_destroy(struct model *m);

/* Adds one trace, frames root first (model_add reverses internally when the model is reversed).
 * Returns 0 or -ENOMEM. */
int model_add(struct model *m, const struct model_frame *frames, int n, uint64_t samples, uint64_t weight);

struct model_node;

/* Differential profiles (flameconv --diff): counts of the base profile on the NEW profile's shape. Adds
 * samples to the base counts of the nodes of frames (root first) that exist already; frames the model
 * lacks are counted only in the base total. 0 or -ENOMEM. */
int model_add_base(struct model *m, const struct model_frame *frames, int n, uint64_t samples);
/* Whether base counts were added; the base's total samples. */
int model_has_base(const struct model *m);
uint64_t model_base_total(const struct model *m);
uint64_t model_node_base_self(const struct model_node *n);

/* Whether a trace passes include= / exclude= globs ('*' any run of characters) matched against whole
 * frame names: at least one frame matches some include (when any are given) and no frame matches any
 * exclude. */
int model_trace_selected(const struct model_frame *frames, int n, char include[][256], int n_include,
			 char exclude[][256], int n_exclude);

/* Read access for writers. The root node has no name; children are sorted by name (deterministic). */
struct model_node;
const struct model_node *model_root(const struct model *m);
size_t model_node_children(const struct model_node *n, const struct model_node *const **children);
const char *model_node_name(const struct model_node *n);
enum frame_kind model_node_kind(const struct model_node *n);
uint64_t model_node_total(const struct model_node *n, int by_weight);
uint64_t model_node_self(const struct model_node *n, int by_weight);
/* The parent node, NULL for the root. */
const struct model_node *model_node_parent(const struct model_node *n);

#endif
