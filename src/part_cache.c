/*-------------------------------------------------------------------------
 *
 * part_cache.c
 *	  The parts of the skeleton flattened last, kept until the end of the
 *	  command (patched servers only).
 *
 * "UPDATE t SET js = jsonb_set(js, ...)" flattens the old value to run the
 * function, then offers the result to the toaster, which confirms, byte by
 * byte, which of its parts equal parts of the old value (sharing.c).
 * Without this cache the confirmation fetched and decompressed those parts
 * a second time.  Flattening a skeleton therefore keeps the raw parts it
 * read, and the confirmation looks there first.
 *
 * An entry is used only within the command that read it: a part is never
 * changed once written, and while the command runs its snapshot keeps
 * VACUUM from removing a part it could read, so no other part can have
 * taken that value id.  Entries are also matched on the part's sizes and
 * compression, and the confirmation compares the bytes whatever their
 * origin.  Values whose parts are larger than MAX_CACHED_BYTES are not
 * kept: their memory would outlive the read by the rest of the command.
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/part_cache.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#ifdef JT_CUSTOM_TOAST

#include "access/xact.h"
#include "storage/proc.h"
#include "utils/memutils.h"

#include "part_cache.h"
#include "toaster.h"

#define MAX_CACHED_BYTES	(1024 * 1024)

typedef struct CachedPart
{
	JtRefRange	range;			/* as the skeleton's directory has it */
	struct varlena *raw;
} CachedPart;

static MemoryContext cache_cxt = NULL;
static LocalTransactionId cache_lxid = InvalidLocalTransactionId;
static CommandId cache_cid = InvalidCommandId;
static Oid	cache_toastrelid = InvalidOid;
static CachedPart *cache_parts = NULL;
static uint32 cache_nparts = 0;
static uint32 cache_capacity = 0;	/* the pointer's part count */

static bool
cache_is_current(void)
{
	return cache_nparts > 0 &&
		cache_lxid == MyProc->vxid.lxid &&
		cache_cid == GetCurrentCommandId(false);
}

static void
cache_clear(void)
{
	if (cache_cxt)
		MemoryContextReset(cache_cxt);
	cache_parts = NULL;
	cache_nparts = 0;
	cache_capacity = 0;
	cache_toastrelid = InvalidOid;
}

/* Part fetcher: read the part from TOAST, and keep it. */
static struct varlena *
fetch_and_keep(void *arg, uint32 partno, const JtRefRange *range,
			   Oid toastrelid, bool *should_free)
{
	MemoryContext old;
	bool		ignored;
	CachedPart *part;

	/* the flattener checks part numbers against the header's count */
	if (cache_nparts >= cache_capacity)
		elog(ERROR, "jsonb_toaster fetched more parts than its pointer declares");
	old = MemoryContextSwitchTo(cache_cxt);
	part = &cache_parts[cache_nparts];
	part->raw = jt_fetch_stored_part(arg, partno, range, toastrelid, &ignored);
	part->range = *range;
	cache_nparts++;
	MemoryContextSwitchTo(old);
	*should_free = false;
	return part->raw;
}

/*
 * Flatten one of our pointers, keeping its parts for the rest of the
 * command when they are small enough.
 */
struct varlena *
jt_flatten_pointer(struct varlena *attr)
{
	JtSkeleton	skel;
	varatt_custom header;

	jt_parse_pointer(attr, &skel);
	VARATT_CUSTOM_GET_HEADER(header, attr);
	cache_clear();
	if (header.va_rawsize > MAX_CACHED_BYTES || skel.hdr.nparts == 0)
		return jt_skeleton_flatten(&skel, jt_fetch_stored_part, NULL);

	if (cache_cxt == NULL)
		cache_cxt = AllocSetContextCreate(TopMemoryContext,
										  "jsonb_toaster part cache",
										  ALLOCSET_DEFAULT_SIZES);
	cache_parts = MemoryContextAlloc(cache_cxt,
									 skel.hdr.nparts * sizeof(CachedPart));
	cache_capacity = skel.hdr.nparts;
	cache_lxid = MyProc->vxid.lxid;
	cache_cid = GetCurrentCommandId(false);
	cache_toastrelid = skel.hdr.toastrelid;
	return jt_skeleton_flatten(&skel, fetch_and_keep, NULL);
}

/*
 * The raw content of a part read by this command, or NULL.  The caller
 * must not free it.
 */
const struct varlena *
jt_part_cache_lookup(Oid toastrelid, const JtRefRange *range)
{
	if (!cache_is_current() || toastrelid != cache_toastrelid)
	{
		if (cache_nparts > 0)
			cache_clear();		/* stale: give the memory back */
		return NULL;
	}
	for (uint32 i = 0; i < cache_nparts; i++)
	{
		const JtRefRange *r = &cache_parts[i].range;

		if (r->valueid == range->valueid && r->extinfo == range->extinfo &&
			r->rawsize == range->rawsize)
		{
			elog(DEBUG1, "jsonb_toaster: part read again from this command's copy");
			return cache_parts[i].raw;
		}
	}
	return NULL;
}

#endif							/* JT_CUSTOM_TOAST */
