/*-------------------------------------------------------------------------
 *
 * format.h
 *	  The jsonb toaster's stored format: a skeleton of the document, kept in
 *	  the heap row, that refers to parts kept in the table's TOAST relation.
 *
 * A jsonb value that would be TOASTed in an opted-in column is stored as a
 * custom TOAST pointer (varatt_custom, from the core patch series) whose
 * payload is:
 *
 *		JtSkeletonHeader	the TOAST relation, part count, tree size
 *		tree				tree_size bytes
 *
 * (Format version 2 adds a delta area after the tree: see delta.h.  Format
 * version 3 adds layout bytes to references: see below.)
 *
 * The tree is the document with its long values cut out.  It starts with
 * one JEntry (uint32) describing the root, followed at offset 4 by the
 * root's bytes.  A container in the tree has exactly the jsonb layout
 * (jsonb_format.h), with one addition: an entry of type JT_JENTRY_REF is a
 * value kept outside the skeleton, and its data (4-byte aligned, like a
 * container's) is a reference:
 *
 *		JtRefHeader			the value's container header, range count
 *		JtPartEntry[n]		one per part, in document order
 *		key bytes			objects split into several parts: the first
 *							key of each part after the first
 *		layout bytes		format version 3, when the range count has
 *							JT_REF_HAS_LAYOUTS: one per part (below)
 *
 * Each part is an ordinary jsonb value, compressed with the column's
 * method; the parts one statement writes are packed into one TOAST value
 * (format version 5), written by toast_save_datum().  A
 * long container is one part, or, when it is wider than the range size,
 * several: consecutive elements (or key/value pairs, keys staying sorted)
 * each forming an array (object) of their own.  A long scalar is one part
 * holding it as a raw scalar.  Every part records its raw size, its root
 * container header (type and count) and a hash of its content, so that
 * readers find an element or a key without fetching anything, and updates
 * can recognise an unchanged part (issue 6).
 *
 * Flattening walks the tree and writes every container back with the
 * layout rules of PostgreSQL's writer (jsonb_writer.h), reading the parts
 * where references are: the result is the original value, byte for byte.
 * The toaster checks this before it stores a skeleton.
 *
 * Everything in a stored pointer is read through bounds-checked accessors:
 * a corrupt pointer raises an ERROR, never a crash.  Parts are checked
 * where the toaster reads or glues them; what lies deeper in a part is
 * ordinary jsonb, trusted as PostgreSQL trusts any stored jsonb (see
 * docs/toaster.md, "Corruption").
 *
 * This header and delta.h name the on-disk structures; the files of
 * src/format/ alone read and write them.  A change of format adds a version
 * below and touches this folder only.
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/format/format.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef JSONB_TOASTER_FORMAT_H
#define JSONB_TOASTER_FORMAT_H

#include "jsonb/navigator.h"

/*
 * Format versions (varatt_custom.va_version), all read:
 *
 *	version  what it adds
 *	1        skeleton, references, parts (hashes by hash_bytes())
 *	2        version 1 with a delta area; only pointers holding deltas
 *	3        deltas or not, and references may have layout bytes
 *	4        version 3 with parts' hashes by CRC-32C (jt_part_hash())
 *	5        version 4 with parts packed: a directory entry names a byte
 *	         range of a TOAST value that may hold several parts
 *	6        version 5 with compression units: consecutive parts written
 *	         together may be compressed as one stream (below); the one
 *	         written now, but for:
 *	7        version 6 whose tree may lie outside the row, maybe with
 *	         edits of it in the row (below); written only for pointers whose
 *	         tree does, and kept by those made from them (whose tree may
 *	         come back to the row)
 *	8        version 7 whose inline skeleton may keep its tree compressed
 *	         with its parts (below), and whose tree may hold references
 *	         below a container of it that is not the root (an opened
 *	         value, skeleton_build.c); written only for such pointers
 *
 * A pointer made from a stored one by changing one part keeps its version
 * (the other parts' hashes are not recomputed), but 1 and 2 become 3; one
 * built from a whole document is of the latest.
 */
#define JT_SKELETON_VERSION_FIRST	1
#define JT_SKELETON_VERSION_LAYOUTS	3
#define JT_SKELETON_VERSION_CRC32C	4
#define JT_SKELETON_VERSION_PACKED	5
#define JT_SKELETON_VERSION_UNITS	6
#define JT_SKELETON_VERSION_TREE_OUTSIDE	7
#define JT_SKELETON_VERSION_FOLDED	8
#define JT_SKELETON_VERSION_LATEST	JT_SKELETON_VERSION_FOLDED

/*
 * Does format version version pack parts?  From version 5, the parts one
 * statement writes for a value go into one TOAST value, one after another
 * (a part's stored bytes are what a TOAST value of its own would hold), and
 * a directory entry says where in its value a part lies.  Before, every
 * part was a TOAST value of its own; such parts read as the only part of
 * their value.
 */
static inline bool
jt_version_packs(uint32 version)
{
	return version >= JT_SKELETON_VERSION_PACKED;
}

/*
 * Does format version version have compression units?  From version 6,
 * consecutive parts written together may be compressed as one stream, a
 * unit, which finds the repetitions across parts that parts compressed one
 * by one miss.  A unit's stored bytes lie in a TOAST value as a part's do;
 * every part in it names them (offset less its index in the unit, stored
 * size and method), says where in the unit's raw bytes it starts and how
 * many parts the unit has.  Its offset is the unit's plus its index, so
 * that (value, offset) still names one part: a unit of k parts is stored
 * in k bytes at least (the writer makes sure).  Reading a part decodes its
 * unit up to the part's end.
 */
static inline bool
jt_version_has_units(uint32 version)
{
	return version >= JT_SKELETON_VERSION_UNITS;
}

/*
 * May a pointer of format version version keep its tree outside the row?
 * From version 7, a skeleton whose tree is one reference (a root that left
 * whole, as a wide object of short fields does), or holds a directory no
 * row should carry (JT_ROW_MAX_RANGES), may store that tree as one
 * more part of the TOAST value its new parts go to, and keep in the row
 * only that part's directory entry: an UPDATE of another column then
 * writes a row about as long as stock's pointer, where it wrote the
 * root's directory again.  Entries of the outside tree that name parts of
 * the value holding the tree say value id 0 and size 0 (the writer knows
 * neither before it writes the value); readers take both from the entry in
 * the row.
 */
static inline bool
jt_version_has_tree_outside(uint32 version)
{
	return version >= JT_SKELETON_VERSION_TREE_OUTSIDE;
}

/*
 * A reference of more ranges than this never stays in the row: a tree
 * holding one lies outside it (format version 7).  Only the containers of
 * many megabytes are cut into that many (skeleton_build.c); the tree, a
 * directory of kilobytes then, is fetched as one part, as a one-reference
 * tree is.
 */
#define JT_ROW_MAX_RANGES		64

/*
 * May an inline skeleton of format version version be folded?  From
 * version 8, a document that fits in the row only once its short fields
 * are compressed too keeps its tree and its parts as one compressed datum
 * (JT_SKELETON_TREE_FOLDED): reading a field decodes the datum's first
 * tree_size bytes, not the document, and the row takes about what stock's
 * compressed document would.
 */
static inline bool
jt_version_may_fold(uint32 version)
{
	return version >= JT_SKELETON_VERSION_FOLDED;
}

/*
 * JtPartEntry.unit: the part's index in its unit plus one (0: not in a
 * unit), the unit's part count, and where the part starts in its raw bytes.
 */
#define JT_UNIT_INDEX_SHIFT		24
#define JT_UNIT_COUNT_SHIFT		16
#define JT_UNIT_COUNT_MASK		0xFF
#define JT_UNIT_RAW_MASK		0xFFFF
#define JT_UNIT_MAX_PARTS		JT_UNIT_COUNT_MASK
/* a unit's raw bytes: its parts start within the mask's reach */
#define JT_UNIT_MAX_RAW			JT_UNIT_RAW_MASK

static inline uint32
jt_unit_field(uint32 index, uint32 count, uint32 raw_offset)
{
	Assert(index < count && count <= JT_UNIT_MAX_PARTS &&
		   raw_offset <= JT_UNIT_RAW_MASK);
	return ((index + 1) << JT_UNIT_INDEX_SHIFT) |
		(count << JT_UNIT_COUNT_SHIFT) | raw_offset;
}

/*
 * A part's layout byte says where its bytes fall modulo 4, which is all
 * that flattening's alignment padding depends on: the part's key bytes
 * modulo 4, whether a value (element) of its root is 4-byte aligned (a
 * numeric or a container), and the bytes of the values before the first
 * such, modulo 4.  A part's layout byte depends on its content alone, and
 * with the parts' raw sizes it gives the flattened container's size
 * (jt_ref_flat_size()), so that an update of one part knows the
 * document's new size without reading the others.
 */
#define JT_REF_HAS_LAYOUTS		0x80000000	/* in JtRefHeader.nranges */
#define JT_LAYOUT_KEYS_MASK		0x03
#define JT_LAYOUT_ALIGNED		0x04
#define JT_LAYOUT_LEAD_SHIFT	3
#define JT_LAYOUT_LEAD_MASK		0x18
#define JT_LAYOUT_UNUSED_MASK	0xE0

static inline uint8
jt_layout_byte(uint64 key_bytes, bool aligned, uint64 lead)
{
	return (uint8) ((key_bytes & JT_LAYOUT_KEYS_MASK) |
					(aligned ? JT_LAYOUT_ALIGNED |
					 ((lead & 3) << JT_LAYOUT_LEAD_SHIFT) : 0));
}

/*
 * The stored structures.  Only src/format/ names them: other code reads and
 * edits payloads with the functions below, in the in-memory forms
 * JtSkeletonInfo and JtPartEntry, so that a change of the stored layout
 * touches this folder alone.
 */
typedef struct JtSkeletonHeader
{
	Oid			toastrelid;		/* TOAST relation holding the parts */
	uint32		nparts;			/* parts referenced by the tree */
	uint32		tree_size;		/* bytes of tree that follow */
} JtSkeletonHeader;

typedef struct JtRefHeader
{
	uint32		header;			/* the value's container header */
	uint32		nranges;		/* parts holding it, at least one */
} JtRefHeader;

typedef struct JtRefRange
{
	int32		rawsize;		/* as va_rawsize: raw size with varlena header */
	uint32		extinfo;		/* as va_extinfo: stored size and method */
	Oid			valueid;		/* as va_valueid, in the skeleton's relation */
	uint32		header;			/* the part's root container header */
	uint32		hash;			/* jt_part_hash() of the part's raw data */
	uint32		key_offset;		/* first key of the part, from the start */
	uint32		key_length;		/* of the reference; 0/0 if not stored */
} JtRefRange;

/* The same from format version 5: where in its TOAST value the part lies. */
typedef struct JtRefRangePacked
{
	int32		rawsize;
	uint32		extinfo;
	Oid			valueid;		/* the TOAST value holding the part */
	uint32		offset;			/* the part's first byte in that value */
	uint32		value_size;		/* bytes of that value */
	uint32		header;
	uint32		hash;
	uint32		key_offset;
	uint32		key_length;
} JtRefRangePacked;

/*
 * The same from format version 6, where a part may lie in a compression
 * unit: then extinfo is the unit's stored size and method, and offset the
 * unit's plus the part's index in it.
 */
typedef struct JtRefRangeUnits
{
	JtRefRangePacked packed;
	uint32		unit;			/* 0, or jt_unit_field() */
} JtRefRangeUnits;

/* A skeleton's header, as read from its payload. */
typedef struct JtSkeletonInfo
{
	Oid			toastrelid;
	uint32		nparts;
	uint32		tree_size;
	bool		inline_parts;	/* the parts are in the pointer (below) */
	bool		tree_outside;	/* the tree is a part (format version 7) */
	bool		tree_edited;	/* and the row keeps edits of it */
	bool		tree_folded;	/* compressed with the inline parts */
} JtSkeletonInfo;

/*
 * An inline skeleton (format version 5 on): a document small enough once
 * compressed to stay in the row keeps its skeleton's tree as any other,
 * and its parts in the pointer, after the tree, one after another as one
 * datum compressed with the column's method (or not, when that does not
 * make it smaller) in the place of the delta area.  Its directory entries
 * name value id 0, offset the part's first byte in the datum's raw bytes,
 * value_size their number, and a stored size equal to the raw one.  No
 * TOAST value, and no delta: an UPDATE rebuilds it.  The high bit of
 * JtSkeletonHeader.nparts says so.
 */
#define JT_SKELETON_INLINE_PARTS	0x80000000

/*
 * A skeleton whose tree lies outside the row (format version 7): the
 * pointer holds JtSkeletonHeader, with this bit in nparts and the tree's
 * size in tree_size, then the directory entry of the part holding the tree
 * (its hash is the tree's, its header 0), then the delta area.
 */
#define JT_SKELETON_TREE_OUTSIDE	0x40000000

/*
 * With JT_SKELETON_TREE_OUTSIDE: the tree part's entry is followed by edits
 * of that tree (tree_edits.h), then the delta area.
 */
#define JT_SKELETON_TREE_EDITED		0x20000000

/*
 * A folded inline skeleton (format version 8; with JT_SKELETON_INLINE_PARTS):
 * the pointer holds JtSkeletonHeader, tree_size the tree's raw size, then
 * one datum, compressed with the column's method, whose raw bytes are the
 * tree followed by the parts as an inline skeleton's datum holds them.
 */
#define JT_SKELETON_TREE_FOLDED		0x10000000
#define JT_SKELETON_FLAGS \
	(JT_SKELETON_INLINE_PARTS | JT_SKELETON_TREE_OUTSIDE | \
	 JT_SKELETON_TREE_EDITED | JT_SKELETON_TREE_FOLDED)

/*
 * A part's directory entry, as read from a reference (JtRefRange,
 * JtRefRangePacked or JtRefRangeUnits).  The part's stored bytes (extinfo's
 * size of them) are bytes offset .. offset + size - 1 of TOAST value
 * valueid, of value_size bytes; an unpacked part is a whole value (offset
 * 0, value_size its size).  A part in a compression unit (unit non-zero)
 * is instead raw bytes jt_entry_unit_raw_offset() .. of its unit, whose
 * stored bytes (extinfo's size) start at jt_entry_stored_offset().
 */
typedef struct JtPartEntry
{
	int32		rawsize;
	uint32		extinfo;
	Oid			valueid;
	uint32		offset;
	uint32		value_size;
	uint32		header;
	uint32		hash;
	uint32		key_offset;
	uint32		key_length;
	uint32		unit;
} JtPartEntry;

/* Where the tree starts in a payload. */
#define JT_PAYLOAD_TREE_OFFSET	((uint32) sizeof(JtSkeletonHeader))

/* The size of a directory entry in format version version. */
static inline uint32
jt_entry_size(uint32 version)
{
	if (jt_version_has_units(version))
		return (uint32) sizeof(JtRefRangeUnits);
	return jt_version_packs(version) ?
		(uint32) sizeof(JtRefRangePacked) : (uint32) sizeof(JtRefRange);
}

/*
 * The stored bytes a part is read from (what its directory entry's extinfo
 * gives): its own, or its unit's.
 */
static inline uint32
jt_entry_extsize(const JtPartEntry *entry)
{
	return entry->extinfo & VARLENA_EXTSIZE_MASK;
}

/* Does the part lie in a compression unit? */
static inline bool
jt_entry_in_unit(const JtPartEntry *entry)
{
	return entry->unit != 0;
}

/* A part's index in its unit (0 for a part not in one). */
static inline uint32
jt_entry_unit_index(const JtPartEntry *entry)
{
	return entry->unit == 0 ? 0 : (entry->unit >> JT_UNIT_INDEX_SHIFT) - 1;
}

/* The parts of a part's unit (1 for a part not in one). */
static inline uint32
jt_entry_unit_count(const JtPartEntry *entry)
{
	return entry->unit == 0 ? 1 :
		(entry->unit >> JT_UNIT_COUNT_SHIFT) & JT_UNIT_COUNT_MASK;
}

/* Where a part starts in its unit's raw bytes. */
static inline uint32
jt_entry_unit_raw_offset(const JtPartEntry *entry)
{
	return entry->unit & JT_UNIT_RAW_MASK;
}

/*
 * Where the stored bytes a part is read from start in its value: its own,
 * or its unit's.  (jt_skeleton_read_ref() checks that the index does not
 * exceed the offset.)
 */
static inline uint32
jt_entry_stored_offset(const JtPartEntry *entry)
{
	return entry->offset - jt_entry_unit_index(entry);
}

/*
 * The TOAST bytes a part accounts for: its own, or for a part of a
 * compression unit, an equal share of the unit's (the first part taking
 * what does not divide), so that a unit's parts add up to it.  Parts of a
 * unit are ranges of about the same raw size, most often: the shares are
 * what pointers' stored sizes count and what the rule on dead bytes
 * weighs (a unit's bytes stay while any of its parts is named).
 */
static inline uint32
jt_entry_stored_share(const JtPartEntry *entry)
{
	uint32		extsize = jt_entry_extsize(entry);
	uint32		count = Max(jt_entry_unit_count(entry), 1);

	return extsize / count +
		(jt_entry_unit_index(entry) == 0 ? extsize % count : 0);
}

/* Give entry dst the place where entry src's part is stored. */
static inline void
jt_entry_set_location(JtPartEntry *dst, const JtPartEntry *src)
{
	dst->extinfo = src->extinfo;
	dst->valueid = src->valueid;
	dst->offset = src->offset;
	dst->value_size = src->value_size;
	dst->unit = src->unit;
}

/* Is the part the whole of its TOAST value? */
static inline bool
jt_entry_is_whole_value(const JtPartEntry *entry)
{
	return entry->offset == 0 && !jt_entry_in_unit(entry) &&
		entry->value_size == jt_entry_extsize(entry);
}

/*
 * One number naming a stored part among those of a skeleton's table: its
 * value and where in it it lies.  0 names none.
 */
#define JT_NO_PART	((uint64) 0)

static inline uint64
jt_part_id(const JtPartEntry *entry)
{
	return ((uint64) entry->valueid << 32) | entry->offset;
}

static inline void
jt_payload_read_info(const char *payload, JtSkeletonInfo *info)
{
	JtSkeletonHeader hdr;

	memcpy(&hdr, payload, sizeof(hdr));
	info->toastrelid = hdr.toastrelid;
	info->nparts = hdr.nparts & ~JT_SKELETON_FLAGS;
	info->inline_parts = (hdr.nparts & JT_SKELETON_INLINE_PARTS) != 0;
	info->tree_outside = (hdr.nparts & JT_SKELETON_TREE_OUTSIDE) != 0;
	info->tree_edited = (hdr.nparts & JT_SKELETON_TREE_EDITED) != 0;
	info->tree_folded = (hdr.nparts & JT_SKELETON_TREE_FOLDED) != 0;
	info->tree_size = hdr.tree_size;
}

static inline void
jt_payload_write_info(char *payload, const JtSkeletonInfo *info)
{
	JtSkeletonHeader hdr;

	hdr.toastrelid = info->toastrelid;
	hdr.nparts = info->nparts |
		(info->inline_parts ? JT_SKELETON_INLINE_PARTS : 0) |
		(info->tree_outside ? JT_SKELETON_TREE_OUTSIDE : 0) |
		(info->tree_edited ? JT_SKELETON_TREE_EDITED : 0) |
		(info->tree_folded ? JT_SKELETON_TREE_FOLDED : 0);
	hdr.tree_size = info->tree_size;
	memcpy(payload, &hdr, sizeof(hdr));
}

/* Entry r of the reference whose header lies at ref_offset. */
static inline uint64
jt_entry_offset(uint64 ref_offset, uint32 r, uint32 version)
{
	return ref_offset + sizeof(JtRefHeader) +
		(uint64) r * jt_entry_size(version);
}

static inline void
jt_entry_read(const char *at, uint32 version, JtPartEntry *entry)
{
	if (jt_version_packs(version))
	{
		JtRefRangePacked stored;

		/* version 6 adds the unit after what version 5 stores */
		memcpy(&stored, at, sizeof(stored));
		entry->rawsize = stored.rawsize;
		entry->extinfo = stored.extinfo;
		entry->valueid = stored.valueid;
		entry->offset = stored.offset;
		entry->value_size = stored.value_size;
		entry->header = stored.header;
		entry->hash = stored.hash;
		entry->key_offset = stored.key_offset;
		entry->key_length = stored.key_length;
		entry->unit = 0;
		if (jt_version_has_units(version))
			memcpy(&entry->unit, at + offsetof(JtRefRangeUnits, unit),
				   sizeof(uint32));
	}
	else
	{
		JtRefRange	stored;

		memcpy(&stored, at, sizeof(stored));
		entry->rawsize = stored.rawsize;
		entry->extinfo = stored.extinfo;
		entry->valueid = stored.valueid;
		entry->offset = 0;
		entry->value_size = stored.extinfo & VARLENA_EXTSIZE_MASK;
		entry->header = stored.header;
		entry->hash = stored.hash;
		entry->key_offset = stored.key_offset;
		entry->key_length = stored.key_length;
		entry->unit = 0;
	}
}

static inline void
jt_entry_write(char *at, uint32 version, const JtPartEntry *entry)
{
	/* the writers of older versions make no units */
	if (jt_entry_in_unit(entry) && !jt_version_has_units(version))
		elog(ERROR, "a part in a compression unit cannot be named in format version %u",
			 version);
	if (jt_version_packs(version))
	{
		JtRefRangePacked stored;

		stored.rawsize = entry->rawsize;
		stored.extinfo = entry->extinfo;
		stored.valueid = entry->valueid;
		stored.offset = entry->offset;
		stored.value_size = entry->value_size;
		stored.header = entry->header;
		stored.hash = entry->hash;
		stored.key_offset = entry->key_offset;
		stored.key_length = entry->key_length;
		memcpy(at, &stored, sizeof(stored));
		if (jt_version_has_units(version))
			memcpy(at + offsetof(JtRefRangeUnits, unit), &entry->unit,
				   sizeof(uint32));
	}
	else
	{
		JtRefRange	stored;

		/* the writers of older versions store every part on its own */
		if (!jt_entry_is_whole_value(entry))
			elog(ERROR, "a packed part cannot be named in format version %u",
				 version);
		stored.rawsize = entry->rawsize;
		stored.extinfo = entry->extinfo;
		stored.valueid = entry->valueid;
		stored.header = entry->header;
		stored.hash = entry->hash;
		stored.key_offset = entry->key_offset;
		stored.key_length = entry->key_length;
		memcpy(at, &stored, sizeof(stored));
	}
}

/* Set the element count of the reference whose header lies at ref. */
static inline void
jt_ref_set_count(char *ref, uint32 count)
{
	JtRefHeader rh;

	memcpy(&rh, ref, sizeof(rh));
	rh.header = (rh.header & ~JT_CONTAINER_COUNT_MASK) | count;
	memcpy(ref, &rh, sizeof(rh));
}

/* A reference, checked and copied out of the tree. */
typedef struct JtRef
{
	uint32		header;			/* container header (JT_CONTAINER_SCALAR for a
								 * long scalar) */
	uint32		nranges;
	const JtPartEntry *ranges;	/* aligned copies */
	const char *refdata;		/* the reference's bytes, for keys */
	uint32		reflen;
	const uint8 *layouts;		/* one per range, in refdata; or NULL */
} JtRef;

/*
 * Where part r's layout byte lies in a payload, for ref read from the
 * reference at ref_offset: the layout bytes end the reference.
 */
static inline uint64
jt_layout_byte_offset(uint64 ref_offset, const JtRef *ref, uint32 r)
{
	return ref_offset + ref->reflen - ref->nranges + r;
}

/*
 * A parsed skeleton: an aligned copy of the payload and a byte source over
 * its tree, which navigators read with references allowed.
 */
typedef struct JtSkeleton
{
	JtSkeletonInfo hdr;
	const char *tree;			/* in the pointer: caller keeps it alive;
								 * or, folded, palloc'd by the parse */
	JtSource	src;
	JtNode		root;			/* a container or a reference */
	uint32		version;		/* format version */
	uint32		ndeltas;		/* parts kept as deltas (delta.h) */
	struct JtDelta *deltas;
	/*
	 * an inline skeleton's parts: as stored, and once decompressed; in a
	 * folded one they start at inline_parts_at of the raw bytes, after the
	 * tree
	 */
	const char *inline_area;
	uint32		inline_len;
	struct varlena *inline_raw;
	uint32		inline_parts_at;
	/* the flattened document's size as the pointer gives it, or 0 */
	uint32		flat_size;

	/*
	 * A tree that lies outside the row (format version 7): the entry of the
	 * part holding it, listed with the parts as long as the skeleton
	 * describes the stored pointer; and while the tree is read in, the value
	 * that entries saying value id 0 name.
	 */
	bool		has_tree_entry;
	JtPartEntry tree_entry;
	const char *tree_edits;		/* edits of it in the row (tree_edits.h) */
	uint32		tree_edits_len;
	bool		tree_missing;	/* parsed, tree not read in yet */
	JtPartEntry own_value;		/* valueid 0: no entry names it */
} JtSkeleton;

/* Does format version version hash parts as the latest does? */
static inline bool
jt_hashes_as_latest(uint32 version)
{
	return version >= JT_SKELETON_VERSION_CRC32C;
}

/*
 * Is the part stored under a directory entry (a stored part's, see
 * jt_stored_range()) compressed?  Stored in fewer bytes than it holds, or
 * in a unit, which is always compressed.
 */
static inline bool
jt_stored_compressed(const JtPartEntry *stored)
{
	return jt_entry_in_unit(stored) ||
		(int64) (stored->extinfo & VARLENA_EXTSIZE_MASK) <
		(int64) stored->rawsize - VARHDRSZ;
}

#endif							/* JSONB_TOASTER_FORMAT_H */
