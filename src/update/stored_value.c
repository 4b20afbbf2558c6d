/*-------------------------------------------------------------------------
 *
 * stored_value.c
 *	  The first argument of jsonb_set() and the like, as the toaster stored
 *	  it: its shape, and the change of one key of its root object
 *	  (patched servers only).
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/update/stored_value.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "format/pointer.h"
#include "toast/pointer_open.h"
#include "update/part_change.h"
#include "update/stored_value.h"
#include "update/tree_change.h"

/*
 * Parse a value stored by the toaster, *pointer, into skel (and ref, if
 * split); *pointer becomes the pointer to change (jt_open_pointer()).
 */
StoredShape
jt_open_stored(struct varlena **pointer, JtSkeleton *skel, JtRef *ref)
{
	struct varlena *attr = *pointer;

	if (!VARATT_IS_EXTERNAL_CUSTOM(attr) ||
		custom_toaster_id(attr) != JSONB_TOASTER_ID)
		return SHAPE_OTHER;
	*pointer = jt_open_pointer(attr, skel);
	/* an inline skeleton is rebuilt whole: it is all in the row anyway */
	if (skel->hdr.inline_parts || !jt_node_is_object(&skel->root))
		return SHAPE_OTHER;
	if (skel->root.kind == JT_NODE_CONTAINER)
		return SHAPE_TREE_ROOT;
	jt_skeleton_read_ref(skel, &skel->root, ref);
	/* the root's parts are the only ones, in directory order */
	return skel->hdr.nparts == ref->nranges ? SHAPE_SPLIT_ROOT : SHAPE_OTHER;
}

/* The site of a split root's reference. */
JtRefSite
jt_root_site(const JtSkeleton *skel)
{
	JtRefSite	site = {true, skel->root.offset, 0};

	return site;
}

/*
 * Set, add or remove one key of the root object of a stored value: in its
 * part, or in its tree.  NULL if the skeleton cannot stay as it is.
 */
struct varlena *
jt_change_key(struct varlena *pointer, StoredShape shape, JtSkeleton *skel,
			  JtRef *ref, const char *key, uint32 keylen, JtSource *vsrc,
			  const JtNode *vnode, bool create)
{
	uint32		r;
	JtFetchedPart old;
	JtSplice	splice;
	JtRefSite	site;
	struct varlena *newpart;

	if (shape == SHAPE_TREE_ROOT)
		return jt_apply_tree_patch(pointer, skel, NULL, 1, &key, &keylen, vsrc,
								   vnode, create);
	r = jt_ref_range_for_key(ref, key, keylen);
	jt_fetch_part(skel, ref, r, ref->layouts == NULL, &old);
	newpart = jt_splice_part(old.content, key, keylen, vsrc, vnode, create,
							 &splice);
	site = jt_root_site(skel);
	return jt_apply_patch(pointer, skel, ref, &site, r, &old, newpart,
						  newpart == old.content ? NULL : &splice);
}
