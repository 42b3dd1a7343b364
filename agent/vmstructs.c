/* Reads HotSpot's exported gHotSpotVMStructs table (the one the Serviceability Agent uses) to find field
 * offsets and static field addresses. Start/attach time only; never in a signal handler. */
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

/* The table entry for (type, field, static or not), or NULL; *value_off gets where the entry keeps the
 * offset (non-static) or the address (static). */
static const char *find_entry(const char *type, const char *field, int is_static, uint64_t *value_off)
{
	char **base = dlsym(RTLD_DEFAULT, "gHotSpotVMStructs");
	if (!base || !*base)
		return NULL;
	int ok = 1;
	uint64_t o_type = sym_u64("gHotSpotVMStructEntryTypeNameOffset", &ok);
	uint64_t o_field = sym_u64("gHotSpotVMStructEntryFieldNameOffset", &ok);
	uint64_t o_static = sym_u64("gHotSpotVMStructEntryIsStaticOffset", &ok);
	uint64_t o_value = sym_u64(is_static ? "gHotSpotVMStructEntryAddressOffset" : "gHotSpotVMStructEntryOffsetOffset",
				   &ok);
	uint64_t stride = sym_u64("gHotSpotVMStructEntryArrayStride", &ok);
	if (!ok || stride == 0)
		return NULL;
	for (const char *e = *base;; e += stride) {
		const char *t = *(const char *const *)(e + o_type);
		const char *f = *(const char *const *)(e + o_field);
		if (!t)
			return NULL;
		if (f && (*(const int32_t *)(e + o_static) != 0) == (is_static != 0) && strcmp(t, type) == 0 &&
		    strcmp(f, field) == 0) {
			*value_off = o_value;
			return e;
		}
	}
}

long vmstructs_offset(const char *type, const char *field)
{
	uint64_t off;
	const char *e = find_entry(type, field, 0, &off);
	return e ? (long)*(const uint64_t *)(e + off) : -1;
}

void *vmstructs_static_address(const char *type, const char *field)
{
	uint64_t off;
	const char *e = find_entry(type, field, 1, &off);
	return e ? *(void *const *)(e + off) : NULL;
}

const char *vmstructs_field_type(const char *type, const char *field)
{
	uint64_t off;
	int ok = 1;
	uint64_t o_string = sym_u64("gHotSpotVMStructEntryTypeStringOffset", &ok);
	const char *e = find_entry(type, field, 0, &off);
	if (!e || !ok)
		return NULL;
	return *(const char *const *)(e + o_string);
}

long vmstructs_type_size(const char *type)
{
	char **base = dlsym(RTLD_DEFAULT, "gHotSpotVMTypes");
	int ok = 1;
	uint64_t o_name = sym_u64("gHotSpotVMTypeEntryTypeNameOffset", &ok);
	uint64_t o_size = sym_u64("gHotSpotVMTypeEntrySizeOffset", &ok);
	uint64_t stride = sym_u64("gHotSpotVMTypeEntryArrayStride", &ok);
	if (!base || !*base || !ok || stride == 0)
		return -1;
	for (const char *e = *base;; e += stride) {
		const char *t = *(const char *const *)(e + o_name);
		if (!t)
			return -1;
		if (strcmp(t, type) == 0)
			return (long)*(const uint64_t *)(e + o_size);
	}
}
