/*-------------------------------------------------------------------------
 *
 * sharing.c
 *	  Parts shared between the versions of a row (patched servers only).
 *
 * On UPDATE, core offers the toaster the new value together with the old
 * stored one.  Every part of the new skeleton whose content equals a part
 * of the old one keeps the old part's TOAST value: found through the
 * content hashes of the old directory, then confirmed by comparing the
 * bytes, it is neither written again nor WAL-logged.  When core then asks
 * the toaster to delete the old value, it shows the new one, and the parts
 * the new value took over are left alone.
 *
 * Ownership stays simple: a part belongs to the newest row version that
 * refers to it.  An UPDATE hands the shared parts over and deletes the
 * rest; if it aborts, its deletions are undone with it, and the old
 * version owns everything again.  Within one new value an old part is
 * taken at most once, so no value ever refers to a part twice.
 *
 * A new part found nowhere among the old ones is most often an old part
 * edited: the one, in document order, after the old part the previous new
 * part took over.  If the new part is a small edit of it, that old part is
 * taken as its base, and only the edit is stored, in the pointer (delta.h).
 *
 * Parts written together share one TOAST value, which is deleted only when
 * no row version names any of them: a version that names some of a
 * value's parts keeps the others' bytes, dead.  A version keeps no more
 * dead bytes than live ones: when it would, an UPDATE gives up the values
 * with the smallest share of their bytes named, one after another, until
 * it would not, and writes the parts they still hold anew instead of
 * taking them over; jt_adopt() turns down a pointer that would keep too
 * many (jt_parts_keep_too_many_dead()), so that the general path does.
 *
 * In tables that are logically logged, logical decoding rebuilds a value
 * only from the chunks the decoded change wrote: the toaster logs the
 * chunks of the values a new version shares there too (logical_log.c).
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/toaster/sharing.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/detoast.h"
#include "utils/memutils.h"
#include "varatt.h"

#include "format/delta.h"
#include "format/pointer.h"
#include "toast/part_fetch.h"
#include "toast/pointer_open.h"
#include "toaster/part_cache.h"
#include "toaster/sharing.h"

/* The parts of the old value, sorted by content hash. */
struct JtOldParts
{
	Oid			toastrelid;
	uint32		version;		/* the old value's format version */
	JtPartEntry *ranges;
	bool	   *taken;
	struct varlena **read;		/* parts read ahead by jt_old_parts_prefetch */
	uint32		nranges;
	uint64		cache_token;	/* the part cache holds these parts */
	uint32	   *at_position;	/* index in ranges of each part in document
								 * order */
	uint32	   *position;		/* and the other way */
	uint32		next;			/* position after the last part taken */
	bool	   *named;			/* a new part has its hash and size */
	uint64	   *value_named;	/* bytes of its value new parts have the
								 * hash of (set by mark_sparse()) */
	bool	   *sparse;			/* not to take: its value is given up (see
								 * the top), or it is packed and the new
								 * value names no packed part */
};

/* One TOAST value a version would keep: its bytes, and those it names. */
typedef struct KeptValue
{
	uint64		size;
	uint64		named;
	uint32		first;			/* its parts: [first, end) of the caller's */
	uint32		end;			/* order */
	bool		given_up;
} KeptValue;

static int
kept_value_share_cmp(const void *a, const void *b)
{
	const KeptValue *x = (const KeptValue *) a;
	const KeptValue *y = (const KeptValue *) b;

	/* x->named / x->size < y->named / y->size, without division */
	uint64		l = x->named * y->size;
	uint64		r = y->named * x->size;

	return (l > r) - (l < r);
}

/*
 * Give up values (sorted by share named, smallest first) until the dead
 * bytes of those kept are no more than live bytes; returns how many are
 * given up.
 */
static uint32
give_up_values(KeptValue *values, uint32 nvalues, uint64 live)
{
	uint64		dead = 0;
	uint32		given_up = 0;

	/* a value of which nothing is named is not kept: its bytes are not dead */
	for (uint32 v = 0; v < nvalues; v++)
		if (values[v].named > 0)
			dead += values[v].size - Min(values[v].named, values[v].size);
	qsort(values, nvalues, sizeof(KeptValue), kept_value_share_cmp);
	for (uint32 v = 0; v < nvalues && dead > live; v++)
	{
		if (values[v].named == 0)
			continue;
		dead -= values[v].size - Min(values[v].named, values[v].size);
		values[v].given_up = true;
		given_up++;
	}
	return given_up;
}

/*
 * Would a pointer whose stored parts are ranges[0 .. n-1], and which has
 * other_live bytes of parts yet to be written, keep more dead bytes than
 * live ones in the TOAST values its parts lie in?
 */
bool
jt_parts_keep_too_many_dead(const JtPartEntry *ranges, uint32 n,
							uint64 other_live)
{
	JtPartEntry *sorted = palloc(Max(n, 1) * sizeof(JtPartEntry));
	uint64		live = other_live;
	uint64		size = 0;
	uint32		i = 0;

	memcpy(sorted, ranges, n * sizeof(JtPartEntry));
	qsort(sorted, n, sizeof(JtPartEntry), jt_entry_value_cmp);
	while (i < n)
	{
		uint32		j = i;

		for (; j < n && sorted[j].valueid == sorted[i].valueid; j++)
			live += jt_entry_stored_share(&sorted[j]);
		size += sorted[i].value_size;
		i = j;
	}
	pfree(sorted);
	/* size - (live - other_live) dead bytes, against live ones */
	return size + other_live > 2 * live;
}

static int
range_hash_cmp(const void *a, const void *b)
{
	const JtPartEntry *ra = (const JtPartEntry *) a;
	const JtPartEntry *rb = (const JtPartEntry *) b;

	if (ra->hash != rb->hash)
		return ra->hash < rb->hash ? -1 : 1;
	if (ra->rawsize != rb->rawsize)
		return ra->rawsize < rb->rawsize ? -1 : 1;
	return 0;
}

static int
position_hash_cmp(const void *a, const void *b, void *arg)
{
	const JtPartEntry *ranges = (const JtPartEntry *) arg;

	return range_hash_cmp(&ranges[*(const uint32 *) a],
						  &ranges[*(const uint32 *) b]);
}

static int
index_value_cmp(const void *a, const void *b, void *arg)
{
	const JtPartEntry *ranges = (const JtPartEntry *) arg;

	return jt_entry_value_cmp(&ranges[*(const uint32 *) a],
							  &ranges[*(const uint32 *) b]);
}

/*
 * Sort the old parts, listed in document order, by content hash, and
 * remember where each was.
 */
static void
sort_keeping_positions(JtOldParts *old)
{
	JtPartEntry *in_order = old->ranges;
	uint32	   *order = palloc(old->nranges * sizeof(uint32));

	for (uint32 p = 0; p < old->nranges; p++)
		order[p] = p;
	qsort_arg(order, old->nranges, sizeof(uint32), position_hash_cmp,
			  in_order);
	old->ranges = palloc(old->nranges * sizeof(JtPartEntry));
	old->at_position = palloc(old->nranges * sizeof(uint32));
	old->position = palloc(old->nranges * sizeof(uint32));
	for (uint32 i = 0; i < old->nranges; i++)
	{
		old->ranges[i] = in_order[order[i]];
		old->position[i] = order[i];
		old->at_position[order[i]] = i;
	}
	pfree(order);
	pfree(in_order);
}

/*
 * The TOAST value a part lies in, as an on-disk pointer: the part's own
 * when it is the whole value (so that a value written before parts were
 * packed reads as it always has), else the value's bytes, uncompressed.
 */
void
jt_value_pointer(const JtPartEntry *range, Oid toastrelid, varatt_external *ext)
{
	if (jt_entry_is_whole_value(range))
	{
		ext->va_rawsize = range->rawsize;
		ext->va_extinfo = range->extinfo;
	}
	else
	{
		ext->va_rawsize = (int32) range->value_size + VARHDRSZ;
		ext->va_extinfo = range->value_size;
	}
	ext->va_valueid = range->valueid;
	ext->va_toastrelid = toastrelid;
}

/*
 * The parts a new value of rel, of format version new_version, may share
 * with oldvalue, the value stored in the row being updated (those that
 * version can name); NULL when it may share none.
 */
JtOldParts *
jt_old_parts_open(Relation rel, struct varlena *oldvalue, uint32 new_version)
{
	JtSkeleton	skel;
	JtOldParts *old;

	if (oldvalue == NULL || !VARATT_IS_EXTERNAL_CUSTOM(oldvalue) ||
		custom_toaster_id(oldvalue) != JSONB_TOASTER_ID)
		return NULL;

	jt_open_pointer(oldvalue, &skel);
	/* an inline skeleton's parts are in the row: there is nothing to keep */
	if (skel.hdr.toastrelid != rel->rd_rel->reltoastrelid ||
		skel.hdr.inline_parts)
		return NULL;

	old = palloc0(sizeof(JtOldParts));
	old->toastrelid = skel.hdr.toastrelid;
	old->version = skel.version;
	old->nranges = jt_skeleton_list_parts(&skel, &old->ranges);
	if (old->nranges == 0)
		return NULL;
	old->taken = palloc0(old->nranges * sizeof(bool));
	old->named = palloc0(old->nranges * sizeof(bool));
	old->sparse = palloc0(old->nranges * sizeof(bool));
	old->value_named = palloc0(old->nranges * sizeof(uint64));
	old->read = palloc0(old->nranges * sizeof(struct varlena *));
	old->cache_token = jt_part_cache_holds(oldvalue);
	sort_keeping_positions(old);
	/*
	 * A value of a version that names no packed part takes none, nor one of
	 * a version without compression units a part of a unit.
	 */
	for (uint32 i = 0; i < old->nranges; i++)
		old->sparse[i] =
			old->ranges[i].header == 0 ||	/* the part holding a tree */
			(!jt_version_packs(new_version) &&
			 !jt_entry_is_whole_value(&old->ranges[i])) ||
			(!jt_version_has_units(new_version) &&
			 jt_entry_in_unit(&old->ranges[i]));
	return old;
}

/*
 * What to look a new part (raw, whose directory entry's hash is *hash) up
 * by: its content hash as the old value's directory takes it, when the old
 * value is of a format version that hashes otherwise.
 */
void
jt_old_parts_rehash(const JtOldParts *old, const struct varlena *raw,
					uint32 *hash)
{
	if (!jt_hashes_as_latest(old->version))
		*hash = jt_part_hash(old->version, VARDATA(raw),
							 VARSIZE(raw) - VARHDRSZ);
}

/*
 * The old parts with the hash and raw size of a new part's directory entry
 * range: [*first, *end) in old->ranges.  False if there are none.
 */
static bool
candidates(JtOldParts *old, const JtPartEntry *range, uint32 *first,
		   uint32 *end)
{
	JtPartEntry *found;
	uint32		i;

	found = bsearch(range, old->ranges, old->nranges, sizeof(JtPartEntry),
					range_hash_cmp);
	if (found == NULL)
		return false;
	i = found - old->ranges;
	*first = i;
	while (*first > 0 && range_hash_cmp(&old->ranges[*first - 1], range) == 0)
		(*first)--;
	*end = i + 1;
	while (*end < old->nranges && range_hash_cmp(&old->ranges[*end], range) == 0)
		(*end)++;
	return true;
}

/*
 * Mark the old parts whose TOAST value the new value gives up (see the
 * top).  What the new value would name of each old value is guessed from
 * the old parts a new part has the hash of (those it will likely take
 * over); its live bytes are those, and new_bytes of parts to be written.
 */
static void
mark_sparse(JtOldParts *old, uint64 new_bytes)
{
	uint32	   *order = palloc(old->nranges * sizeof(uint32));
	KeptValue  *values = palloc(old->nranges * sizeof(KeptValue));
	uint32		nvalues = 0;
	uint64		live = new_bytes;
	uint32		i = 0;

	for (uint32 k = 0; k < old->nranges; k++)
		order[k] = k;
	qsort_arg(order, old->nranges, sizeof(uint32), index_value_cmp,
			  old->ranges);
	while (i < old->nranges)
	{
		const JtPartEntry *first = &old->ranges[order[i]];
		KeptValue  *v = &values[nvalues++];
		uint32		j;

		v->size = first->value_size;
		v->named = 0;
		v->first = i;
		v->given_up = false;
		for (j = i; j < old->nranges &&
			 old->ranges[order[j]].valueid == first->valueid; j++)
			if (old->named[order[j]])
				v->named += jt_entry_stored_share(&old->ranges[order[j]]);
		v->end = j;
		live += v->named;
		for (uint32 k = i; k < j; k++)
			old->value_named[order[k]] = v->named;
		i = j;
	}
	if (give_up_values(values, nvalues, live) > 0)
		for (uint32 v = 0; v < nvalues; v++)
			if (values[v].given_up)
				for (uint32 k = values[v].first; k < values[v].end; k++)
					old->sparse[order[k]] = true;
	pfree(values);
	pfree(order);
}

/*
 * Note the old parts that the new parts' directory entries
 * (ranges[0..n-1]) may share, which jt_old_parts_take() will compare
 * bytes with, and read them ahead, in one scan of the TOAST relation; not
 * when the part cache holds the old value's parts (a flatten of it read
 * them all).  The old parts no new part names are read in the same scan
 * when there are no more of them than new parts without a candidate: they
 * are the bases jt_old_parts_take_as_delta() may try for those (a client
 * that changed one value sends one such part, and one old part is left).
 */
void
jt_old_parts_prefetch(JtOldParts *old, const JtPartEntry *ranges, uint32 n)
{
	JtPartEntry *wanted;
	uint32	   *index;
	struct varlena **raws;
	bool	   *should_free;
	uint32		nwanted = 0;
	uint32		unmatched = 0;
	uint32		unnamed = 0;
	uint64		new_raw = 0;
	uint64		old_raw = 0;
	uint64		old_stored = 0;

	wanted = palloc(old->nranges * sizeof(JtPartEntry));
	index = palloc(old->nranges * sizeof(uint32));
	for (uint32 k = 0; k < n; k++)
	{
		uint32		first;
		uint32		end;
		bool		named = false;

		if (candidates(old, &ranges[k], &first, &end))
		{
			for (uint32 i = first; i < end; i++)
			{
				if (old->ranges[i].header != ranges[k].header)
					continue;
				named = true;
				old->named[i] = true;
			}
		}
		if (!named)
		{
			unmatched++;
			new_raw += ranges[k].rawsize;
		}
	}
	/* the new parts' stored size: compressed as the old ones were */
	for (uint32 i = 0; i < old->nranges; i++)
	{
		old_raw += old->ranges[i].rawsize;
		old_stored += jt_entry_stored_share(&old->ranges[i]);
	}
	mark_sparse(old, old_raw > 0 ? new_raw * old_stored / old_raw : new_raw);
	/* the candidates that may be taken, and the parts no new part names */
	for (uint32 i = 0; i < old->nranges; i++)
	{
		if (old->read[i] != NULL || old->sparse[i])
			continue;
		if (old->named[i])
		{
			wanted[nwanted] = old->ranges[i];
			index[nwanted++] = i;
		}
		else
			unnamed++;
	}
	if (unnamed > 0 && unnamed <= unmatched)
	{
		for (uint32 i = 0; i < old->nranges; i++)
		{
			if (old->named[i] || old->read[i] != NULL || old->sparse[i])
				continue;
			wanted[nwanted] = old->ranges[i];
			index[nwanted++] = i;
		}
	}
	if (nwanted > 0 && old->cache_token == 0)
	{
		raws = palloc(nwanted * sizeof(struct varlena *));
		should_free = palloc(nwanted * sizeof(bool));
		jt_fetch_stored_parts(NULL, 0, nwanted, wanted, old->toastrelid,
							  raws, should_free);
		for (uint32 w = 0; w < nwanted; w++)
			old->read[index[w]] = raws[w];
		pfree(should_free);
		pfree(raws);
	}
	pfree(index);
	pfree(wanted);
}

/* The raw content of old part i; *should_free says if it is a copy. */
static const struct varlena *
old_part_content(JtOldParts *old, uint32 i, bool *should_free)
{
	const struct varlena *oldraw = old->read[i];

	*should_free = false;
	if (oldraw == NULL)
		oldraw = jt_part_cache_lookup(old->cache_token, &old->ranges[i]);
	if (oldraw == NULL)
	{
		oldraw = jt_read_part(&old->ranges[i], old->toastrelid);
		*should_free = true;
	}
	return oldraw;
}

static void
take(JtOldParts *old, uint32 i)
{
	old->taken[i] = true;
	old->next = old->position[i] + 1;
}

/*
 * Is there an old part, not taken yet, with exactly the content raw of a
 * new part (whose directory entry is range)?  If so, take it: *stored
 * gets its directory entry, which says where it is stored.
 */
bool
jt_old_parts_take(JtOldParts *old, const JtPartEntry *range,
				  const struct varlena *raw, JtPartEntry *stored)
{
	uint32		first;
	uint32		end;

	if (!candidates(old, range, &first, &end))
		return false;
	for (uint32 i = first; i < end; i++)
	{
		bool		should_free = false;
		const struct varlena *oldraw;
		bool		same;

		if (old->taken[i] || old->sparse[i] ||
			old->ranges[i].header != range->header)
			continue;
		/* a hash is not proof: compare the bytes */
		oldraw = old_part_content(old, i, &should_free);
		same = VARSIZE(oldraw) == VARSIZE(raw) &&
			memcmp(oldraw, raw, VARSIZE(raw)) == 0;
		if (should_free)
			pfree((struct varlena *) oldraw);
		if (same)
		{
			take(old, i);
			*stored = old->ranges[i];
			return true;
		}
	}
	return false;
}

/*
 * A new part (content raw) that no old part holds: is it a small edit of
 * the old part that follows, in document order, the last one taken?  If
 * so, take that part as its base: *base gets its directory entry, and
 * literal, first and removed the delta (jt_delta_make()).  Not an old part
 * that a new part may take over whole (jt_old_parts_prefetch() noted
 * those).
 */
bool
jt_old_parts_take_as_delta(JtOldParts *old, const struct varlena *raw,
						   uint32 budget, StringInfo literal, uint32 *first,
						   uint32 *removed, JtPartEntry *base)
{
	uint32		i;
	bool		should_free;
	const struct varlena *oldraw;
	bool		made;

	if (old->next >= old->nranges)
		return false;
	i = old->at_position[old->next];
	if (old->taken[i] || old->named[i] || old->sparse[i])
		return false;
	/* nor a base that alone would keep a value mostly dead */
	if (old->value_named[i] == 0 &&
		old->ranges[i].value_size > 2 * (uint64) jt_entry_stored_share(&old->ranges[i]))
		return false;
	oldraw = old_part_content(old, i, &should_free);
	made = jt_delta_make(oldraw, NULL, raw, NULL, 0, 0, budget, literal, first,
						 removed);
	if (made)
	{
		take(old, i);
		*base = old->ranges[i];
		/* the new value's directory hashes as the latest version does */
		if (!jt_hashes_as_latest(old->version))
			base->hash = jt_part_hash(JT_SKELETON_VERSION_LATEST,
									  VARDATA(oldraw),
									  VARSIZE(oldraw) - VARHDRSZ);
	}
	if (should_free)
		pfree((struct varlena *) oldraw);
	return made;
}

static int
oid_cmp(const void *a, const void *b)
{
	Oid			oa = *(const Oid *) a;
	Oid			ob = *(const Oid *) b;

	return oa < ob ? -1 : oa > ob ? 1 : 0;
}

/*
 * The parts of the pointers listed last.  An UPDATE that keeps parts lists
 * those of its old and its new value twice each (jt_adopt(), jt_delete()),
 * and a list depends on the pointer's bytes alone: the last two are kept,
 * for pointers of at most MAX_LISTED_POINTER bytes.
 */
#define LISTED_POINTERS		2
#define MAX_LISTED_POINTER	(64 * 1024)

typedef struct ListedPointer
{
	struct varlena *pointer;	/* NULL if the slot is empty */
	Oid			toastrelid;
	uint32		nparts;
	JtPartEntry *ranges;
} ListedPointer;

static MemoryContext listed_cxt = NULL;
static ListedPointer listed[LISTED_POINTERS];
static int	listed_next = 0;

/*
 * The parts a pointer of ours refers to (jt_skeleton_list_parts(): the
 * stored parts, in document order), copied into *ranges in the current
 * memory context, and its TOAST relation.
 */
uint32
jt_pointer_parts(struct varlena *pointer, Oid *toastrelid,
				 JtPartEntry **ranges)
{
	Size		size = VARSIZE_EXTERNAL(pointer);
	JtSkeleton	skel;
	JtPartEntry *listed_ranges;
	JtPartEntry *copied_ranges;
	struct varlena *copied_pointer;
	uint32		n;
	ListedPointer *slot;
	MemoryContext old;

	for (int i = 0; i < LISTED_POINTERS; i++)
	{
		slot = &listed[i];
		if (slot->pointer != NULL && VARSIZE_EXTERNAL(slot->pointer) == size &&
			memcmp(slot->pointer, pointer, size) == 0)
		{
			*toastrelid = slot->toastrelid;
			*ranges = palloc(Max(slot->nparts, 1) * sizeof(JtPartEntry));
			memcpy(*ranges, slot->ranges, slot->nparts * sizeof(JtPartEntry));
			return slot->nparts;
		}
	}

	jt_open_pointer(pointer, &skel);
	n = jt_skeleton_list_parts(&skel, &listed_ranges);
	*toastrelid = skel.hdr.toastrelid;
	*ranges = listed_ranges;
	if (size > MAX_LISTED_POINTER)
		return n;

	if (listed_cxt == NULL)
		listed_cxt = AllocSetContextCreate(TopMemoryContext,
										   "jsonb_toaster listed parts",
										   ALLOCSET_SMALL_SIZES);
	/* the copies first: should palloc fail, the slot is left as it was */
	old = MemoryContextSwitchTo(listed_cxt);
	copied_ranges = palloc(Max(n, 1) * sizeof(JtPartEntry));
	memcpy(copied_ranges, listed_ranges, n * sizeof(JtPartEntry));
	copied_pointer = palloc(size);
	memcpy(copied_pointer, pointer, size);
	MemoryContextSwitchTo(old);

	slot = &listed[listed_next];
	listed_next = (listed_next + 1) % LISTED_POINTERS;
	if (slot->pointer != NULL)
	{
		pfree(slot->pointer);
		pfree(slot->ranges);
	}
	slot->ranges = copied_ranges;
	slot->nparts = n;
	slot->toastrelid = *toastrelid;
	slot->pointer = copied_pointer;
	return n;
}

/*
 * The TOAST values of toastrelid that replacement, the value taking an old
 * one's place in the new row version, refers to: sorted, for
 * jt_part_is_kept().
 */
JtKeptParts *
jt_kept_parts(struct varlena *replacement, Oid toastrelid)
{
	JtPartEntry *ranges;
	JtKeptParts *kept;
	Oid			its_toastrelid;
	uint32		n;

	if (replacement == NULL || !VARATT_IS_EXTERNAL_CUSTOM(replacement) ||
		custom_toaster_id(replacement) != JSONB_TOASTER_ID)
		return NULL;
	n = jt_pointer_parts(replacement, &its_toastrelid, &ranges);
	if (its_toastrelid != toastrelid)
		return NULL;

	kept = palloc(sizeof(JtKeptParts));
	kept->nvalues = n;
	kept->valueids = palloc(Max(kept->nvalues, 1) * sizeof(Oid));
	for (uint32 i = 0; i < kept->nvalues; i++)
		kept->valueids[i] = ranges[i].valueid;
	pfree(ranges);
	qsort(kept->valueids, kept->nvalues, sizeof(Oid), oid_cmp);
	return kept;
}

bool
jt_part_is_kept(const JtKeptParts *kept, Oid valueid)
{
	return kept != NULL &&
		bsearch(&valueid, kept->valueids, kept->nvalues, sizeof(Oid),
				oid_cmp) != NULL;
}
