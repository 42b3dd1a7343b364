/* The JVM side: JVMTI env, capabilities, callbacks, AsyncGetCallTrace, jmethodID preloading, Java thread
 * registration, method names. Runs in JVMTI callbacks, at attach and at dump time; never in a handler. */
#include "vm.h"

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frames.h"
#include "hotspot.h"
#include "log.h"
#include "threads.h"
#include "vmstructs.h"

static JavaVM *jvm;
static jvmtiEnv *jvmti;
static struct vm_hooks hooks;
static sampler_agct_fn agct;
static int initialised;
static _Atomic(vm_alloc_hook) alloc_hook;
static _Atomic(vm_monitor_hook) monitor_enter_hook, monitor_entered_hook;

jvmtiEnv *vm_jvmti(void)
{
	return jvmti;
}

sampler_agct_fn vm_agct(void)
{
	return agct;
}

JNIEnv *vm_jni(void)
{
	JNIEnv *env = NULL;
	if (!jvm || (*jvm)->GetEnv(jvm, (void **)&env, JNI_VERSION_1_6) != JNI_OK)
		return NULL;
	return env;
}

int vm_attach_current_thread(const char *name)
{
	JNIEnv *env = NULL;
	JavaVMAttachArgs args = {JNI_VERSION_1_6, (char *)name, NULL};
	return jvm && (*jvm)->AttachCurrentThreadAsDaemon(jvm, (void **)&env, &args) == JNI_OK ? 0 : -1;
}

void vm_detach_current_thread(void)
{
	if (jvm)
		(*jvm)->DetachCurrentThread(jvm);
}

static void load_methods(jclass klass)
{
	/* AsyncGetCallTrace reports only methods that have a jmethodID: make them exist now */
	jint n = 0;
	jmethodID *methods = NULL;
	if ((*jvmti)->GetClassMethods(jvmti, klass, &n, &methods) == JVMTI_ERROR_NONE)
		(*jvmti)->Deallocate(jvmti, (unsigned char *)methods);
}

static void load_all_methods(void)
{
	jint n = 0;
	jclass *classes = NULL;
	if ((*jvmti)->GetLoadedClasses(jvmti, &n, &classes) != JVMTI_ERROR_NONE)
		return;
	JNIEnv *jni = vm_jni();
	for (jint i = 0; i < n; i++) {
		jint status = 0;
		if ((*jvmti)->GetClassStatus(jvmti, classes[i], &status) == JVMTI_ERROR_NONE &&
		    (status & JVMTI_CLASS_STATUS_PREPARED))
			load_methods(classes[i]);
		if (jni)
			(*jni)->DeleteLocalRef(jni, classes[i]);
	}
	(*jvmti)->Deallocate(jvmti, (unsigned char *)classes);
}

static void JNICALL on_class_load(jvmtiEnv *j, JNIEnv *jni, jthread t, jclass k)
{
	/* AsyncGetCallTrace needs a ClassLoad listener to be enabled; nothing to do here */
	(void)j, (void)jni, (void)t, (void)k;
}

static void JNICALL on_class_prepare(jvmtiEnv *j, JNIEnv *jni, jthread t, jclass k)
{
	(void)j, (void)jni, (void)t;
	load_methods(k);
}

static void register_name(jthread thread, int tid, uint32_t serial)
{
	jvmtiThreadInfo info;
	memset(&info, 0, sizeof(info));
	if ((*jvmti)->GetThreadInfo(jvmti, thread, &info) != JVMTI_ERROR_NONE)
		return;
	if (info.name) {
		threads_set_name(tid, serial, info.name, 1);
		(*jvmti)->Deallocate(jvmti, (unsigned char *)info.name);
	}
	JNIEnv *jni = vm_jni();
	if (jni) {
		if (info.thread_group)
			(*jni)->DeleteLocalRef(jni, info.thread_group);
		if (info.context_class_loader)
			(*jni)->DeleteLocalRef(jni, info.context_class_loader);
	}
}

static void JNICALL on_thread_start(jvmtiEnv *j, JNIEnv *jni, jthread thread)
{
	(void)j;
	int tid = threads_gettid();
	register_name(thread, tid, threads_set_env(tid, jni, 1));
	if (hooks.thread_start)
		hooks.thread_start(tid);
}

static void JNICALL on_thread_end(jvmtiEnv *j, JNIEnv *jni, jthread thread)
{
	(void)j, (void)jni;
	int tid = threads_gettid();
	uint32_t serial;
	threads_lookup(tid, &serial);
	register_name(thread, tid, serial); /* the final name, after any renames */
	threads_set_env(tid, NULL, 0);
}

static void JNICALL on_vm_init(jvmtiEnv *j, JNIEnv *jni, jthread thread)
{
	int tid = threads_gettid();
	register_name(thread, tid, threads_set_env(tid, jni, 1));
	load_all_methods();
	if (hooks.vm_init)
		hooks.vm_init(j, jni);
}

static void JNICALL on_vm_death(jvmtiEnv *j, JNIEnv *jni)
{
	if (hooks.vm_death)
		hooks.vm_death(j, jni);
}

static void JNICALL on_sampled_alloc(jvmtiEnv *j, JNIEnv *jni, jthread t, jobject o, jclass k, jlong size)
{
	vm_alloc_hook h = atomic_load(&alloc_hook);
	if (h)
		h(j, jni, t, o, k, size);
}

static void JNICALL on_monitor_enter(jvmtiEnv *j, JNIEnv *jni, jthread t, jobject o)
{
	vm_monitor_hook h = atomic_load(&monitor_enter_hook);
	if (h)
		h(j, jni, t, o);
}

static void JNICALL on_monitor_entered(jvmtiEnv *j, JNIEnv *jni, jthread t, jobject o)
{
	vm_monitor_hook h = atomic_load(&monitor_entered_hook);
	if (h)
		h(j, jni, t, o);
}

int vm_enable_alloc(vm_alloc_hook hook, jlong interval_bytes)
{
	if (!hook) {
		(*jvmti)->SetEventNotificationMode(jvmti, JVMTI_DISABLE, JVMTI_EVENT_SAMPLED_OBJECT_ALLOC, NULL);
		atomic_store(&alloc_hook, NULL);
		return 0;
	}
	jvmtiCapabilities caps;
	memset(&caps, 0, sizeof(caps));
	caps.can_generate_sampled_object_alloc_events = 1;
	jvmtiError e = (*jvmti)->AddCapabilities(jvmti, &caps);
	if (e != JVMTI_ERROR_NONE) {
		log_error("event=alloc: this JVM cannot sample allocations (JVMTI error %d; JDK 11 or later needed)", e);
		return -1;
	}
	(*jvmti)->SetHeapSamplingInterval(jvmti, (jint)(interval_bytes > 0x7fffffff ? 0x7fffffff : interval_bytes));
	atomic_store(&alloc_hook, hook);
	(*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_SAMPLED_OBJECT_ALLOC, NULL);
	return 0;
}

int vm_enable_monitor(vm_monitor_hook enter, vm_monitor_hook entered)
{
	jvmtiEventMode mode = enter ? JVMTI_ENABLE : JVMTI_DISABLE;
	if (enter) {
		jvmtiCapabilities caps;
		memset(&caps, 0, sizeof(caps));
		caps.can_generate_monitor_events = 1;
		jvmtiError e = (*jvmti)->AddCapabilities(jvmti, &caps);
		if (e != JVMTI_ERROR_NONE) {
			log_error("event=lock: this JVM cannot report monitor contention (JVMTI error %d)", e);
			return -1;
		}
	}
	atomic_store(&monitor_enter_hook, enter);
	atomic_store(&monitor_entered_hook, entered);
	(*jvmti)->SetEventNotificationMode(jvmti, mode, JVMTI_EVENT_MONITOR_CONTENDED_ENTER, NULL);
	(*jvmti)->SetEventNotificationMode(jvmti, mode, JVMTI_EVENT_MONITOR_CONTENDED_ENTERED, NULL);
	return 0;
}

int vm_stack(struct raw_frame *frames, int max)
{
	jvmtiFrameInfo info[256];
	jint n = 0;
	if (max > 256)
		max = 256;
	if ((*jvmti)->GetStackTrace(jvmti, NULL, 0, max, info, &n) != JVMTI_ERROR_NONE)
		return 0;
	for (jint i = 0; i < n; i++) {
		frames[i].bci = (int32_t)info[i].location;
		frames[i].kind = RAW_JAVA;
		frames[i].id = (uint64_t)(uintptr_t)info[i].method;
	}
	return n;
}

static pthread_mutex_t class_lock = PTHREAD_MUTEX_INITIALIZER;
static char **class_names;
static uint64_t n_classes, cap_classes;

uint64_t vm_class_id(jclass klass)
{
	char *sig = NULL;
	if (!klass || (*jvmti)->GetClassSignature(jvmti, klass, &sig, NULL) != JVMTI_ERROR_NONE)
		return 0;
	char name[512];
	frames_class_name(sig, name, sizeof(name));
	(*jvmti)->Deallocate(jvmti, (unsigned char *)sig);
	return vm_class_id_of(name);
}

uint64_t vm_class_id_of(const char *name)
{
	pthread_mutex_lock(&class_lock);
	uint64_t id = 0;
	for (uint64_t i = n_classes; i-- > 0;)
		if (strcmp(class_names[i], name) == 0) {
			id = i + 1;
			goto out;
		}
	if (n_classes == cap_classes) {
		uint64_t cap = cap_classes ? cap_classes * 2 : 256;
		char **grown = realloc(class_names, cap * sizeof(*grown));
		if (!grown)
			goto out;
		class_names = grown;
		cap_classes = cap;
	}
	class_names[n_classes] = strdup(name);
	if (class_names[n_classes])
		id = ++n_classes;
out:
	pthread_mutex_unlock(&class_lock);
	return id;
}

const char *vm_class_name(uint64_t id)
{
	pthread_mutex_lock(&class_lock);
	const char *n = id >= 1 && id <= n_classes ? class_names[id - 1] : "[unknown_class]";
	pthread_mutex_unlock(&class_lock);
	return n;
}

void *vm_jvm_symbol(const char *name)
{
	Dl_info info;
	void *anchor = dlsym(RTLD_DEFAULT, "JNI_CreateJavaVM");
	if (!anchor || !dladdr(anchor, &info) || !info.dli_fname)
		return NULL;
	int fd = open(info.dli_fname, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	struct stat st;
	void *result = NULL;
	if (fstat(fd, &st) != 0 || (size_t)st.st_size < sizeof(ElfW(Ehdr))) {
		close(fd);
		return NULL;
	}
	char *base = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (base == MAP_FAILED)
		return NULL;
	const ElfW(Ehdr) *eh = (const ElfW(Ehdr) *)base;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_shoff + (size_t)eh->e_shnum * sizeof(ElfW(Shdr)) >
								  (size_t)st.st_size)
		goto out;
	const ElfW(Shdr) *sh = (const ElfW(Shdr) *)(base + eh->e_shoff);
	for (int i = 0; i < eh->e_shnum; i++) {
		if (sh[i].sh_type != SHT_SYMTAB || sh[i].sh_link >= eh->e_shnum)
			continue;
		const ElfW(Shdr) *strs = &sh[sh[i].sh_link];
		if (sh[i].sh_offset + sh[i].sh_size > (size_t)st.st_size ||
		    strs->sh_offset + strs->sh_size > (size_t)st.st_size)
			goto out;
		const ElfW(Sym) *sym = (const ElfW(Sym) *)(base + sh[i].sh_offset);
		size_t n = sh[i].sh_size / sizeof(ElfW(Sym));
		for (size_t k = 0; k < n; k++) {
			if (sym[k].st_name >= strs->sh_size ||
			    (ELF64_ST_TYPE(sym[k].st_info) != STT_FUNC && ELF64_ST_TYPE(sym[k].st_info) != STT_OBJECT))
				continue;
			if (strcmp(base + strs->sh_offset + sym[k].st_name, name) == 0) {
				/* dli_fbase is the load address; symbol values are relative to it for a DSO */
				result = (char *)info.dli_fbase + sym[k].st_value;
				goto out;
			}
		}
	}
out:
	munmap(base, (size_t)st.st_size);
	return result;
}

/* JIT runtime stubs (DynamicCodeGenerated): name by address range, looked up at dump time */
struct stub {
	uintptr_t start, end;
	char *name;
};
static pthread_mutex_t stub_lock = PTHREAD_MUTEX_INITIALIZER;
static struct stub *stubs;
static size_t n_stubs, cap_stubs;

static void JNICALL on_dynamic_code(jvmtiEnv *j, const char *name, const void *address, jint length)
{
	(void)j;
	pthread_mutex_lock(&stub_lock);
	if (n_stubs == cap_stubs) {
		size_t cap = cap_stubs ? cap_stubs * 2 : 512;
		struct stub *grown = realloc(stubs, cap * sizeof(*grown));
		if (!grown)
			goto out;
		stubs = grown;
		cap_stubs = cap;
	}
	stubs[n_stubs].start = (uintptr_t)address;
	stubs[n_stubs].end = (uintptr_t)address + (uintptr_t)length;
	stubs[n_stubs].name = strdup(name ? name : "stub");
	if (stubs[n_stubs].name)
		n_stubs++;
out:
	pthread_mutex_unlock(&stub_lock);
}

const char *vm_stub_name(uintptr_t pc)
{
	const char *name = NULL;
	pthread_mutex_lock(&stub_lock);
	/* newest first: a range may have been reused */
	for (size_t i = n_stubs; i-- > 0;)
		if (pc >= stubs[i].start && pc < stubs[i].end) {
			name = stubs[i].name;
			break;
		}
	pthread_mutex_unlock(&stub_lock);
	return name;
}

void vm_code_cache(uintptr_t *lo, uintptr_t *hi)
{
	void **l = vmstructs_static_address("CodeCache", "_low_bound");
	void **h = vmstructs_static_address("CodeCache", "_high_bound");
	*lo = l ? (uintptr_t)*l : 0;
	*hi = h ? (uintptr_t)*h : 0;
	if (*lo >= *hi)
		*lo = *hi = 0;
}

static int field(const char *type, const char *name)
{
	long off = vmstructs_offset(type, name);
	return off >= 0 && off < (1 << 20) ? (int)off : -1;
}

static int type_bytes(const char *type, const char *name)
{
	const char *t = vmstructs_field_type(type, name);
	if (!t)
		return 4;
	long n = vmstructs_type_size(t);
	return n == 1 || n == 2 || n == 4 ? (int)n : 4;
}

int vm_hotspot_setup(void)
{
	struct hs_layout *l = &hotspot_layout;
	if (l->ok)
		return 0;
	long env_offset = l->env_offset;
	memset(l, 0, sizeof(*l));
	l->env_offset = env_offset;
	void **heaps = vmstructs_static_address("CodeCache", "_heaps");
	int len_off = field("GrowableArrayBase", "_len"), data_off = field("GrowableArray<int>", "_data");
	if (!heaps || !*heaps || len_off < 0 || data_off < 0)
		return -1;
	int n = *(int *)((char *)*heaps + len_off);
	void **data = *(void ***)((char *)*heaps + data_off);
	if (n <= 0 || n > HS_MAX_HEAPS || !data)
		return -1;
	for (int i = 0; i < n; i++)
		l->heaps[i] = (uintptr_t)data[i];
	l->n_heaps = n;
	l->heap_memory = field("CodeHeap", "_memory");
	l->heap_segmap = field("CodeHeap", "_segmap");
	l->heap_log2 = field("CodeHeap", "_log2_segment_size");
	l->vs_low_boundary = field("VirtualSpace", "_low_boundary");
	l->vs_high = field("VirtualSpace", "_high");
	long hb = vmstructs_type_size("HeapBlock");
	/* HeapBlock::Header is { length; bool used; }: size_t + bool (16 bytes) or uint32_t + bool (8) */
	l->hb_size = (int)hb;
	l->hb_used = (int)hb / 2;
	l->blob_code_begin = field("CodeBlob", "_code_begin");
	l->code_absolute = l->blob_code_begin >= 0;
	if (l->code_absolute) {
		l->blob_code_end = field("CodeBlob", "_code_end");
	} else {
		l->blob_code_begin = field("CodeBlob", "_code_offset");
		l->blob_code_end = field("CodeBlob", "_data_offset");
	}
	l->blob_size = field("CodeBlob", "_size");
	l->blob_frame_size = field("CodeBlob", "_frame_size");
	l->blob_frame_complete = field("CodeBlob", "_frame_complete_offset");
	l->frame_complete_bytes = type_bytes("CodeBlob", "_frame_complete_offset");
	l->blob_kind = field("CodeBlob", "_kind");
	l->kind_nmethod = 1; /* CodeBlobKind::Nmethod */
	const char *method_type = "nmethod";
	l->nm_method = field("nmethod", "_method");
	if (l->nm_method < 0) {
		l->nm_method = field("CompiledMethod", "_method");
		method_type = "CompiledMethod";
	}
	(void)method_type;
	l->nm_level = field("nmethod", "_comp_level");
	l->level_bytes = type_bytes("nmethod", "_comp_level");
	l->nm_entry_bci = field("nmethod", "_entry_bci");
	l->nm_verified_entry = field("nmethod", "_verified_entry_point");
	l->verified_absolute = l->nm_verified_entry >= 0;
	if (!l->verified_absolute)
		l->nm_verified_entry = field("nmethod", "_verified_entry_offset");
	if (l->blob_kind < 0) {
		char *vt = vm_jvm_symbol("_ZTV7nmethod");
		l->vtbl_nmethod = vt ? (uintptr_t)vt + 16 : 0;
	}
	void **interp = vmstructs_static_address("AbstractInterpreter", "_code");
	int sb = field("StubQueue", "_stub_buffer"), lim = field("StubQueue", "_buffer_limit");
	if (interp && *interp && sb >= 0 && lim >= 0) {
		l->interp_lo = *(uintptr_t *)((char *)*interp + sb);
		l->interp_hi = l->interp_lo + (uintptr_t) * (int *)((char *)*interp + lim);
	}
	l->m_const_method = field("Method", "_constMethod");
	l->cm_constants = field("ConstMethod", "_constants");
	l->cm_idnum = field("ConstMethod", "_method_idnum");
	l->cm_header = (int)vmstructs_type_size("ConstMethod");
	l->cp_holder = field("ConstantPool", "_pool_holder");
	l->ik_jmethod_ids = field("InstanceKlass", "_methods_jmethod_ids");
	int anchor = field("JavaThread", "_anchor");
	int a_sp = field("JavaFrameAnchor", "_last_Java_sp"), a_pc = field("JavaFrameAnchor", "_last_Java_pc"),
	    a_fp = field("JavaFrameAnchor", "_last_Java_fp");
	if (anchor >= 0 && a_sp >= 0 && a_pc >= 0 && a_fp >= 0) {
		l->jt_anchor_sp = anchor + a_sp;
		l->jt_anchor_pc = anchor + a_pc;
		l->jt_anchor_fp = anchor + a_fp;
		l->anchor_sp = a_sp;
		l->anchor_pc = a_pc;
		l->anchor_fp = a_fp;
	} else {
		l->jt_anchor_sp = l->jt_anchor_pc = l->jt_anchor_fp = -1;
	}
	l->call_stub_return = vmstructs_static_address("StubRoutines", "_call_stub_return_address");
	l->jcw_anchor = field("JavaCallWrapper", "_anchor");
	l->jt_state = field("JavaThread", "_thread_state");
	l->jt_stack_base = field("JavaThread", "_stack_base");
	if (l->jt_stack_base < 0)
		l->jt_stack_base = field("Thread", "_stack_base");
	if (l->heap_memory < 0 || l->heap_segmap < 0 || l->heap_log2 < 0 || l->vs_low_boundary < 0 || l->vs_high < 0 ||
	    hb <= 0 || l->blob_code_begin < 0 || l->blob_code_end < 0 || l->blob_size < 0 || l->blob_frame_size < 0 ||
	    l->blob_frame_complete < 0 || l->nm_method < 0 || l->nm_level < 0 || l->nm_entry_bci < 0 || l->nm_verified_entry < 0 ||
	    (l->blob_kind < 0 && !l->vtbl_nmethod) || !l->interp_lo || l->m_const_method < 0 || l->cm_constants < 0 ||
	    l->cm_idnum < 0 || l->cm_header <= 0 || l->cp_holder < 0 || l->jt_stack_base < 0) {
		log_debug("HotSpot's structure tables lack a field the frame walker needs: typed frames and deep "
			  "recovery are off");
		return -1;
	}
	log_debug("frame walker: %d code heaps, interpreter %#lx-%#lx, nmethod %s", l->n_heaps,
		  (unsigned long)l->interp_lo, (unsigned long)l->interp_hi, l->blob_kind >= 0 ? "by kind" : "by vtable");
	__atomic_store_n(&l->ok, 1, __ATOMIC_RELEASE);
	return 0;
}

static sampler_agct_fn find_agct(void)
{
	void *f = dlsym(RTLD_DEFAULT, "AsyncGetCallTrace");
	if (!f) {
		void *h = dlopen("libjvm.so", RTLD_LAZY | RTLD_NOLOAD);
		if (h)
			f = dlsym(h, "AsyncGetCallTrace");
	}
	return (sampler_agct_fn)f;
}

/* Turns on HotSpot's DebugNonSafepoints (a diagnostic flag, so it cannot be set from options here):
 * the JIT then records debug information at every instruction, not only at safepoints, and
 * AsyncGetCallTrace attributes samples in compiled code to the right inlined method and line instead
 * of the nearest safepoint's. Methods compiled before (attach) keep their coarser information.
 * The flag lives in HotSpot's JVMFlag table (vmStructs). 1 set now, 0 was set, -1 not found. */
static int enable_debug_non_safepoints(void)
{
	void **flags = vmstructs_static_address("JVMFlag", "flags");
	size_t *count = vmstructs_static_address("JVMFlag", "numFlags");
	long name_off = vmstructs_offset("JVMFlag", "_name"), addr_off = vmstructs_offset("JVMFlag", "_addr");
	long size = vmstructs_type_size("JVMFlag");
	if (!flags || !*flags || !count || name_off < 0 || addr_off < 0 || size <= 0)
		return -1;
	for (size_t i = 0; i < *count; i++) {
		char *f = (char *)*flags + i * (size_t)size;
		const char *name = *(const char **)(f + name_off);
		if (name && strcmp(name, "DebugNonSafepoints") == 0) {
			_Bool *value = *(_Bool **)(f + addr_off);
			if (!value)
				return -1;
			if (*value)
				return 0;
			*value = 1;
			return 1;
		}
	}
	return -1;
}

int vm_init(JavaVM *vm, int live, const struct vm_hooks *h)
{
	if (initialised)
		return 0;
	jvm = vm;
	if (h)
		hooks = *h;
	if ((*vm)->GetEnv(vm, (void **)&jvmti, JVMTI_VERSION_1_2) != JNI_OK) {
		log_error("cannot get a JVMTI environment from this JVM");
		return -1;
	}
	if (threads_init() != 0) {
		log_error("cannot allocate the thread table");
		return -1;
	}
	if (enable_debug_non_safepoints() < 0)
		log_debug("DebugNonSafepoints not found: samples in compiled code go to the nearest safepoint's method");
	jvmtiCapabilities caps;
	memset(&caps, 0, sizeof(caps));
	caps.can_get_line_numbers = 1;
	caps.can_get_source_file_name = 1;
	(*jvmti)->AddCapabilities(jvmti, &caps);

	jvmtiEventCallbacks cb;
	memset(&cb, 0, sizeof(cb));
	cb.VMInit = on_vm_init;
	cb.VMDeath = on_vm_death;
	cb.ThreadStart = on_thread_start;
	cb.ThreadEnd = on_thread_end;
	cb.ClassLoad = on_class_load;
	cb.ClassPrepare = on_class_prepare;
	cb.SampledObjectAlloc = on_sampled_alloc;
	cb.DynamicCodeGenerated = on_dynamic_code;
	cb.MonitorContendedEnter = on_monitor_enter;
	cb.MonitorContendedEntered = on_monitor_entered;
	(*jvmti)->SetEventCallbacks(jvmti, &cb, sizeof(cb));
	jvmtiEvent events[] = {JVMTI_EVENT_VM_INIT, JVMTI_EVENT_VM_DEATH, JVMTI_EVENT_THREAD_START,
			       JVMTI_EVENT_THREAD_END, JVMTI_EVENT_CLASS_LOAD, JVMTI_EVENT_CLASS_PREPARE};
	for (size_t i = 0; i < sizeof(events) / sizeof(events[0]); i++)
		(*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, events[i], NULL);

	(*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_DYNAMIC_CODE_GENERATED, NULL);
	if (live)
		(*jvmti)->GenerateEvents(jvmti, JVMTI_EVENT_DYNAMIC_CODE_GENERATED);
	agct = find_agct();
	if (!agct)
		log_warn("AsyncGetCallTrace not found in this JVM: Java stacks are not available");
	if (live) {
		load_all_methods();
		vm_register_java_threads();
	}
	initialised = 1;
	return 0;
}

int vm_register_java_threads(void)
{
	JNIEnv *jni = vm_jni();
	if (!jni)
		return 0;
	jclass thread_class = (*jni)->FindClass(jni, "java/lang/Thread");
	jfieldID eetop = thread_class ? (*jni)->GetFieldID(jni, thread_class, "eetop", "J") : NULL;
	if (!eetop) {
		(*jni)->ExceptionClear(jni);
		log_debug("java.lang.Thread.eetop not found: threads started before the agent are named only");
	}
	long osthread_off = vmstructs_offset("JavaThread", "_osthread");
	if (osthread_off < 0)
		osthread_off = vmstructs_offset("Thread", "_osthread");
	long tid_off = vmstructs_offset("OSThread", "_thread_id");

	jthread self = NULL;
	(*jvmti)->GetCurrentThread(jvmti, &self);
	long env_off = 0;
	int can_map = eetop && self && osthread_off >= 0 && tid_off >= 0;
	if (can_map) {
		/* every JavaThread embeds its JNIEnv at the same offset: learn it from this thread */
		char *me = (char *)(intptr_t)(*jni)->GetLongField(jni, self, eetop);
		env_off = me ? (char *)jni - me : 0;
		can_map = me && env_off > 0 && env_off < 65536;
		if (can_map && !hotspot_layout.env_offset)
			__atomic_store_n(&hotspot_layout.env_offset, env_off, __ATOMIC_RELEASE);
	}
	jint n = 0;
	jthread *all = NULL;
	int mapped = 0;
	if ((*jvmti)->GetAllThreads(jvmti, &n, &all) != JVMTI_ERROR_NONE)
		return 0;
	for (jint i = 0; i < n; i++) {
		if (can_map) {
			char *jt = (char *)(intptr_t)(*jni)->GetLongField(jni, all[i], eetop);
			char *os = jt ? *(char **)(jt + osthread_off) : NULL;
			int tid = os ? *(int *)(os + tid_off) : 0;
			if (tid > 0) {
				uint32_t serial;
				if (!threads_lookup(tid, &serial) || !serial)
					serial = threads_set_env(tid, jt + env_off, 0);
				register_name(all[i], tid, serial);
				mapped++;
			}
		}
		(*jni)->DeleteLocalRef(jni, all[i]);
	}
	(*jvmti)->Deallocate(jvmti, (unsigned char *)all);
	if (self)
		(*jni)->DeleteLocalRef(jni, self);
	if (thread_class)
		(*jni)->DeleteLocalRef(jni, thread_class);
	return mapped;
}

void vm_refresh_thread_names(void)
{
	vm_register_java_threads();
}

/* jmethodID -> name cache: open addressing, grown at dump time only */
struct name_slot {
	jmethodID id;
	unsigned flags;
	char *name;
};
static struct name_slot *cache;
static size_t cache_cap, cache_n;
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;

void vm_forget_names(void)
{
	pthread_mutex_lock(&cache_lock);
	for (size_t i = 0; i < cache_cap; i++)
		free(cache[i].name);
	free(cache);
	cache = NULL;
	cache_cap = cache_n = 0;
	pthread_mutex_unlock(&cache_lock);
}

static size_t slot_of(jmethodID id, unsigned flags, size_t cap)
{
	uint64_t h = ((uint64_t)(uintptr_t)id ^ flags) * 0x9E3779B97F4A7C15ull;
	return (size_t)(h >> 20) & (cap - 1);
}

static void cache_put(jmethodID id, unsigned flags, const char *name)
{
	if (cache_n * 2 >= cache_cap) {
		size_t cap = cache_cap ? cache_cap * 2 : 4096;
		struct name_slot *grown = calloc(cap, sizeof(*grown));
		if (!grown)
			return;
		for (size_t i = 0; i < cache_cap; i++) {
			if (!cache[i].name)
				continue;
			size_t s = slot_of(cache[i].id, cache[i].flags, cap);
			while (grown[s].name)
				s = (s + 1) & (cap - 1);
			grown[s] = cache[i];
		}
		free(cache);
		cache = grown;
		cache_cap = cap;
	}
	size_t s = slot_of(id, flags, cache_cap);
	while (cache[s].name)
		s = (s + 1) & (cache_cap - 1);
	cache[s] = (struct name_slot){id, flags, strdup(name)};
	if (cache[s].name)
		cache_n++;
}

static const char *cache_get(jmethodID id, unsigned flags)
{
	if (!cache_cap)
		return NULL;
	size_t s = slot_of(id, flags, cache_cap);
	while (cache[s].name) {
		if (cache[s].id == id && cache[s].flags == flags)
			return cache[s].name;
		s = (s + 1) & (cache_cap - 1);
	}
	return NULL;
}

int vm_method_parts(jmethodID m, int bci, char **cls, char **name, char **desc, int *line)
{
	jclass klass = NULL;
	char *csig = NULL, *mname = NULL, *msig = NULL;
	*cls = *name = *desc = NULL;
	*line = -1;
	if (!m || (*jvmti)->GetMethodDeclaringClass(jvmti, m, &klass) != JVMTI_ERROR_NONE ||
	    (*jvmti)->GetClassSignature(jvmti, klass, &csig, NULL) != JVMTI_ERROR_NONE ||
	    (*jvmti)->GetMethodName(jvmti, m, &mname, &msig, NULL) != JVMTI_ERROR_NONE) {
		if (csig)
			(*jvmti)->Deallocate(jvmti, (unsigned char *)csig);
		return -1;
	}
	size_t n = strlen(csig);
	*cls = n >= 2 && csig[0] == 'L' ? strndup(csig + 1, n - 2) : strdup(csig);
	*name = strdup(mname);
	*desc = strdup(msig);
	jint entries = 0;
	jvmtiLineNumberEntry *table = NULL;
	if (bci >= 0 && (*jvmti)->GetLineNumberTable(jvmti, m, &entries, &table) == JVMTI_ERROR_NONE) {
		jlocation best = -1;
		for (jint i = 0; i < entries; i++)
			if (table[i].start_location <= bci && table[i].start_location > best) {
				best = table[i].start_location;
				*line = table[i].line_number;
			}
		(*jvmti)->Deallocate(jvmti, (unsigned char *)table);
	}
	(*jvmti)->Deallocate(jvmti, (unsigned char *)csig);
	(*jvmti)->Deallocate(jvmti, (unsigned char *)mname);
	(*jvmti)->Deallocate(jvmti, (unsigned char *)msig);
	JNIEnv *jni = vm_jni();
	if (jni)
		(*jni)->DeleteLocalRef(jni, klass);
	return 0;
}

const char *vm_method_name(jmethodID m, unsigned flags, char *out, size_t outlen)
{
	pthread_mutex_lock(&cache_lock);
	const char *hit = cache_get(m, flags);
	if (hit) {
		snprintf(out, outlen, "%s", hit);
		pthread_mutex_unlock(&cache_lock);
		return out;
	}
	jclass klass = NULL;
	char *cname = NULL, *mname = NULL, *msig = NULL;
	if (!m || (*jvmti)->GetMethodDeclaringClass(jvmti, m, &klass) != JVMTI_ERROR_NONE ||
	    (*jvmti)->GetClassSignature(jvmti, klass, &cname, NULL) != JVMTI_ERROR_NONE ||
	    (*jvmti)->GetMethodName(jvmti, m, &mname, &msig, NULL) != JVMTI_ERROR_NONE) {
		/* the class was unloaded since the sample was taken */
		snprintf(out, outlen, "[unknown_method]");
	} else {
		frames_java_name(cname, mname, msig, flags, out, outlen);
	}
	if (cname)
		(*jvmti)->Deallocate(jvmti, (unsigned char *)cname);
	if (mname)
		(*jvmti)->Deallocate(jvmti, (unsigned char *)mname);
	if (msig)
		(*jvmti)->Deallocate(jvmti, (unsigned char *)msig);
	JNIEnv *jni = vm_jni();
	if (klass && jni)
		(*jni)->DeleteLocalRef(jni, klass);
	cache_put(m, flags, out);
	pthread_mutex_unlock(&cache_lock);
	return out;
}
