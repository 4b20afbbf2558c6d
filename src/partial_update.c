/*-------------------------------------------------------------------------
 *
 * partial_update.c
 *	  jsonb_set(), jsonb_insert(), #-, - and || on a stored document, run
 *	  on the parts they change (patched servers only).
 *
 * "UPDATE t SET js = jsonb_set(js, '{k}', v)" on a document whose root
 * object the toaster split into ranges of keys changes one range.  The
 * builtin flattens the document, rebuilds all of it with the change, and
 * the toaster then cuts the result again, hashes every part and compares
 * each with the old value's.  Here the builtin is run on the one part whose
 * range holds the key, the document is flattened once with that part in
 * place of the stored one, and the toaster is told which part changed: it
 * stores that part alone and keeps the value ids of the others (toaster.c).
 *
 * Why the result is the builtin's: the root's keys are sorted, and each
 * range holds the keys from its first key (kept in the skeleton's
 * directory) up to the next range's first.  jsonb_set() and #- with a
 * path whose first key falls in a range, jsonb - key, and jsonb || object
 * whose keys all fall in one range change the pairs of that range only,
 * and do to them exactly what they do within the whole object.
 * Flattening puts the pairs back together in the form jsonb always
 * writes.  An object whose keys fall in several ranges is concatenated,
 * and keys of several ranges are removed (jsonb - text[]), one range at a
 * time, each change made on the result of the one before, as
 * jsonb_set(jsonb_set(...)) is.
 *
 * A root object kept in the skeleton's tree (short fields in the row, the
 * long ones in parts) is changed there: a key is set, added or removed in
 * the tree (all the keys of || or of jsonb - text[], one after the other),
 * the parts of its old value (a reference, or a container of the tree
 * holding some) are dropped, and every other part stays.  The result is a
 * pointer to the new skeleton when the tree and the references' layout
 * bytes give the document's size (not for a reference written before
 * format version 3), the document when no part is left.  A path of two
 * steps or more whose first key names a value kept in parts runs the
 * builtin on the part that holds its second step, as a longer path does
 * on a split root.
 *
 * Anything else is left to the builtin: a root that is neither, a path
 * with NULLs, a changed part that is empty or whose first key is no
 * longer the one the directory names, a key inserted by jsonb_insert() in
 * the tree, an array index not in its canonical form.
 *
 * When the new document's raw size is known without the other parts (from
 * the directory's layout bytes, format version 3; for a value written
 * before, from the two parts alone, when the change leaves the padding of
 * the values after it as it was), and the skeleton fits the row, the
 * result is a pointer like the one the toaster would store: the skeleton
 * with the changed part kept as a delta of the stored one, or carried
 * whole (a replacement record, delta.h), referring to the stored parts.
 * It can go wherever a jsonb goes, as a stored pointer can; on UPDATE of
 * the row it was made from, the toaster adopts it (jt_adopt(), through
 * the core series' adopt callback), writing the part carried whole, and
 * nothing is flattened.
 *
 * Otherwise the result is an ordinary flat jsonb, as the builtin's, so it
 * can go wherever a jsonb goes.  The patch is kept for the toaster until
 * the next patch is made, the transaction ends, or a subtransaction
 * aborts; the toaster uses it only for the very bytes made here, replacing
 * the very pointer they were made from (jt_patch_for()).  The stored parts
 * read to flatten the document are kept by the part cache, as parts of
 * that pointer: should the toaster turn the patch down (the skeleton grew
 * too large for the row, say), the general path finds them there.
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/partial_update.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#ifdef JT_CUSTOM_TOAST

#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/fmgrprotos.h"
#include "utils/jsonb.h"
#include "utils/memutils.h"

#include "delta.h"
#include "jsonb_writer.h"
#include "part_cache.h"
#include "part_fetch.h"
#include "partial_update.h"
#include "toaster.h"
#include "xact_reset.h"

/* patches of larger documents are not kept: bounded memory */
#define MAX_KEPT_BYTES	(1024 * 1024)

/* The last patch made, kept for the toaster; none when document is NULL. */
static MemoryContext patch_cxt = NULL;
static JtPatch last_patch;
static struct varlena *last_document = NULL;

static void
forget_patch(void)
{
	if (patch_cxt)
		MemoryContextReset(patch_cxt);
	last_document = NULL;
}

/* What the functions here can do with their first argument. */
typedef enum StoredShape
{
	SHAPE_OTHER,				/* not stored by the toaster, or no object */
	SHAPE_SPLIT_ROOT,			/* the root object is split into parts */
	SHAPE_TREE_ROOT,			/* the root object is in the tree */
} StoredShape;

/* What change_path() does at the end of its path. */
typedef enum PathChange
{
	PATH_SET,					/* jsonb_set() */
	PATH_DELETE,				/* #- */
	PATH_INSERT,				/* jsonb_insert() */
} PathChange;

/* Parse a value stored by the toaster into skel (and ref, if split). */
static StoredShape
open_stored(Datum value, JtSkeleton *skel, JtRef *ref)
{
	struct varlena *attr = (struct varlena *) DatumGetPointer(value);

	if (!VARATT_IS_EXTERNAL_CUSTOM(attr) ||
		custom_toaster_id(attr) != JSONB_TOASTER_ID)
		return SHAPE_OTHER;
	jt_parse_pointer(attr, skel);
	if (!jt_node_is_object(&skel->root))
		return SHAPE_OTHER;
	if (skel->root.kind == JT_NODE_CONTAINER)
		return SHAPE_TREE_ROOT;
	jt_skeleton_read_ref(skel, &skel->root, ref);
	/* the root's parts are the only ones, in directory order */
	return skel->hdr.nparts == ref->nranges ? SHAPE_SPLIT_ROOT : SHAPE_OTHER;
}

/*
 * Where a part's root object lies in the flattened document: its key
 * bytes, and the bytes its values take (padding included) for each of the
 * four positions modulo 4 they may start at, since jsonb's writer starts
 * every numeric and container on a 4-byte boundary of the document.
 */
typedef struct PartLayout
{
	uint32		count;			/* key/value pairs */
	int64		key_bytes;
	uint64		value_end[4];	/* from positions 0, 1, 2, 3 */
	JtNode	   *entries;		/* the keys, then the values, for deltas */
} PartLayout;

/* What splice_object() did: the pair at index set, added or removed. */
typedef struct Splice
{
	uint32		index;			/* of that pair, in both objects */
	bool		removed;		/* the old object has a pair there */
	bool		added;			/* the new object has one */
	uint32		keylen;
	JtNodeKind	value_kind;		/* the new pair's value, if added */
	uint32		value_length;
} Splice;

/*
 * Lay out a part from its root (in src), describing every entry of it
 * (checked against the part's bounds) on the way.
 *
 * The values' ends from the four positions are followed as the end from
 * position 0 plus a difference for each.  Once a value has been aligned
 * the four ends agree modulo 4, so every later alignment pads them alike
 * and the differences stay: they are computed at the first aligned value.
 */
typedef struct ValueEnds
{
	uint64		end;			/* from position 0 */
	uint64		diff[4];		/* from each position, less end */
	bool		aligned_once;
} ValueEnds;

static inline void
value_ends_begin(ValueEnds *ends)
{
	ends->end = 0;
	for (int phase = 0; phase < 4; phase++)
		ends->diff[phase] = phase;
	ends->aligned_once = false;
}

static inline void
value_ends_add(ValueEnds *ends, JtNodeKind kind, uint32 length)
{
	bool		aligned = kind == JT_NODE_NUMERIC || kind == JT_NODE_CONTAINER;

	if (aligned && !ends->aligned_once)
	{
		for (int phase = 1; phase < 4; phase++)
			ends->diff[phase] = TYPEALIGN(4, ends->end + phase) -
				TYPEALIGN(4, ends->end);
		ends->aligned_once = true;
	}
	ends->end = length + (aligned ? TYPEALIGN(4, ends->end) : ends->end);
}

static inline void
value_ends_finish(const ValueEnds *ends, PartLayout *layout)
{
	for (int phase = 0; phase < 4; phase++)
		layout->value_end[phase] = ends->end + ends->diff[phase];
}

static void
layout_part_root(JtSource *src, const JtNode *root, PartLayout *layout)
{
	uint32		count = jt_node_count(root);
	ValueEnds	ends;

	layout->count = count;
	layout->key_bytes = 0;
	layout->entries = palloc(sizeof(JtNode) * Max(2 * count, 1));
	jt_nav_describe_all(src, root, layout->entries);

	for (uint32 i = 0; i < count; i++)
		layout->key_bytes += layout->entries[i].length;
	value_ends_begin(&ends);
	for (uint32 i = count; i < 2 * count; i++)
		value_ends_add(&ends, layout->entries[i].kind, layout->entries[i].length);
	value_ends_finish(&ends, layout);
}

static int64
layout_value_span(const PartLayout *layout, int phase)
{
	return (int64) layout->value_end[phase] - phase;
}

static void
part_layout(const struct varlena *part, PartLayout *layout)
{
	JtSource	src;
	JtNode		root;

	jt_memory_source(&src, VARDATA(part), VARSIZE(part) - VARHDRSZ, false);
	jt_nav_root(&src, &root);
	layout_part_root(&src, &root, layout);
}

/* Walk every entry of a part's root, each checked against its bounds. */
static void
check_part_entries(const struct varlena *part)
{
	PartLayout	layout;

	part_layout(part, &layout);
	if (layout.entries)
		pfree(layout.entries);
}

/*
 * The layout of a part made by splicing one laid out as old: the pairs
 * kept are the same bytes, so their lengths are known without walking the
 * new part's entries.
 */
static void
layout_spliced(const PartLayout *old, const Splice *splice,
			   PartLayout *layout)
{
	const JtNode *values = old->entries + old->count;
	ValueEnds	ends;

	layout->count = old->count - (splice->removed ? 1 : 0) +
		(splice->added ? 1 : 0);
	layout->key_bytes = old->key_bytes;
	if (splice->removed && !splice->added)
		layout->key_bytes -= splice->keylen;
	else if (splice->added && !splice->removed)
		layout->key_bytes += splice->keylen;
	layout->entries = NULL;

	value_ends_begin(&ends);
	for (uint32 i = 0; i < splice->index; i++)
		value_ends_add(&ends, values[i].kind, values[i].length);
	if (splice->added)
		value_ends_add(&ends, splice->value_kind, splice->value_length);
	for (uint32 i = splice->index + (splice->removed ? 1 : 0);
		 i < old->count; i++)
		value_ends_add(&ends, values[i].kind, values[i].length);
	value_ends_finish(&ends, layout);
}

/* A part read for a change. */
typedef struct OldPart
{
	struct varlena *content;	/* what it reads as */
	struct varlena *base;		/* what is stored for it: itself, or the
								 * base it is a delta of */
	uint32		count;			/* pairs */
	bool		described;		/* layout is set */
	PartLayout	layout;
} OldPart;

/*
 * Read part r of a stored value, checked against its directory entry and
 * layout byte, as any read of a whole part is.  With describe (for the
 * builtins, which trust what they read, and for the layout of a value
 * without layout bytes), every entry of its root is checked against the
 * part's bounds too, and the part laid out on the way.
 * A key spliced in or out needs neither: the pairs around it are copied
 * as the flattener copies them, entry by entry against the bounds.
 */
static void
fetch_part(JtSkeleton *skel, const JtRef *ref, uint32 r, bool describe,
		   OldPart *old)
{
	JtSource	src;
	JtNode		root;

	old->content = jt_read_part_content(skel, &ref->ranges[r], &old->base);
	jt_part_check(&src, &ref->ranges[r], ref->layouts ? ref->layouts[r] : -1,
				  old->content, &root);
	old->count = jt_node_count(&root);
	old->described = describe;
	if (describe)
		layout_part_root(&src, &root, &old->layout);
}

/*
 * Could a document changed by delta bytes grow past what jsonb can hold?
 * Then the builtin runs, for its own error.  Alignment padding may add up
 * to 3 bytes an entry, and each added pair 8 bytes of JEntries.
 */
static bool
might_overflow(struct varlena *pointer, int64 delta, uint32 count)
{
	varatt_custom header;

	VARATT_CUSTOM_GET_HEADER(header, pointer);
	return (int64) header.va_rawsize + delta + 11 * (int64) count + 64 >
		(int64) JT_JENTRY_OFFLEN_MASK;
}

/*
 * Copy count entries of a container, from entry first on.  A skeleton's
 * tree holds references, which the copier of plain containers rejects:
 * its few entries are copied one by one.
 */
static void
copy_entries(JtWriter *w, JtSource *src, const JtNode *container,
			 uint32 first, uint32 count)
{
	JtEntryIter it;
	JtNode		entry;

	if (!src->refs_allowed)
	{
		jt_copy_entries(w, src, container, first, count);
		return;
	}
	jt_nav_iter_begin(src, container, &it);
	jt_nav_iter_seek(src, &it, first);
	for (uint32 i = 0; i < count; i++)
	{
		if (!jt_nav_iter_next(src, &it, &entry))
			jt_nav_corrupt(src, "a container has fewer entries than its count");
		jt_writer_entry(w, jt_node_entry_type(&entry),
						jt_source_read(src, entry.offset, entry.length),
						entry.length);
	}
}

/*
 * An object of src with one key set to a value (a node of vsrc), added if
 * create and missing, or removed when vnode is NULL: the pairs around it
 * are copied as they are.  The object is written after four bytes left
 * for the caller (a varlena header, or a tree's root JEntry).  NULL when
 * nothing changes.  What changed goes to *splice.
 */
static char *
splice_object(JtSource *src, const JtNode *object, const char *key,
			  uint32 keylen, JtSource *vsrc, const JtNode *vnode, bool create,
			  uint32 *len, Splice *splice)
{
	JtWriter	w;
	StringInfoData buf;
	uint32		n = jt_node_count(object);
	uint32		i;
	uint32		after;
	bool		found;

	found = jt_nav_object_find(src, object, key, keylen, &i);
	if (!found && (vnode == NULL || !create))
		return NULL;
	/* the pairs after the one set, added or removed */
	after = found ? n - i - 1 : n - i;
	splice->index = i;
	splice->removed = found;
	splice->added = vnode != NULL;
	splice->keylen = keylen;
	if (vnode)
	{
		splice->value_kind = vnode->kind;
		splice->value_length = vnode->length;
	}

	initStringInfo(&buf);
	appendStringInfoSpaces(&buf, sizeof(uint32));
	jt_writer_begin(&w, &buf, (object->header & ~JT_CONTAINER_COUNT_MASK) |
					(n - (found ? 1 : 0) + (vnode ? 1 : 0)));
	copy_entries(&w, src, object, 0, i);
	if (vnode)
		jt_writer_entry(&w, JT_JENTRY_STRING, key, keylen);
	copy_entries(&w, src, object, n - after, after);
	copy_entries(&w, src, object, n, i);
	if (vnode)
		jt_writer_entry(&w, jt_node_entry_type(vnode),
						jt_source_read(vsrc, vnode->offset, vnode->length),
						vnode->length);
	copy_entries(&w, src, object, 2 * n - after, after);
	jt_writer_end(&w);
	*len = buf.len;
	return buf.data;
}

/*
 * A part (an object) spliced as splice_object() says; itself if unchanged
 * (and *splice not set).
 */
static struct varlena *
splice_part(struct varlena *part, const char *key, uint32 keylen,
			JtSource *vsrc, const JtNode *vnode, bool create, Splice *splice)
{
	JtSource	src;
	JtNode		root;
	char	   *spliced;
	uint32		len;

	jt_memory_source(&src, VARDATA(part), VARSIZE(part) - VARHDRSZ, false);
	jt_nav_root(&src, &root);
	spliced = splice_object(&src, &root, key, keylen, vsrc, vnode, create, &len,
							splice);
	if (spliced == NULL)
		return part;
	SET_VARSIZE(spliced, len);
	return (struct varlena *) spliced;
}

/* The value of a jsonb datum as a node: a raw scalar's element, or the root. */
static void
jsonb_value_node(Jsonb *value, JtSource *src, JtNode *node)
{
	JtNode		root;

	jt_memory_source(src, (const char *) &value->root,
					 VARSIZE(value) - VARHDRSZ, false);
	jt_nav_root(src, &root);
	if (jt_node_is_scalar_root(&root))
		jt_nav_entry(src, &root, 0, node);
	else
		*node = root;
}

/*
 * The raw size of the document made by putting a new part (laid out as
 * new) in place of part r (old) of the nranges of a split root object
 * stored with raw size old_rawsize, when these two parts alone tell it;
 * false when it depends on where the part lies modulo 4 in the document.
 *
 * The root's keys come before all the values: a change of the part's key
 * bytes by other than a multiple of 4 moves the padding of the values of
 * the parts before it, which are not at hand, unless there are none.  The
 * part's values start at a position modulo 4 not known here: the document
 * is known to grow by the same amount wherever they start, and the values
 * after them to keep their padding, when the growth is the same for the
 * four positions and a multiple of 4 (or no part follows).
 */
static bool
patched_raw_size(int32 old_rawsize, const PartLayout *old,
				 const PartLayout *new, uint32 r, uint32 nranges,
				 int32 *rawsize)
{
	int64		shift;
	int64		growth = 0;

	shift = new->key_bytes - old->key_bytes;
	if (r > 0 && shift % 4 != 0)
		return false;
	for (int phase = 0; phase < 4; phase++)
	{
		int			new_phase = (int) (((phase + shift) % 4 + 4) % 4);
		int64		g;

		/* JEntries (8 bytes a pair) and keys, then the values */
		g = 8 * ((int64) new->count - old->count) + shift +
			layout_value_span(new, new_phase) -
			layout_value_span(old, phase);
		if (phase > 0 && g != growth)
			return false;
		growth = g;
	}
	if (r + 1 < nranges && growth % 4 != 0)
		return false;
	if ((int64) old_rawsize + growth > (int64) JT_JENTRY_OFFLEN_MASK)
		return false;
	*rawsize = (int32) (old_rawsize + growth);
	return true;
}

/*
 * The raw size of the document made by putting a new part (with directory
 * entry range, and layout byte new_byte or laid out as new) in place of
 * part r (old) of a stored split root object (pointer, parsed into skel and
 * ref), when known without reading the other parts: from the layout bytes
 * of the directory (format version 3), whose sum for the stored document
 * is checked against its raw size, or else when the two parts alone tell
 * it.
 */
static bool
patched_document_size(struct varlena *pointer, JtSkeleton *skel,
					  const JtRef *ref, uint32 r, const OldPart *old,
					  const PartLayout *new, uint8 new_byte,
					  const JtRefRange *range, int32 *rawsize)
{
	varatt_custom header;
	JtRef		patched = *ref;
	JtRefRange *ranges;
	uint8	   *layouts;
	uint64		size;

	VARATT_CUSTOM_GET_HEADER(header, pointer);
	if (ref->layouts == NULL)
		return patched_raw_size(header.va_rawsize, &old->layout, new, r,
								ref->nranges, rawsize);
	if (!jt_ref_flat_size(ref, &size) ||
		size + VARHDRSZ != (uint64) header.va_rawsize)
		jt_nav_corrupt(&skel->src, "a reference's layout bytes do not add up to the value's raw size");

	ranges = palloc(ref->nranges * sizeof(JtRefRange));
	memcpy(ranges, ref->ranges, ref->nranges * sizeof(JtRefRange));
	ranges[r] = *range;
	layouts = palloc(ref->nranges);
	memcpy(layouts, ref->layouts, ref->nranges);
	layouts[r] = new_byte;
	patched.ranges = ranges;
	patched.layouts = layouts;
	/* the stored reference gave a size: so does the patched one */
	if (!jt_ref_flat_size(&patched, &size))
		elog(ERROR, "jsonb_toaster: a patched reference has no size");
	pfree(ranges);
	pfree(layouts);
	if (size + VARHDRSZ > JT_JENTRY_OFFLEN_MASK)
		return false;
	*rawsize = (int32) (size + VARHDRSZ);
	return true;
}

static void
keep_patch(const struct varlena *pointer, const char *payload,
		   uint32 payload_len, uint32 range_offset,
		   const struct varlena *part, const struct varlena *base,
		   const JtRefRange *base_range, uint32 largest_sibling,
		   const struct varlena *document)
{
	Size		pointer_size = VARSIZE_EXTERNAL(pointer);
	MemoryContext old;

	forget_patch();
	if (pointer_size + payload_len + (part ? VARSIZE(part) : 0) +
		(base ? VARSIZE(base) : 0) + VARSIZE(document) > MAX_KEPT_BYTES)
		return;
	jt_reset_at_xact_end(forget_patch);
	if (patch_cxt == NULL)
		patch_cxt = AllocSetContextCreate(TopMemoryContext,
										  "jsonb_toaster partial update",
										  ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(patch_cxt);
	last_patch.old_pointer = palloc(pointer_size);
	memcpy((char *) last_patch.old_pointer, pointer, pointer_size);
	last_patch.payload = palloc(payload_len);
	memcpy((char *) last_patch.payload, payload, payload_len);
	last_patch.payload_len = payload_len;
	last_patch.range_offset = range_offset;
	last_patch.part = NULL;
	last_patch.base = NULL;
	last_patch.base_entries = NULL;
	last_patch.part_entries = NULL;
	last_patch.same_head = 0;
	last_patch.same_tail = 0;
	last_patch.carried_len = 0;
	last_patch.largest_sibling = largest_sibling;
	memset(&last_patch.base_range, 0, sizeof(last_patch.base_range));
	if (part)
	{
		last_patch.part = palloc(VARSIZE(part));
		memcpy((char *) last_patch.part, part, VARSIZE(part));
	}
	if (base)
	{
		last_patch.base = palloc(VARSIZE(base));
		memcpy((char *) last_patch.base, base, VARSIZE(base));
		last_patch.base_range = *base_range;
	}
	last_document = palloc(VARSIZE(document));
	memcpy(last_document, document, VARSIZE(document));
	MemoryContextSwitchTo(old);
}

/* The stored value again, as a result that is the caller's to keep. */
static struct varlena *
copy_of_pointer(const struct varlena *pointer)
{
	struct varlena *copy = palloc(VARSIZE_EXTERNAL(pointer));

	memcpy(copy, pointer, VARSIZE_EXTERNAL(pointer));
	return copy;
}

#ifdef USE_ASSERT_CHECKING
/*
 * The size a returned pointer tells (rawsize) is the size flattening gives,
 * unless the layout bytes of parts not read lie (which reading the value
 * will report): checked in builds for testing.  patched is the pointer's
 * skeleton, newpart (part r) its changed part, if any; what names the
 * disagreement.
 */
static void
check_told_size(struct varlena *pointer, JtSkeleton *patched, uint32 r,
				struct varlena *newpart, uint64 rawsize, const char *what)
{
	struct varlena *flat = jt_flatten_changed(pointer, patched, r, newpart,
											  false);

	if (VARSIZE(flat) != rawsize)
		jt_nav_corrupt(&patched->src, what);
	pfree(flat);
}
#endif

/*
 * Where the reference whose part a change replaces lies: the root of the
 * skeleton, or a value of a root object kept in the tree.
 */
typedef struct RefSite
{
	bool		is_root;
	uint32		offset;			/* of its JtRefHeader, in the tree */
	uint32		parts_before;	/* parts flattened before its first */
} RefSite;

/* The site of a split root's reference. */
static inline RefSite
root_site(const JtSkeleton *skel)
{
	RefSite		site = {true, skel->root.offset, 0};

	return site;
}

/*
 * The raw size of the document a patched skeleton stands for, from its
 * tree and its references' layout bytes (format version 3): false if they
 * do not tell it, or it is too large for a jsonb.
 */
static bool
tree_document_size(JtSkeleton *patched, int32 *rawsize)
{
	uint64		size;

	if (!jt_skeleton_flat_size(patched, &size) ||
		size + VARHDRSZ > JT_JENTRY_OFFLEN_MASK)
		return false;
	*rawsize = (int32) (size + VARHDRSZ);
	return true;
}

/*
 * The document made by putting newpart in place of part r (old, kept in
 * TOAST as old->base) of the stored value (a pointer parsed into skel, and
 * ref, the reference at site), or NULL when the skeleton cannot stay as
 * it is: newpart empty, or not of ref's kind, or starting with another
 * key than the one the directory names, or the document too large.  A part that did not change keeps its directory
 * entry, and the toaster will keep it; for one that did, the toaster may
 * keep base and store the change as a delta of it.  splice tells how
 * newpart was made from the old part, when splice_part() made it; or NULL.
 */
static struct varlena *
apply_patch(struct varlena *pointer, JtSkeleton *skel, const JtRef *ref,
			const RefSite *site, uint32 r, const OldPart *old,
			struct varlena *newpart, const Splice *splice)
{
	struct varlena *oldpart = old->content;
	struct varlena *base = old->base;
	JtSource	src;
	JtNode		root;
	JtSkeleton	patched;
	JtRefHeader rh;
	JtRefRange	range;
	char	   *payload;
	uint32		payload_len;
	uint32		ref_offset;
	uint32		range_offset;
	uint32		count;
	uint32		carried_len;
	bool		taken;
	struct varlena *document;
	StringInfoData buf;
	JtRefRange	base_range;
	PartLayout	new_layout;
	uint8		new_byte = 0;
	uint32		largest = 0;

	if (VARSIZE(newpart) == VARSIZE(oldpart) &&
		memcmp(newpart, oldpart, VARSIZE(oldpart)) == 0)
	{
		/* the document is the one stored: so is the result */
		elog(DEBUG1, "jsonb_toaster: part %u of %u unchanged", r + 1,
			 ref->nranges);
		return copy_of_pointer(pointer);
	}

	/* the builtin's result is plain, and a container like its argument */
	jt_memory_source(&src, VARDATA(newpart), VARSIZE(newpart) - VARHDRSZ,
					 false);
	jt_nav_root(&src, &root);
	if ((root.header & JT_CONTAINER_SCALAR) ||
		jt_node_is_object(&root) != ((ref->header & JT_CONTAINER_OBJECT) != 0) ||
		jt_node_count(&root) == 0)
		return NULL;
	if (r > 0 && jt_node_is_object(&root))
	{
		JtNode		key;
		const JtRefRange *old = &ref->ranges[r];

		jt_nav_entry(&src, &root, 0, &key);
		if (jt_key_cmp(jt_source_read(&src, key.offset, key.length), key.length,
					   ref->refdata + old->key_offset, old->key_length) != 0)
			return NULL;
	}
	count = (ref->header & JT_CONTAINER_COUNT_MASK) -
		(ref->ranges[r].header & JT_CONTAINER_COUNT_MASK) +
		jt_node_count(&root);
	/*
	 * Without layout bytes, the new part's layout, to tell the document's
	 * size from the two parts: from the splice, or a walk of it.
	 */
	new_layout.entries = NULL;
	if (ref->layouts == NULL && splice)
	{
		layout_spliced(&old->layout, splice, &new_layout);
#ifdef USE_ASSERT_CHECKING
		{
			PartLayout	walked;

			part_layout(newpart, &walked);
			Assert(walked.count == new_layout.count &&
				   walked.key_bytes == new_layout.key_bytes &&
				   memcmp(walked.value_end, new_layout.value_end,
						  sizeof(walked.value_end)) == 0);
		}
#endif
	}
	else if (ref->layouts == NULL)
		part_layout(newpart, &new_layout);
	if (count > JT_CONTAINER_COUNT_MASK ||
		might_overflow(pointer, (int64) VARSIZE(newpart) - VARSIZE(oldpart),
					   count))
		return NULL;

	/*
	 * The stored payload, with the count and the part's entry rewritten,
	 * and the deltas of the other parts.
	 */
	base_range = jt_stored_range(skel, &ref->ranges[r]);
	initStringInfo(&buf);
	appendBinaryStringInfo(&buf, VARDATA_CUSTOM(pointer),
						   sizeof(JtSkeletonHeader) + skel->hdr.tree_size);
	jt_delta_area_copy(skel, base_range.valueid, true, &buf);
	payload = buf.data;
	payload_len = buf.len;
	/* parts carried whole by a pointer this was made from: not kept */
	carried_len = jt_delta_carried_len(skel, base_range.valueid);
	ref_offset = sizeof(JtSkeletonHeader) + site->offset;
	memcpy(&rh, payload + ref_offset, sizeof(rh));
	rh.header = (rh.header & ~JT_CONTAINER_COUNT_MASK) | count;
	memcpy(payload + ref_offset, &rh, sizeof(rh));

	range_offset = ref_offset + sizeof(JtRefHeader) + r * sizeof(JtRefRange);
	memcpy(&range, payload + range_offset, sizeof(range));
	range.rawsize = VARSIZE(newpart);
	/* not stored yet: sized as an uncompressed value, with no value id */
	range.extinfo = VARSIZE(newpart) - VARHDRSZ;
	range.valueid = InvalidOid;
	range.header = root.header;
	range.hash = jt_part_hash(skel->version, VARDATA(newpart),
							  VARSIZE(newpart) - VARHDRSZ);
	memcpy(payload + range_offset, &range, sizeof(range));
	if (ref->layouts)
	{
		/* the layout bytes end the reference (skeleton.h) */
		new_byte = jt_part_layout(&src, &root);
		payload[ref_offset + ref->reflen - ref->nranges + r] = (char) new_byte;
	}

	/*
	 * Checks the new directory as any stored one.  When the document's raw
	 * size is known without it, a pointer is returned in place of the
	 * document, for the toaster to adopt; otherwise the document is
	 * flattened, keeping the other parts read for the general path only if
	 * the toaster may turn the change down.
	 */
	/* the old pointer's tree, changed: read as of its version */
	jt_skeleton_parse(&patched, payload, payload_len, skel->version);
	for (uint32 q = 0; q < ref->nranges; q++)
		largest = Max(largest, (uint32) ref->ranges[q].rawsize);
	taken = jt_patch_may_be_taken(payload_len - sizeof(JtSkeletonHeader) -
								  carried_len, VARSIZE(newpart), largest);
	if (taken && base != NULL)
	{
		int32		rawsize;
		struct varlena *result = NULL;
		bool		whole = false;

		if (site->is_root ?
			patched_document_size(pointer, skel, ref, r, old, &new_layout,
								  new_byte, &range, &rawsize) :
			tree_document_size(&patched, &rawsize))
		{
			/* the entries walked, and the pairs the splice kept, serve the delta */
			JtPatch		patch = {
				.payload = payload,
				.payload_len = payload_len,
				.range_offset = range_offset,
				.part = newpart,
				.base = base,
				.base_range = base_range,
				.old_pointer = pointer,
				.base_entries = base == oldpart && old->described ?
				old->layout.entries : NULL,
				.part_entries = new_layout.entries,
				.carried_len = carried_len,
				.largest_sibling = largest,
			};

			if (splice && base == oldpart)
			{
				patch.same_head = splice->index;
				patch.same_tail = old->count - splice->index -
					(splice->removed ? 1 : 0);
			}
			result = jt_patch_pointer(&patch, rawsize, &whole);
		}
		if (result != NULL)
		{
#ifdef USE_ASSERT_CHECKING
			check_told_size(pointer, &patched, site->parts_before + r, newpart,
							(uint64) rawsize,
							"the layout bytes of the parts give another size than flattening");
#endif
			elog(DEBUG1, "jsonb_toaster: changed part %u of %u, returned %s",
				 r + 1, ref->nranges, whole ? "whole" : "as a delta");
			pfree(payload);
			return result;
		}
	}

	/*
	 * The flattened document goes to the builtins, which trust what they
	 * read: a part spliced from one whose entries were not walked is walked
	 * now, each entry checked against its bounds (a pointer is checked by
	 * whoever reads it).
	 */
	if (!old->described)
		check_part_entries(newpart);
	document = jt_flatten_changed(pointer, &patched, site->parts_before + r,
								  newpart, !taken);

	keep_patch(pointer, payload, payload_len, range_offset, newpart, base,
			   &base_range, largest, document);
	elog(DEBUG1, "jsonb_toaster: changed part %u of %u in place", r + 1,
		 ref->nranges);
	pfree(payload);
	return document;
}

/* What splice_tree() did. */
typedef enum TreeSplice
{
	TREE_UNCHANGED,				/* a key to remove that is not there */
	TREE_SPLICED,
} TreeSplice;

/* The parts a change of the tree no longer refers to. */
typedef struct DroppedParts
{
	List	   *valueids;		/* OIDs of their stored parts */
	uint64		stored;			/* the TOAST bytes they take */
} DroppedParts;

/*
 * Add the parts of a reference to *dropped (a JtRefVisitor).  A part kept
 * as a delta has its base's value id and stored size in its entry
 * (jt_stored_range() keeps them).
 */
static void
drop_ref_parts(void *arg, const JtRef *ref, List *path)
{
	DroppedParts *dropped = (DroppedParts *) arg;

	for (uint32 r = 0; r < ref->nranges; r++)
	{
		dropped->valueids = lappend_oid(dropped->valueids,
										ref->ranges[r].valueid);
		dropped->stored += ref->ranges[r].extinfo & VARLENA_EXTSIZE_MASK;
	}
}

/*
 * Set key (to vnode, a node of vsrc; added if create and missing) or
 * remove it (vnode NULL) in the root object kept in skel's tree: once
 * spliced, *patched gets the new skeleton, parsed (and so checked, as any
 * stored one) from *payload, allocated here; its parts and deltas are
 * skel's, but those of the key's old value (a container of the tree, or a
 * reference), which go to *dropped.
 */
static TreeSplice
splice_tree(JtSkeleton *skel, const char *key, uint32 keylen, JtSource *vsrc,
			const JtNode *vnode, bool create, JtSkeleton *patched,
			char **payload, uint32 *payload_len, DroppedParts *dropped)
{
	JtNode		current;
	JtSkeletonHeader hdr;
	Splice		splice;
	char	   *tree;
	uint32		tree_len;
	uint32		root_entry;
	StringInfoData buf;
	DroppedParts here = {NIL, 0};
	Oid		   *except;

	tree = splice_object(&skel->src, &skel->root, key, keylen, vsrc, vnode,
						 create, &tree_len, &splice);
	if (tree == NULL)
		return TREE_UNCHANGED;
	root_entry = JT_JENTRY_CONTAINER | (tree_len - sizeof(uint32));
	memcpy(tree, &root_entry, sizeof(uint32));
	if (splice.removed &&
		jt_nav_object_get(&skel->src, &skel->root, key, keylen, &current))
		jt_skeleton_walk_below(skel, &current, drop_ref_parts, &here);
	if ((uint32) list_length(here.valueids) > skel->hdr.nparts)
		jt_nav_corrupt(&skel->src, "a tree refers to more parts than its header counts");

	hdr = skel->hdr;
	hdr.tree_size = tree_len;
	hdr.nparts -= list_length(here.valueids);
	initStringInfo(&buf);
	appendBinaryStringInfo(&buf, (const char *) &hdr, sizeof(hdr));
	appendBinaryStringInfo(&buf, tree, tree_len);
	/* the other parts stay, with their deltas */
	except = palloc(Max(list_length(here.valueids), 1) * sizeof(Oid));
	for (int i = 0; i < list_length(here.valueids); i++)
		except[i] = list_nth_oid(here.valueids, i);
	jt_delta_area_copy_except(skel, except, list_length(here.valueids), true,
							  &buf);
	pfree(except);
	pfree(tree);
	dropped->valueids = list_concat(dropped->valueids, here.valueids);
	dropped->stored += here.stored;
	/* of the old pointer's version: it is that pointer, changed */
	jt_skeleton_parse(patched, buf.data, buf.len, skel->version);
	*payload = buf.data;
	*payload_len = buf.len;
	return TREE_SPLICED;
}

/*
 * The document made by setting n keys (keys[i] to vnodes[i], nodes of
 * vsrc; added if create and missing), or removing them (vnodes NULL), in
 * the root object kept in a skeleton's tree: the parts stay as they are,
 * but those of the keys' old values (containers of the tree, references).
 * A copy of pointer when no key to remove is there.  NULL when the
 * builtin should do it: the tree would outgrow the row, or parts are
 * dropped and the size of the document is not known without reading them
 * (the toaster's general path then finds the parts kept).
 */
static struct varlena *
apply_tree_patch(struct varlena *pointer, JtSkeleton *skel, uint32 n,
				 const char *const *keys, const uint32 *keylens,
				 JtSource *vsrc, const JtNode *vnodes, bool create)
{
	JtSkeleton	steps[2];		/* each key's, the one before's */
	char	   *payload = NULL;
	uint32		payload_len = 0;
	int64		growth = 0;
	uint64		flat_size;
	bool		taken;
	struct varlena *document;
	DroppedParts dropped = {NIL, 0};

	for (uint32 i = 0; i < n; i++)
		growth += vnodes ? (int64) vnodes[i].length + keylens[i] : 0;
	if (might_overflow(pointer, growth, jt_node_count(&skel->root) + n))
		return NULL;

	/*
	 * Each key is spliced into the tree the one before made, a copy of it:
	 * keys that would take the tree past the row's budget are left to the
	 * builtin at once (the toaster would not keep that tree anyway).
	 */
	if (vnodes && n > 1 &&
		!jt_patch_may_be_taken((uint32) Min(skel->hdr.tree_size + growth +
											2 * sizeof(uint32) * (int64) n,
											PG_UINT32_MAX),
							   0, 0))
		return NULL;
	for (uint32 i = 0; i < n; i++)
	{
		char	   *before = payload;
		JtSkeleton *next = skel == &steps[0] ? &steps[1] : &steps[0];

		switch (splice_tree(skel, keys[i], keylens[i], vsrc,
							vnodes ? &vnodes[i] : NULL, create, next,
							&payload, &payload_len, &dropped))
		{
			case TREE_UNCHANGED:
				/* a key to remove that is not there is passed over */
				if (vnodes == NULL)
					continue;
				/* jsonb_set(..., false) of a missing key: the builtin's */
				return NULL;
			case TREE_SPLICED:
				break;
		}
		if (before)
			pfree(before);
		skel = next;
	}
	if (payload == NULL)
	{
		/* no key to remove was there: the result is the stored value */
		elog(DEBUG1, "jsonb_toaster: the skeleton's tree unchanged");
		return copy_of_pointer(pointer);
	}

	/*
	 * Nothing left outside the row: a plain document, which an UPDATE
	 * stores as any other (and deletes the old value's parts).
	 */
	if (skel->hdr.nparts == 0)
	{
		document = jt_flatten_changed(pointer, skel, 0, NULL, false);
		elog(DEBUG1, "jsonb_toaster: changed the skeleton's tree, no part left");
		pfree(payload);
		return document;
	}

	/*
	 * A pointer in place of the document, when the tree and the directories
	 * tell its size and the value carries no part whole (a pointer made by
	 * another change, whose parts the toaster writes when it adopts it)
	 */
	if (jt_delta_carried_len(skel, InvalidOid) == 0 &&
		jt_skeleton_flat_size(skel, &flat_size) &&
		flat_size + VARHDRSZ <= JT_JENTRY_OFFLEN_MASK)
	{
		struct varlena *result;

		result = jt_tree_patch_pointer(payload, payload_len, pointer,
									   (int32) (flat_size + VARHDRSZ),
									   dropped.stored,
									   dropped.valueids == NIL);
		if (result != NULL)
		{
#ifdef USE_ASSERT_CHECKING
			check_told_size(pointer, skel, 0, NULL, flat_size + VARHDRSZ,
							"the tree and the layout bytes give another size than flattening");
#endif
			elog(DEBUG1, "jsonb_toaster: changed the skeleton's tree, returned it%s",
				 dropped.valueids ? " without the parts of the values removed" : "");
			pfree(payload);
			return result;
		}
	}

	/*
	 * Flattens (as above); with parts dropped, the builtin's document goes
	 * to the toaster's general path, which lists what it keeps.
	 */
	if (dropped.valueids != NIL)
	{
		pfree(payload);
		return NULL;
	}
	taken = jt_patch_may_be_taken(payload_len - sizeof(JtSkeletonHeader),
								  0, 0);
	document = jt_flatten_changed(pointer, skel, 0, NULL, !taken);

	keep_patch(pointer, payload, payload_len, 0, NULL, NULL, NULL, 0,
			   document);
	elog(DEBUG1, "jsonb_toaster: changed the skeleton's tree in place");
	pfree(payload);
	return document;
}

/*
 * Set, add or remove one key of the root object of a stored value: in its
 * part, or in its tree.  NULL if the skeleton cannot stay as it is.
 */
static struct varlena *
change_key(struct varlena *pointer, StoredShape shape, JtSkeleton *skel,
		   JtRef *ref, const char *key, uint32 keylen, JtSource *vsrc,
		   const JtNode *vnode, bool create)
{
	uint32		r;
	OldPart		old;
	Splice		splice;
	RefSite		site;
	struct varlena *newpart;

	if (shape == SHAPE_TREE_ROOT)
		return apply_tree_patch(pointer, skel, 1, &key, &keylen, vsrc, vnode,
								create);
	r = jt_ref_range_for_key(ref, key, keylen);
	fetch_part(skel, ref, r, ref->layouts == NULL, &old);
	newpart = splice_part(old.content, key, keylen, vsrc, vnode, create,
						  &splice);
	site = root_site(skel);
	return apply_patch(pointer, skel, ref, &site, r, &old, newpart,
					   newpart == old.content ? NULL : &splice);
}

/*
 * The builtin of change_path() (#- if deleting) on doc along path, with
 * the call's other arguments: jsonb_set()'s or jsonb_insert()'s value and
 * flag.
 */
static struct varlena *
builtin_on(FunctionCallInfo fcinfo, PGFunction builtin, bool deleting,
		   struct varlena *doc, Datum path)
{
	if (deleting)
		return (struct varlena *) DatumGetPointer(
			DirectFunctionCall2(builtin, PointerGetDatum(doc), path));
	return (struct varlena *) DatumGetPointer(
		DirectFunctionCall4(builtin, PointerGetDatum(doc), path,
							PG_GETARG_DATUM(2), PG_GETARG_DATUM(3)));
}

/* Count the parts of a reference into *(uint32 *) arg (a JtRefVisitor). */
static void
count_ref_parts(void *arg, const JtRef *ref, List *path)
{
	*(uint32 *) arg += ref->nranges;
}

/*
 * An array index as jsonb_set() and #- read it, in its canonical form
 * only (an optional minus sign, then digits without leading zeros), so
 * that what is turned down goes to the builtin for its own reading.
 */
static bool
canonical_index(text *step, int32 *index)
{
	const char *c = VARDATA_ANY(step);
	int			len = VARSIZE_ANY_EXHDR(step);
	int			i = (len > 0 && c[0] == '-') ? 1 : 0;
	int64		value = 0;

	if (len - i < 1 || len - i > 10 || (c[i] == '0' && len - i > 1))
		return false;
	for (int k = i; k < len; k++)
	{
		if (c[k] < '0' || c[k] > '9')
			return false;
		value = value * 10 + (c[k] - '0');
	}
	value = i ? -value : value;
	if (value < PG_INT32_MIN || value > PG_INT32_MAX)
		return false;
	*index = (int32) value;
	return true;
}

/*
 * The part of ref (a container kept in parts) that a path's step into it
 * names, and the step as it reads in that part alone (*local, for an
 * array): false for an index the builtin must read itself.  An index past
 * the end names the last part, past its own end, and one before the start
 * the first, before its own: the builtins append or prepend there (or
 * change nothing) as they would on the whole array.
 */
static bool
part_for_step(const JtRef *ref, text *step, uint32 *r, int32 *local)
{
	uint32		count = ref->header & JT_CONTAINER_COUNT_MASK;
	int32		index;
	uint32		start = 0;

	if (ref->header & JT_CONTAINER_OBJECT)
	{
		*r = jt_ref_range_for_key(ref, VARDATA_ANY(step),
								  VARSIZE_ANY_EXHDR(step));
		return true;
	}
	if (!canonical_index(step, &index))
		return false;
	if (index < 0 && -(int64) index > count)
	{
		*r = 0;
		*local = -(int32) (ref->ranges[0].header & JT_CONTAINER_COUNT_MASK) - 1;
		return true;
	}
	if (index < 0)
		index = (int32) (count + index);
	if ((uint32) index >= count)
	{
		*r = ref->nranges - 1;
		*local = (int32) (ref->ranges[*r].header & JT_CONTAINER_COUNT_MASK);
		return true;
	}
	for (uint32 q = 0; q < ref->nranges; q++)
	{
		uint32		n = ref->ranges[q].header & JT_CONTAINER_COUNT_MASK;

		if ((uint32) index < start + n)
		{
			*r = q;
			*local = (int32) (index - start);
			return true;
		}
		start += n;
	}
	return false;
}

/*
 * jsonb_set() or #- along a path of two steps or more in a root object
 * kept in the tree, whose first key's value is kept in parts: the builtin
 * on the part holding the second step, wrapped as the only value of an
 * object under the first key so that the builtin sees the path (and
 * reports its errors) as on the whole document, with an array index
 * renumbered for the part.  NULL when the builtin should do it on the
 * document.
 */
static struct varlena *
change_below_ref(FunctionCallInfo fcinfo, PGFunction builtin, bool deleting,
				 struct varlena *pointer, JtSkeleton *skel, Datum *elems,
				 int npath)
{
	text	   *first = DatumGetTextPP(elems[0]);
	text	   *step = DatumGetTextPP(elems[1]);
	uint32		n = jt_node_count(&skel->root);
	uint32		i;
	JtNode		value;
	JtRef		ref;
	RefSite		site;
	uint32		r;
	int32		local = 0;
	OldPart		old;
	StringInfoData buf;
	JtWriter	w;
	Datum	   *steps;
	Datum		newpath;
	Jsonb	   *changed;
	JtSource	src;
	JtNode		root;
	struct varlena *newpart;

	if (!jt_nav_object_find(&skel->src, &skel->root, VARDATA_ANY(first),
							VARSIZE_ANY_EXHDR(first), &i))
		return NULL;
	jt_nav_entry(&skel->src, &skel->root, n + i, &value);
	if (value.kind != JT_NODE_REF)
		return NULL;
	jt_skeleton_read_ref(skel, &value, &ref);
	if ((ref.header & JT_CONTAINER_SCALAR) || ref.layouts == NULL ||
		!part_for_step(&ref, step, &r, &local))
		return NULL;

	/* the parts of the values before it are flattened first */
	site.is_root = false;
	site.offset = value.offset;
	site.parts_before = 0;
	for (uint32 k = 0; k < i; k++)
	{
		JtNode		before;

		jt_nav_entry(&skel->src, &skel->root, n + k, &before);
		jt_skeleton_walk_below(skel, &before, count_ref_parts,
							   &site.parts_before);
	}

	fetch_part(skel, &ref, r, true, &old);
	initStringInfo(&buf);
	appendStringInfoSpaces(&buf, VARHDRSZ);
	jt_writer_begin(&w, &buf, JT_CONTAINER_OBJECT | 1);
	jt_writer_entry(&w, JT_JENTRY_STRING, VARDATA_ANY(first),
					VARSIZE_ANY_EXHDR(first));
	jt_writer_entry(&w, JT_JENTRY_CONTAINER, VARDATA(old.content),
					VARSIZE(old.content) - VARHDRSZ);
	jt_writer_end(&w);
	SET_VARSIZE(buf.data, buf.len);

	steps = palloc(npath * sizeof(Datum));
	memcpy(steps, elems, npath * sizeof(Datum));
	if (!(ref.header & JT_CONTAINER_OBJECT))
		steps[1] = CStringGetTextDatum(psprintf("%d", local));
	newpath = PointerGetDatum(construct_array_builtin(steps, npath, TEXTOID));
	changed = (Jsonb *) builtin_on(fcinfo, builtin, deleting,
								   (struct varlena *) buf.data, newpath);

	/* the changed part: the wrapper's value, a container of the same kind */
	jt_memory_source(&src, VARDATA(changed), VARSIZE(changed) - VARHDRSZ,
					 false);
	jt_nav_root(&src, &root);
	if (!jt_node_is_object(&root) || jt_node_count(&root) != 1)
		return NULL;
	jt_nav_entry(&src, &root, 1, &value);
	if (value.kind != JT_NODE_CONTAINER)
		return NULL;
	newpart = palloc(VARHDRSZ + value.length);
	SET_VARSIZE(newpart, VARHDRSZ + value.length);
	memcpy(VARDATA(newpart), jt_source_read(&src, value.offset, value.length),
		   value.length);
	return apply_patch(pointer, skel, &ref, &site, r, &old, newpart, NULL);
}

/*
 * jsonb_set(jsonb, text[], jsonb, boolean), jsonb #- text[] and
 * jsonb_insert(jsonb, text[], jsonb, boolean): the path's first key names
 * the part of a split root, or the value kept in parts below a root kept
 * in the tree.
 */
static Datum
change_path(FunctionCallInfo fcinfo, PGFunction builtin, PathChange how)
{
	bool		deleting = how == PATH_DELETE;
	struct varlena *pointer = (struct varlena *) PG_GETARG_POINTER(0);
	JtSkeleton	skel;
	JtRef		ref;
	StoredShape shape;
	ArrayType  *path;
	Datum	   *elems;
	bool	   *nulls;
	int			npath;
	text	   *key;
	uint32		r;
	OldPart		old;
	RefSite		site;
	struct varlena *result;

	shape = open_stored(PG_GETARG_DATUM(0), &skel, &ref);
	if (shape == SHAPE_OTHER)
		return builtin(fcinfo);
	path = PG_GETARG_ARRAYTYPE_P(1);
	if (ARR_NDIM(path) > 1)
		return builtin(fcinfo); /* which reports it */
	deconstruct_array_builtin(path, TEXTOID, &elems, &nulls, &npath);
	if (npath == 0 || array_contains_nulls(path))
		return builtin(fcinfo);
	key = DatumGetTextPP(elems[0]);

	if (npath == 1 && deleting)
		result = change_key(pointer, shape, &skel, &ref, VARDATA_ANY(key),
							VARSIZE_ANY_EXHDR(key), NULL, NULL, false);
	else if (npath == 1 && how == PATH_SET)
	{
		Jsonb	   *value = PG_GETARG_JSONB_P(2);
		JtSource	vsrc;
		JtNode		vnode;

		jsonb_value_node(value, &vsrc, &vnode);
		result = change_key(pointer, shape, &skel, &ref, VARDATA_ANY(key),
							VARSIZE_ANY_EXHDR(key), &vsrc, &vnode,
							PG_GETARG_BOOL(3));
	}
	else if (shape == SHAPE_SPLIT_ROOT)
	{
		/* a longer path, or an insertion: the builtin, on the part */
		struct varlena *newpart;

		r = jt_ref_range_for_key(&ref, VARDATA_ANY(key),
								 VARSIZE_ANY_EXHDR(key));
		fetch_part(&skel, &ref, r, true, &old);
		newpart = builtin_on(fcinfo, builtin, deleting, old.content,
							 PG_GETARG_DATUM(1));
		site = root_site(&skel);
		result = apply_patch(pointer, &skel, &ref, &site, r, &old, newpart,
							 NULL);
	}
	else if (npath > 1)
		result = change_below_ref(fcinfo, builtin, deleting, pointer, &skel,
								  elems, npath);
	else
		result = NULL;			/* a key inserted in the tree: the builtin */
	if (result == NULL)
		return builtin(fcinfo);
	PG_RETURN_POINTER(result);
}

Datum
jt_jsonb_set(PG_FUNCTION_ARGS)
{
	return change_path(fcinfo, jsonb_set, PATH_SET);
}

Datum
jt_jsonb_delete_path(PG_FUNCTION_ARGS)
{
	return change_path(fcinfo, jsonb_delete_path, PATH_DELETE);
}

Datum
jt_jsonb_insert(PG_FUNCTION_ARGS)
{
	return change_path(fcinfo, jsonb_insert, PATH_INSERT);
}

/* jsonb - text */
Datum
jt_jsonb_delete(PG_FUNCTION_ARGS)
{
	JtSkeleton	skel;
	JtRef		ref;
	StoredShape shape;
	text	   *key;
	struct varlena *result;

	shape = open_stored(PG_GETARG_DATUM(0), &skel, &ref);
	if (shape == SHAPE_OTHER)
		return jsonb_delete(fcinfo);
	key = PG_GETARG_TEXT_PP(1);
	result = change_key((struct varlena *) PG_GETARG_POINTER(0), shape,
						&skel, &ref, VARDATA_ANY(key), VARSIZE_ANY_EXHDR(key),
						NULL, NULL, false);
	if (result == NULL)
		return jsonb_delete(fcinfo);
	PG_RETURN_POINTER(result);
}

/*
 * Pairs [first, first + n) of object (a node of src), as a jsonb object of
 * their own.
 */
static Jsonb *
object_slice(JtSource *src, const JtNode *object, uint32 first, uint32 n)
{
	uint32		count = jt_node_count(object);
	JtWriter	w;
	StringInfoData buf;

	initStringInfo(&buf);
	appendStringInfoSpaces(&buf, VARHDRSZ);
	jt_writer_begin(&w, &buf, (object->header & ~JT_CONTAINER_COUNT_MASK) | n);
	jt_copy_entries(&w, src, object, first, n);
	jt_copy_entries(&w, src, object, count + first, n);
	jt_writer_end(&w);
	SET_VARSIZE(buf.data, buf.len);
	return (Jsonb *) buf.data;
}

/*
 * Keys of a root object to set (to values, nodes of vsrc) or to remove
 * (values NULL): the right operand of ||, or the array of jsonb - text[].
 * Sorted as jsonb sorts keys, and distinct.
 */
typedef struct KeyedChange
{
	uint32		count;
	const char **keys;
	uint32	   *keylens;
	JtSource   *vsrc;
	JtNode	   *values;
	JtNode		object;			/* for ||: the right operand, in vsrc */
} KeyedChange;

/* The builtin's doc with keys [first, first + n) of kc set or removed. */
static struct varlena *
builtin_change(const KeyedChange *kc, struct varlena *doc, uint32 first,
			   uint32 n)
{
	Datum	   *names;

	if (kc->values)
		return (struct varlena *) DatumGetPointer(
			DirectFunctionCall2(jsonb_concat, PointerGetDatum(doc),
								PointerGetDatum(object_slice(kc->vsrc, &kc->object,
															 first, n))));
	names = palloc(n * sizeof(Datum));
	for (uint32 i = 0; i < n; i++)
		names[i] = PointerGetDatum(cstring_to_text_with_len(kc->keys[first + i],
															kc->keylens[first + i]));
	return (struct varlena *) DatumGetPointer(
		DirectFunctionCall2(jsonb_delete_array, PointerGetDatum(doc),
							PointerGetDatum(construct_array_builtin(names, n,
																	TEXTOID))));
}

/*
 * The keys of kc set or removed in pointer, as jsonb_set() or jsonb - text
 * on the stored value would do it: in a split root, one change for the
 * keys that fall in one range (the builtin run on that part, or the splice
 * for a lone key), each change made on the pointer the one before
 * returned; in a root kept in the tree, all keys at once.  The keys are
 * distinct, so the changes commute, and together they do what the builtin
 * does.  skel, ref and shape describe pointer.  NULL when the first change
 * cannot be made so; a later change that cannot is left to the builtin, on
 * the document the changes before it made.
 */
static struct varlena *
change_keys(struct varlena *pointer, StoredShape shape, JtSkeleton *skel,
			JtRef *ref, const KeyedChange *kc)
{
	uint32		i = 0;

	if (shape == SHAPE_TREE_ROOT)
		return apply_tree_patch(pointer, skel, kc->count, kc->keys,
								kc->keylens, kc->vsrc, kc->values, true);
	for (;;)
	{
		uint32		end = i + 1;
		uint32		r = jt_ref_range_for_key(ref, kc->keys[i], kc->keylens[i]);
		struct varlena *result;

		while (end < kc->count &&
			   jt_ref_range_for_key(ref, kc->keys[end], kc->keylens[end]) == r)
			end++;
		if (end - i == 1)
			result = change_key(pointer, shape, skel, ref, kc->keys[i],
								kc->keylens[i], kc->vsrc,
								kc->values ? &kc->values[i] : NULL, true);
		else
		{
			OldPart		old;
			RefSite		site = root_site(skel);

			fetch_part(skel, ref, r, true, &old);
			result = apply_patch(pointer, skel, ref, &site, r, &old,
								 builtin_change(kc, old.content, i, end - i),
								 NULL);
		}
		if (result == NULL && i == 0)
			return NULL;
		if (result != NULL)
		{
			if (end == kc->count)
				return result;
			pointer = result;
			i = end;
			shape = open_stored(PointerGetDatum(pointer), skel, ref);
			if (shape != SHAPE_OTHER)
				continue;
		}

		/* the builtin goes on from the last document made, with the rest */
		return builtin_change(kc, pointer, i, kc->count - i);
	}
}

/* jsonb || jsonb, when the right operand is an object */
Datum
jt_jsonb_concat(PG_FUNCTION_ARGS)
{
	JtSkeleton	skel;
	JtRef		ref;
	StoredShape shape;
	Jsonb	   *right;
	JtSource	src;
	KeyedChange kc;
	struct varlena *result;

	shape = open_stored(PG_GETARG_DATUM(0), &skel, &ref);
	if (shape == SHAPE_OTHER)
		return jsonb_concat(fcinfo);
	right = PG_GETARG_JSONB_P(1);
	if (!JB_ROOT_IS_OBJECT(right) || JB_ROOT_COUNT(right) == 0)
		return jsonb_concat(fcinfo);

	/* an object's keys are sorted and distinct already */
	jt_memory_source(&src, (const char *) &right->root,
					 VARSIZE(right) - VARHDRSZ, false);
	jt_nav_root(&src, &kc.object);
	kc.count = jt_node_count(&kc.object);
	kc.keys = palloc(kc.count * sizeof(char *));
	kc.keylens = palloc(kc.count * sizeof(uint32));
	kc.values = palloc(kc.count * sizeof(JtNode));
	kc.vsrc = &src;
	for (uint32 i = 0; i < kc.count; i++)
	{
		JtNode		key;

		jt_nav_entry(&src, &kc.object, i, &key);
		kc.keys[i] = jt_source_read(&src, key.offset, key.length);
		kc.keylens[i] = key.length;
		jt_nav_entry(&src, &kc.object, kc.count + i, &kc.values[i]);
	}
	result = change_keys((struct varlena *) PG_GETARG_POINTER(0), shape,
						 &skel, &ref, &kc);
	if (result == NULL)
		return jsonb_concat(fcinfo);
	PG_RETURN_POINTER(result);
}

/* qsort() comparator of text pointers, in the order of jsonb's keys */
static int
text_key_cmp(const void *a, const void *b)
{
	const text *x = *(const text *const *) a;
	const text *y = *(const text *const *) b;

	return jt_key_cmp(VARDATA_ANY(x), VARSIZE_ANY_EXHDR(x),
					  VARDATA_ANY(y), VARSIZE_ANY_EXHDR(y));
}

/*
 * The keys a text[] names, NULLs left out (as the builtin does), into
 * kc: sorted as jsonb sorts keys, each once.  False if it names none.
 */
static bool
keys_to_remove(ArrayType *names, KeyedChange *kc)
{
	Datum	   *elems;
	bool	   *nulls;
	int			nelems;
	text	  **sorted;
	uint32		n = 0;

	deconstruct_array_builtin(names, TEXTOID, &elems, &nulls, &nelems);
	sorted = palloc(Max(nelems, 1) * sizeof(text *));
	for (int i = 0; i < nelems; i++)
		if (!nulls[i])
			sorted[n++] = DatumGetTextPP(elems[i]);
	qsort(sorted, n, sizeof(text *), text_key_cmp);
	kc->keys = palloc(Max(n, 1) * sizeof(char *));
	kc->keylens = palloc(Max(n, 1) * sizeof(uint32));
	kc->count = 0;
	for (uint32 i = 0; i < n; i++)
	{
		if (i > 0 && text_key_cmp(&sorted[i - 1], &sorted[i]) == 0)
			continue;
		kc->keys[kc->count] = VARDATA_ANY(sorted[i]);
		kc->keylens[kc->count] = VARSIZE_ANY_EXHDR(sorted[i]);
		kc->count++;
	}
	kc->vsrc = NULL;
	kc->values = NULL;
	return kc->count > 0;
}

/* jsonb - text[] */
Datum
jt_jsonb_delete_array(PG_FUNCTION_ARGS)
{
	JtSkeleton	skel;
	JtRef		ref;
	StoredShape shape;
	ArrayType  *names;
	KeyedChange kc;
	struct varlena *result;

	shape = open_stored(PG_GETARG_DATUM(0), &skel, &ref);
	if (shape == SHAPE_OTHER)
		return jsonb_delete_array(fcinfo);
	names = PG_GETARG_ARRAYTYPE_P(1);
	if (ARR_NDIM(names) > 1 || !keys_to_remove(names, &kc))
		return jsonb_delete_array(fcinfo);	/* which reports a bad array */
	result = change_keys((struct varlena *) PG_GETARG_POINTER(0), shape,
						 &skel, &ref, &kc);
	if (result == NULL)
		return jsonb_delete_array(fcinfo);
	PG_RETURN_POINTER(result);
}

/*
 * The patch that made value, if value is the document the last patch made,
 * byte for byte, and oldvalue the pointer it was made from; NULL if not.
 * The caller must not keep it past its next call into this file.
 */
const JtPatch *
jt_patch_for(const struct varlena *value, const struct varlena *oldvalue)
{
	if (last_document == NULL || oldvalue == NULL ||
		VARATT_IS_EXTENDED(value) ||
		!VARATT_IS_EXTERNAL_CUSTOM(oldvalue) ||
		VARSIZE(value) != VARSIZE(last_document) ||
		VARSIZE_EXTERNAL(oldvalue) != VARSIZE_EXTERNAL(last_patch.old_pointer) ||
		memcmp(oldvalue, last_patch.old_pointer, VARSIZE_EXTERNAL(oldvalue)) != 0 ||
		memcmp(value, last_document, VARSIZE(value)) != 0)
		return NULL;
	return &last_patch;
}

#endif							/* JT_CUSTOM_TOAST */
