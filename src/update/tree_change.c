/*-------------------------------------------------------------------------
 *
 * tree_change.c
 *	  jsonb_set(), #-, - and || on a stored document whose root object is
 *	  kept in the skeleton's tree, made on the tree (patched servers only).
 *
 * A root object kept in the skeleton's tree (short fields in the row, the
 * long ones in parts) is changed there: a key is set, added or removed in
 * the tree (all the keys of || or of jsonb - text[], one after the other),
 * the parts of its old value (a reference, or a container of the tree
 * holding some) are dropped, and every other part stays.  The result is a
 * pointer to the new skeleton when the tree and the references' layout
 * bytes give the document's size (not for a reference written before
 * format version 3), the document when no part is left.  (A path of two
 * steps or more whose first key names a value kept in parts changes that
 * value's part instead; one whose first key names a value of the tree sets
 * that key here to what the builtin makes of the value: path_funcs.c.)
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/update/tree_change.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "format/delta.h"
#include "toaster/part_cache.h"
#include "toaster/patch_pointer.h"
#include "toaster/tree_outside.h"
#include "update/part_change.h"
#include "update/tree_change.h"

/* What splice_tree() did. */
typedef enum TreeSplice
{
	TREE_UNCHANGED,				/* a key to remove that is not there */
	TREE_SPLICED,
	TREE_NOT_AN_OBJECT,			/* a step to the object is not one of the
								 * tree */
} TreeSplice;

/* The parts a change of the tree no longer refers to. */
typedef struct DroppedParts
{
	uint64	   *ids;			/* their stored parts (jt_part_id()) */
	uint32		nids;
	uint64		stored;			/* the TOAST bytes they take */
} DroppedParts;

static void
add_dropped(DroppedParts *dropped, uint64 id)
{
	if (dropped->ids == NULL)
		dropped->ids = palloc(sizeof(uint64) * 8);
	else if (dropped->nids % 8 == 0)
		dropped->ids = repalloc(dropped->ids,
								sizeof(uint64) * (dropped->nids + 8));
	dropped->ids[dropped->nids++] = id;
}

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
		add_dropped(dropped, jt_part_id(&ref->ranges[r]));
		dropped->stored += jt_entry_stored_share(&ref->ranges[r]);
	}
}

/*
 * The objects of skel's tree from its root down to the object at (each a
 * node of skel->src), into nodes[0 .. at->n]; false if a step is missing
 * or is not an object kept in the tree.
 */
static bool
find_object(JtSkeleton *skel, const JtTreeSteps *at, JtNode *nodes)
{
	nodes[0] = skel->root;
	for (int i = 0; at != NULL && i < at->n; i++)
	{
		if (!jt_nav_object_get(&skel->src, &nodes[i], at->keys[i],
							   at->keylens[i], &nodes[i + 1]) ||
			nodes[i + 1].kind != JT_NODE_CONTAINER ||
			!jt_node_is_object(&nodes[i + 1]))
			return false;
	}
	return true;
}

/*
 * Set key (to vnode, a node of vsrc; added if create and missing) or
 * remove it (vnode NULL) in the object at (NULL: the root object) of
 * skel's tree, the objects above it written again around it: once
 * spliced, *patched gets the new skeleton, parsed (and so checked, as any
 * stored one) from *payload, allocated here; its parts and deltas are
 * skel's, but those of the key's old value (a container of the tree, or a
 * reference), which go to *dropped.
 */
static TreeSplice
splice_tree(JtSkeleton *skel, const JtTreeSteps *at, const char *key,
			uint32 keylen, JtSource *vsrc, const JtNode *vnode, bool create,
			JtSkeleton *patched, char **payload, uint32 *payload_len,
			DroppedParts *dropped)
{
	int			depth = at ? at->n : 0;
	JtNode	   *nodes = palloc((depth + 1) * sizeof(JtNode));
	JtNode		current;
	JtSkeletonInfo hdr;
	JtSplice	splice;
	char	   *tree;
	uint32		tree_len;
	uint32		root_entry;
	StringInfoData buf;
	DroppedParts here = {NULL, 0, 0};

	if (!find_object(skel, at, nodes))
	{
		pfree(nodes);
		return TREE_NOT_AN_OBJECT;
	}
	tree = jt_splice_object(&skel->src, &nodes[depth], key, keylen, vsrc,
							vnode, create, &tree_len, &splice);
	if (tree == NULL)
	{
		pfree(nodes);
		return TREE_UNCHANGED;
	}
	if (splice.removed &&
		jt_nav_object_get(&skel->src, &nodes[depth], key, keylen, &current))
		jt_skeleton_walk_below(skel, &current, drop_ref_parts, &here);

	/* each object above, with its step's value the one just written */
	for (int i = depth - 1; i >= 0; i--)
	{
		JtSource	below;
		JtNode		object;
		JtSplice	step;
		char	   *above;

		jt_memory_source(&below, tree + sizeof(uint32),
						 tree_len - sizeof(uint32), true);
		jt_nav_root(&below, &object);
		above = jt_splice_object(&skel->src, &nodes[i], at->keys[i],
								 at->keylens[i], &below, &object, false,
								 &tree_len, &step);
		if (above == NULL)
			elog(ERROR, "a step of a path through the tree was not found again");
		pfree(tree);
		tree = above;
	}
	pfree(nodes);

	root_entry = JT_JENTRY_CONTAINER | (tree_len - sizeof(uint32));
	memcpy(tree, &root_entry, sizeof(uint32));
	if (here.nids > skel->hdr.nparts)
		jt_nav_corrupt(&skel->src, "a tree refers to more parts than its header counts");

	hdr = skel->hdr;
	hdr.tree_size = tree_len;
	hdr.nparts -= here.nids;
	initStringInfo(&buf);
	appendStringInfoSpaces(&buf, JT_PAYLOAD_TREE_OFFSET);
	jt_payload_write_info(buf.data, &hdr);
	appendBinaryStringInfo(&buf, tree, tree_len);
	/* the other parts stay, with their deltas */
	jt_delta_area_copy_except(skel, here.ids, here.nids, true, &buf);
	pfree(tree);
	for (uint32 i = 0; i < here.nids; i++)
		add_dropped(dropped, here.ids[i]);
	dropped->stored += here.stored;
	/* of the old pointer's version: it is that pointer, changed */
	jt_skeleton_parse(patched, buf.data, buf.len, skel->version);
	*payload = buf.data;
	*payload_len = buf.len;
	return TREE_SPLICED;
}

/*
 * The changed tree as a pointer whose rawsize is flat_size (with header),
 * or NULL if it cannot be one.
 */
static struct varlena *
tree_pointer(struct varlena *pointer, char *payload, uint32 payload_len,
			 uint64 flat_size, DroppedParts *dropped)
{
	struct varlena *result;

	if (flat_size > JT_JENTRY_OFFLEN_MASK)
		return NULL;
	result = jt_tree_patch_pointer(payload, payload_len, pointer,
								   (int32) flat_size, dropped->stored);
	if (result != NULL)
		elog(DEBUG1, "jsonb_toaster: changed the skeleton's tree, returned it%s",
			 dropped->nids > 0 ? " without the parts of the values removed" : "");
	return result;
}

/*
 * The document made by setting n keys (keys[i] to vnodes[i], nodes of
 * vsrc; added if create and missing), or removing them (vnodes NULL), in
 * the root object kept in a skeleton's tree, or in the object of the tree
 * at (jt_skeleton_flat_size() counts containers of the tree at any depth):
 * the parts stay as they are, but those of the keys' old values
 * (containers of the tree, references).  A copy of pointer when no key to
 * remove is there.  NULL when the builtin should do it: a step of at is
 * not an object of the tree, the tree would outgrow the row, or parts are
 * dropped and the size of the document is not known without reading them
 * (the toaster's general path then finds the parts kept).
 */
struct varlena *
jt_apply_tree_patch(struct varlena *pointer, JtSkeleton *skel,
					const JtTreeSteps *at, uint32 n, const char *const *keys,
					const uint32 *keylens, JtSource *vsrc,
					const JtNode *vnodes, bool create)
{
	JtSkeleton	steps[2];		/* each key's, the one before's */
	char	   *payload = NULL;
	uint32		payload_len = 0;
	int64		growth = 0;
	uint64		flat_size;
	bool		taken;
	bool		try_pointer;
	bool		known = false;
	struct varlena *document = NULL;
	struct varlena *result;
	DroppedParts dropped = {NULL, 0, 0};

	for (uint32 i = 0; i < n; i++)
		growth += vnodes ? (int64) vnodes[i].length + keylens[i] : 0;
	if (jt_might_overflow(pointer, growth, jt_node_count(&skel->root) + n))
		return NULL;

	/*
	 * Each key is spliced into the tree the one before made, a copy of it:
	 * keys that would take the tree past the row's budget are left to the
	 * builtin at once (the toaster would not keep that tree anyway).
	 */
	if (vnodes && n > 1 &&
		!jt_patch_may_be_taken((uint32) Min(jt_tree_budget_bytes(skel->tree,
																 skel->hdr.tree_size) +
											growth +
											2 * sizeof(uint32) * (int64) n,
											PG_UINT32_MAX),
							   0, 0))
		return NULL;
	for (uint32 i = 0; i < n; i++)
	{
		char	   *before = payload;
		JtSkeleton *next = skel == &steps[0] ? &steps[1] : &steps[0];

		switch (splice_tree(skel, at, keys[i], keylens[i], vsrc,
							vnodes ? &vnodes[i] : NULL, create, next,
							&payload, &payload_len, &dropped))
		{
			case TREE_NOT_AN_OBJECT:
				return NULL;
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
		return jt_copy_of_pointer(pointer);
	}

	/*
	 * Nothing left outside the row: a plain document, which an UPDATE stores
	 * as any other (and deletes the old value's parts).
	 */
	if (skel->hdr.nparts == 0)
	{
		document = jt_flatten_changed(pointer, skel, 0, NULL, false);
		elog(DEBUG1, "jsonb_toaster: changed the skeleton's tree, no part left");
		pfree(payload);
		return document;
	}

	/*
	 * A pointer in place of the document, when the value carries no part
	 * whole (a pointer made by another change, whose parts the toaster writes
	 * when it adopts it).  Its size is told by the tree and the directories,
	 * or else by flattening, below.
	 */
	try_pointer = jt_delta_carried_len(skel, JT_NO_PART) == 0;
	if (try_pointer)
	{
		known = jt_skeleton_flat_size(skel, &flat_size);
		if (known &&
			(result = tree_pointer(pointer, payload, payload_len,
								   flat_size + VARHDRSZ, &dropped)) != NULL)
		{
#ifdef USE_ASSERT_CHECKING
			jt_check_told_size(pointer, skel, 0, NULL, flat_size + VARHDRSZ,
							   "the tree and the layout bytes give another size than flattening");
#endif
			pfree(payload);
			return result;
		}
	}

	/*
	 * With parts dropped, the builtin's document goes to the toaster's
	 * general path, which lists what it keeps; only a size unknown yet makes
	 * flattening here worth it.
	 */
	if (dropped.nids > 0 && !(try_pointer && !known))
	{
		pfree(payload);
		return NULL;
	}

	/*
	 * The stored parts read are kept for the general path (part_cache.c) when
	 * the change is too large for a pointer.
	 */
	taken = jt_patch_may_be_taken(jt_payload_budget_bytes(payload, payload_len) -
								  JT_PAYLOAD_TREE_OFFSET, 0, 0);
	document = jt_flatten_changed(pointer, skel, 0, NULL, !taken);
	if (try_pointer && !known)
	{
		result = tree_pointer(pointer, payload, payload_len,
							  VARSIZE(document), &dropped);
		if (result != NULL || dropped.nids > 0)
		{
			pfree(document);
			pfree(payload);
			return result;
		}
	}
	elog(DEBUG1, "jsonb_toaster: changed the skeleton's tree, returned the document");
	pfree(payload);
	return document;
}
