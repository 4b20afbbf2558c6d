/*-------------------------------------------------------------------------
 *
 * skeleton_read.c
 *	  Follow a path through a value stored by the jsonb toaster, reading
 *	  only the parts on the path.
 *
 * The accessors navigate a skeleton's tree like any document: short
 * values are in the tree, in memory, and found without touching TOAST.
 * A reference on the path is resolved here: its directory (in the tree)
 * says which part holds the key or element sought, and that part alone is
 * opened as a byte source of its own: an ordinary external jsonb, read
 * through the TOAST iterator and the streaming decoders only as far as the
 * navigator asks.  The accessor then goes on in the part.
 *
 * A value that is or contains references is materialised by flattening
 * it, except that a container kept whole in one part can be returned as
 * the standard TOAST pointer to that part: nothing is fetched until
 * somebody reads it.
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/read/skeleton_read.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "format/delta.h"
#include "format/flatten.h"
#include "read/datum_source.h"
#include "read/skeleton_read.h"
#include "support/compat.h"
#include "toast/part_fetch.h"

/* Open a part of a skeleton as the current source; describe its root. */
static JtDatumSource *
open_part(JtDatumSource *skelsrc, const JtPartEntry *range, JtNode *root)
{
	JtDatumSource *part;
	struct varlena *ptr;

	Assert(skelsrc->form == JT_FORM_SKELETON);
	if (skelsrc->part)
	{
		jt_datum_source_close(skelsrc->part);
		pfree(skelsrc->part);
		skelsrc->part = NULL;
	}
	part = palloc(sizeof(JtDatumSource));
	if (skelsrc->skel.hdr.inline_parts ||
		jt_delta_for(&skelsrc->skel, range) != NULL)
	{
		/*
		 * In the pointer, or kept as a delta: its content, whole (a range is
		 * small)
		 */
		ptr = jt_read_part_content(&skelsrc->skel, range, NULL);
		jt_datum_source_open(part, PointerGetDatum(ptr), skelsrc->scratch);
	}
	else
		jt_datum_source_open_part(part, range, skelsrc->skel.hdr.toastrelid,
								  skelsrc->scratch);
	skelsrc->part = part;
	jt_nav_root(&part->pub, root);
	if (root->header != range->header)
		jt_nav_corrupt(&part->pub, "a part's root differs from its reference's");
	return part;
}

/*
 * Look up a key in an object node of the current source.  If the object
 * is a reference, the part that may hold the key becomes the current
 * source.
 */
bool
jt_step_key(JtDatumSource **cur, const JtNode *object, const char *key,
			uint32 keylen, JtNode *value)
{
	JtRef		ref;
	JtNode		root;
	JtDatumSource *part;

	if (object->kind != JT_NODE_REF)
		return jt_nav_object_get(&(*cur)->pub, object, key, keylen, value);

	jt_skeleton_read_ref(&(*cur)->skel, object, &ref);
	part = open_part(*cur, &ref.ranges[jt_ref_range_for_key(&ref, key, keylen)], &root);
	*cur = part;
	return jt_nav_object_get(&part->pub, &root, key, keylen, value);
}

/* Element index of an array node; like jt_step_key for references. */
bool
jt_step_index(JtDatumSource **cur, const JtNode *array, uint32 index,
			  JtNode *element)
{
	JtRef		ref;
	JtNode		root;
	uint32		first = 0;

	if (array->kind != JT_NODE_REF)
		return jt_nav_array_get(&(*cur)->pub, array, index, element);

	jt_skeleton_read_ref(&(*cur)->skel, array, &ref);
	for (uint32 r = 0; r < ref.nranges; r++)
	{
		uint32		n = ref.ranges[r].header & JT_CONTAINER_COUNT_MASK;

		if (index < first + n)
		{
			*cur = open_part(*cur, &ref.ranges[r], &root);
			return jt_nav_array_get(&(*cur)->pub, &root, index - first, element);
		}
		first += n;
	}
	return false;
}

/*
 * A long scalar found in a skeleton is a reference: make its part the
 * current source and the scalar in it the node.
 */
void
jt_resolve_scalar(JtDatumSource **cur, JtNode *node)
{
	JtRef		ref;
	JtNode		root;

	if (node->kind != JT_NODE_REF || !(node->header & JT_CONTAINER_SCALAR))
		return;
	jt_skeleton_read_ref(&(*cur)->skel, node, &ref);
	*cur = open_part(*cur, &ref.ranges[0], &root);
	jt_nav_array_get(&(*cur)->pub, &root, 0, node);
	if (node->kind == JT_NODE_CONTAINER)
		jt_nav_corrupt(&(*cur)->pub, "a long scalar's part holds a container");
}

/* Is node a container of a skeleton's tree, or a reference to one? */
bool
jt_node_needs_flatten(JtDatumSource *cur, const JtNode *node)
{
	return cur->form == JT_FORM_SKELETON &&
		(node->kind == JT_NODE_REF || node->kind == JT_NODE_CONTAINER);
}

/*
 * The jsonb value of a container node of a skeleton's tree, flat, as the
 * builtins return a container (never a pointer to the part holding it, whose
 * pg_column_size() and compression would differ from theirs).
 */
Datum
jt_node_flatten(JtDatumSource *cur, const JtNode *node)
{
	Assert(jt_node_needs_flatten(cur, node));
	return PointerGetDatum(jt_skeleton_flatten_node(&cur->skel, node,
													&jt_stored_parts_compressed));
}

/*
 * Does an array node hold this string (jsonb's ? on arrays)?  In a
 * skeleton a long string element is a reference, so the array is
 * flattened first.
 */
bool
jt_step_has_string(JtDatumSource *cur, const JtNode *array, const char *str,
				   uint32 len)
{
	struct varlena *flat;
	JtSource	mem;
	JtNode		root;
	bool		found;

	if (!jt_node_needs_flatten(cur, array))
		return jt_nav_array_has_string(&cur->pub, array, str, len);

	flat = (struct varlena *) DatumGetPointer(jt_node_flatten(cur, array));
	jt_memory_source(&mem, VARDATA(flat), VARSIZE(flat) - VARHDRSZ, false);
	jt_nav_root(&mem, &root);
	found = jt_nav_array_has_string(&mem, &root, str, len);
	pfree(flat);
	return found;
}
