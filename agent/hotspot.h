/* HotSpot's frames as the signal handler sees them: which code blob a pc is in (through the code heaps'
 * segment maps), its kind (compiled method, interpreter, stub) and frame size, a compiled method's
 * Method* and tier, the thread's last-Java-frame anchor, and a jmethodID for a Method*. The layout
 * (field offsets, code heaps) is read from HotSpot's vmStructs at start/attach by vm.c
 * (vm_hotspot_layout); everything below it is signal-safe and reads only memory inside the code heaps,
 * the current thread's stack between the interrupted sp and its stack base, the current JavaThread, or
 * (for Method* -> jmethodID) metadata copied with process_vm_readv, which fails instead of faulting. */
#ifndef HOTSPOT_H
#define HOTSPOT_H

#include <stdint.h>

#define HS_MAX_HEAPS 8

struct hs_layout {
	int ok; /* 0: the handler never uses this module */
	int n_heaps;
	uintptr_t heaps[HS_MAX_HEAPS]; /* CodeHeap objects (live as long as the VM) */
	int heap_memory, heap_segmap, heap_log2; /* CodeHeap field offsets */
	int vs_low_boundary, vs_high;            /* VirtualSpace field offsets */
	int hb_size, hb_used;                    /* HeapBlock header size, offset of its "used" flag */
	/* CodeBlob */
	int code_absolute; /* JDK 17: _code_begin/_code_end hold addresses; later: _code_offset/_data_offset */
	int blob_code_begin, blob_code_end, blob_size, blob_frame_size;
	int blob_frame_complete, frame_complete_bytes; /* int16_t since JDK 23 */
	int blob_kind, kind_nmethod;                   /* CodeBlobKind (JDK 23+), or -1 */
	uintptr_t vtbl_nmethod;                        /* JDK 17: nmethod's vtable address */
	int nm_method, nm_level, level_bytes, nm_entry_bci;
	int nm_verified_entry, verified_absolute; /* address (JDK 17) or u2 offset from code begin */
	uintptr_t interp_lo, interp_hi; /* the template interpreter's code */
	/* Method* -> jmethodID */
	int m_const_method, cm_constants, cm_idnum, cp_holder, ik_jmethod_ids;
	int cm_header; /* sizeof(ConstMethod): the bytecodes follow it */
	/* JavaThread */
	long env_offset; /* JNIEnv inside JavaThread */
	int jt_anchor_sp, jt_anchor_pc, jt_anchor_fp, jt_stack_base, jt_state;
	int anchor_sp, anchor_pc, anchor_fp; /* inside JavaFrameAnchor */
	/* entry frames (Java called from the VM): the call stub's return address, JavaCallWrapper::_anchor */
	const uintptr_t *call_stub_return;
	int jcw_anchor;
};

/* Written once before sampling starts (vm.c), read by handlers. */
extern struct hs_layout hotspot_layout;

enum hs_kind { HS_NONE = 0, HS_NMETHOD, HS_INTERPRETER, HS_STUB };

struct hs_blob {
	uintptr_t start, code_begin, code_end;
	enum hs_kind kind;
	int frame_size;          /* bytes, return address and saved rbp included; 0 for frameless stubs */
	uintptr_t frame_complete; /* first pc at which the frame is set up; 0 if never */
	uintptr_t method;        /* HS_NMETHOD: Method* */
	int level;               /* HS_NMETHOD: tier 1-3 C1, 4 C2, 0 native wrapper */
	int osr;                 /* HS_NMETHOD: on-stack-replacement entry */
	uintptr_t verified_entry; /* HS_NMETHOD: after the inline cache check; 0 unknown */
};

/* One physical frame: pc, sp (the unextended sp for compiled callers) and rbp. */
struct hs_frame {
	uintptr_t pc, sp, fp;
};

/* [SIG] The blob containing pc; 1 found, 0 not in a code heap or in free space. */
int hotspot_find(uintptr_t pc, struct hs_blob *b);

/* [SIG] Steps f to its caller's frame, given f's blob (from hotspot_find) and whether f is the
 * interrupted frame (top: a compiled method still in its prologue, or a frameless stub, has its return
 * address at sp). Reads only [f->sp, stack_hi). 0, or -1 when the frame cannot be stepped. */
int hotspot_sender(struct hs_frame *f, const struct hs_blob *b, int top, uintptr_t stack_hi);

/* [SIG] An interpreted frame's Method* and, when bci is not NULL, its bytecode index (-1 unknown; costs a
 * process_vm_readv), from its fp; 0 or -1. */
int hotspot_interpreted(const struct hs_frame *f, uintptr_t stack_hi, uintptr_t *method, int *bci);

/* [SIG] The jmethodID of a Method* (InstanceKlass::_methods_jmethod_ids), or 0 when unknown. */
uint64_t hotspot_jmethod(uintptr_t method);

/* [SIG] The Method* a jmethodID stands for (jmethodIDs point at a slot holding it; the slots are never
 * freed), or 0. */
uintptr_t hotspot_method_of(uint64_t jmethod);

/* [SIG] The current thread's stack base (highest address), or 0. env: its JNIEnv. */
uintptr_t hotspot_stack_base(void *env);

#define HS_THREAD_IN_VM 6    /* JavaThreadState _thread_in_vm (the same in JDK 17 and 25) */
#define HS_THREAD_IN_JAVA 8  /* _thread_in_Java */

/* [SIG] The current thread's JavaThreadState, or -1. */
int hotspot_thread_state(void *env);

/* [SIG] The thread's last Java frame anchor (set while it runs VM or native code): 1 with *f filled
 * (pc 0 when the anchor has not recorded it; *pc_slot then points at where it would be), else 0. */
int hotspot_anchor(void *env, struct hs_frame *f, uintptr_t **pc_slot);

#endif
