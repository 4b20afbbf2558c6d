/*-------------------------------------------------------------------------
 *
 * jsonb_format.h
 *	  The on-disk jsonb format, as far as the navigator reads it.
 *
 * These are facts of the stored format (unchanged since PostgreSQL 9.4),
 * restated here so that the navigator builds without a server for the
 * fuzzers.  navigator_backend.c checks them against utils/jsonb.h.
 *
 * A container is a uint32 header (element or pair count, and the flags
 * below), then one JEntry per array element, or one per key followed by one
 * per value for an object, then the data of each entry in order.  A JEntry's
 * low 28 bits are the entry's length or, when JT_JENTRY_HAS_OFF is set, the
 * end offset of its data relative to the start of the data area.  Numerics
 * and nested containers are preceded by padding to a 4-byte boundary of
 * the data area, counted in the entry's length.  Object keys are strings,
 * unique, sorted by length and then by bytes.
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/jsonb/jsonb_format.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef JSONB_TOASTER_JSONB_FORMAT_H
#define JSONB_TOASTER_JSONB_FORMAT_H

/* container header */
#define JT_CONTAINER_COUNT_MASK		0x0FFFFFFF
#define JT_CONTAINER_SCALAR			0x10000000	/* a raw scalar, as a 1-array */
#define JT_CONTAINER_OBJECT			0x20000000
#define JT_CONTAINER_ARRAY			0x40000000

/* JEntry */
#define JT_JENTRY_OFFLEN_MASK		0x0FFFFFFF
#define JT_JENTRY_TYPE_MASK			0x70000000
#define JT_JENTRY_HAS_OFF			0x80000000

#define JT_JENTRY_STRING			0x00000000
#define JT_JENTRY_NUMERIC			0x10000000
#define JT_JENTRY_FALSE				0x20000000
#define JT_JENTRY_TRUE				0x30000000
#define JT_JENTRY_NULL				0x40000000
#define JT_JENTRY_CONTAINER			0x50000000

/*
 * Not a jsonb type: in the toaster's skeletons only (format.h), an entry
 * whose value is stored outside the skeleton.  Navigators over ordinary
 * jsonb reject it.
 */
#define JT_JENTRY_REF				0x60000000

/* every this many entries, a JEntry stores an end offset (JB_OFFSET_STRIDE) */
#define JT_JENTRY_OFFSET_STRIDE		32

#endif							/* JSONB_TOASTER_JSONB_FORMAT_H */
