/* Reads HotSpot's exported gHotSpotVMStructs table (the one the Serviceability Agent uses) to find field
 * offsets. Start/attach time only; never in a signal handler. */
#include "vmstructs.h"

#include <dlfcn.h>
#include <string.h>

static uint64_t sym_u64(const char *name, int *ok)
{
	uint64_t *p = dlsym(RTLD_DEFAULT, name);
	if (!p) {
		*ok = 0;
		return 0;
	}
	return *p;
}

long vmstructs_offset(const char *type, const char *field)
{
	char **base = dlsym(RTLD_DEFAULT, "gHotSpotVMStructs");
	if (!base || !*base)
		return -1;
	int ok = 1;
	uint64_t o_type = sym_u64("gHotSpotVMStructEntryTypeNameOffset", &ok);
	uint64_t o_field = sym_u64("gHotSpotVMStructEntryFieldNameOffset", &ok);
	uint64_t o_static = sym_u64("gHotSpotVMStructEntryIsStaticOffset", &ok);
	uint64_t o_offset = sym_u64("gHotSpotVMStructEntryOffsetOffset", &ok);
	uint64_t stride = sym_u64("gHotSpotVMStructEntryArrayStride", &ok);
	if (!ok || stride == 0)
		return -1;
	for (char *e = *base;; e += stride) {
		const char *t = *(const char **)(e + o_type);
		const char *f = *(const char **)(e + o_field);
		if (!t)
			break;
		if (f && *(int32_t *)(e + o_static) == 0 && strcmp(t, type) == 0 && strcmp(f, field) == 0)
			return (long)*(uint64_t *)(e + o_offset);
	}
	return -1;
}

void *vmstructs_static_address(const char *type, const char *field)
{
	char **base = dlsym(RTLD_DEFAULT, "gHotSpotVMStructs");
	if (!base || !*base)
		return NULL;
	int ok = 1;
	uint64_t o_type = sym_u64("gHotSpotVMStructEntryTypeNameOffset", &ok);
	uint64_t o_field = sym_u64("gHotSpotVMStructEntryFieldNameOffset", &ok);
	uint64_t o_static = sym_u64("gHotSpotVMStructEntryIsStaticOffset", &ok);
	uint64_t o_address = sym_u64("gHotSpotVMStructEntryAddressOffset", &ok);
	uint64_t stride = sym_u64("gHotSpotVMStructEntryArrayStride", &ok);
	if (!ok || stride == 0)
		return NULL;
	for (char *e = *base;; e += stride) {
		const char *t = *(const char **)(e + o_type);
		const char *f = *(const char **)(e + o_field);
		if (!t)
			break;
		if (f && *(int32_t *)(e + o_static) != 0 && strcmp(t, type) == 0 && strcmp(f, field) == 0)
			return *(void **)(e + o_address);
	}
	return NULL;
}
