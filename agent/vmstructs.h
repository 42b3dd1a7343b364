/* Reading HotSpot's exported structure tables (gHotSpotVMStructs): field offsets by type and name.
 * Start/attach time only. */
#ifndef VMSTRUCTS_H
#define VMSTRUCTS_H

#include <stdint.h>

/* Offset of a non-static field, e.g. ("OSThread", "_thread_id"), or -1 when the table or field is absent. */
long vmstructs_offset(const char *type, const char *field);
/* Address of a static field, e.g. ("CodeCache", "_low_bound"), or NULL. */
void *vmstructs_static_address(const char *type, const char *field);

/* The declared type of a field ("int", "int16_t", "CompLevel"), or NULL. */
const char *vmstructs_field_type(const char *type, const char *field);
/* sizeof a type from gHotSpotVMTypes, or -1. */
long vmstructs_type_size(const char *type);

#endif
